// Runs the real Codex CLI (`@openai/codex` from npm) headless and offline against a gateway: a
// throwaway HOME with ~/.codex/config.toml naming the gateway as a custom Responses provider
// (the block `gateway env codex` prints), the switches that keep it from calling home, and
// optionally the test MCP server (mcp-weather-server.mjs) with its tools approved.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.js';
import { runTool, type ToolRun } from './tool-run.js';

export const CODEX = join(REPO_ROOT, 'node_modules', '.bin', 'codex');
export const MCP_WEATHER = join(REPO_ROOT, 'test', 'helpers', 'mcp-weather-server.mjs');

export type CodexRun = ToolRun;

/**
 * `builtInOpenAI`: Codex's own `openai` provider pointed at the gateway (`openai_base_url`, the key
 * in CODEX_API_KEY), instead of a custom provider block.
 */
export function runCodex(opts: { url: string; key: string; model: string; prompt: string; mcp?: boolean; builtInOpenAI?: boolean; timeoutMs?: number }): Promise<CodexRun> {
  const home = mkdtempSync(join(tmpdir(), 'gateway-codex-home-'));
  const work = mkdtempSync(join(tmpdir(), 'gateway-codex-work-'));
  mkdirSync(join(home, '.codex'));
  const provider = opts.builtInOpenAI
    ? [`openai_base_url = ${JSON.stringify(`${opts.url}/v1`)}`, 'check_for_update_on_startup = false', 'web_search = "disabled"']
    : ['model_provider = "gateway"', 'check_for_update_on_startup = false', 'web_search = "disabled"', '[model_providers.gateway]', 'name = "gateway"',
      `base_url = ${JSON.stringify(`${opts.url}/v1`)}`, 'env_key = "GATEWAY_API_KEY"', 'wire_api = "responses"'];
  writeFileSync(join(home, '.codex', 'config.toml'), [
    `model = ${JSON.stringify(opts.model)}`,
    ...provider,
    '[analytics]',
    'enabled = false',
    '[features]',
    'plugins = false',
    'shell_tool = false',
    ...(opts.mcp ? ['[mcp_servers.weather]', 'command = "node"', `args = [${JSON.stringify(MCP_WEATHER)}]`, 'default_tools_approval_mode = "approve"'] : []),
    '',
  ].join('\n'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, TERM: 'dumb', GATEWAY_API_KEY: opts.key, ...(opts.builtInOpenAI ? { CODEX_API_KEY: opts.key } : {}) };
  return runTool(CODEX, ['exec', '--skip-git-repo-check', '--color', 'never', opts.prompt], { cwd: work, env, timeoutMs: opts.timeoutMs, removeAfter: [home, work] });
}
