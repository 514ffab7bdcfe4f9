// Runs the real gemini-cli (`@google/gemini-cli` from npm) headless (`gemini -p`) and offline
// against a gateway: a throwaway HOME whose ~/.gemini/settings.json holds what `gateway env gemini`
// prints (API-key auth, no usage statistics, no update checks), the gateway's root as
// GOOGLE_GEMINI_BASE_URL, the model in GEMINI_MODEL, and optionally the test MCP server
// (mcp-weather-server.mjs), trusted so headless gemini calls it without asking.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.js';
import { runTool, type ToolRun } from './tool-run.js';
import { MCP_WEATHER } from './codex.js';

export const GEMINI_CLI = join(REPO_ROOT, 'node_modules', '.bin', 'gemini');

/** The settings `gateway env gemini` prints, as gemini-cli's settings.json holds them. */
export const GEMINI_GATEWAY_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

export type GeminiCliRun = ToolRun;

/**
 * `model`: GEMINI_MODEL (none: gemini-cli's own "auto", its model router). `baseUrl`:
 * GOOGLE_GEMINI_BASE_URL (default the gateway's root, `url`). `settings`: more of settings.json.
 */
export function runGeminiCli(opts: { url: string; key: string; model?: string; prompt: string; mcp?: boolean; settings?: Record<string, unknown>; baseUrl?: string; timeoutMs?: number }): Promise<GeminiCliRun> {
  const home = mkdtempSync(join(tmpdir(), 'gateway-gemini-home-'));
  const work = mkdtempSync(join(tmpdir(), 'gateway-gemini-work-'));
  mkdirSync(join(home, '.gemini'));
  const mcp = opts.mcp ? { mcpServers: { weather: { command: process.execPath, args: [MCP_WEATHER], trust: true } } } : {};
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ ...GEMINI_GATEWAY_SETTINGS, ...mcp, ...opts.settings }, null, 2));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: home, TERM: 'dumb', NO_COLOR: '1',
    // Its error reports go to the temp directory: this run's own, removed with it.
    TMPDIR: work,
    GOOGLE_GEMINI_BASE_URL: opts.baseUrl ?? opts.url, GEMINI_API_KEY: opts.key,
    ...(opts.model ? { GEMINI_MODEL: opts.model } : {}),
  };
  // --skip-trust: headless gemini refuses an untrusted folder (a fresh temp dir is one).
  return runTool(GEMINI_CLI, ['--skip-trust', '-p', opts.prompt], { cwd: work, env, timeoutMs: opts.timeoutMs, removeAfter: [home, work] });
}
