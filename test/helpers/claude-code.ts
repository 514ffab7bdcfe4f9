// Runs the real Claude Code (`@anthropic-ai/claude-code` from npm) headless (`claude -p`) and
// offline against a gateway: a throwaway HOME, the gateway as ANTHROPIC_BASE_URL with a proxy key
// as its bearer token, every model slot on `model`, and the switches that keep it from calling home.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.js';
import { runTool, type ToolRun } from './tool-run.js';

export const CLAUDE = join(REPO_ROOT, 'node_modules', '.bin', 'claude');

/** `cwd`: the folder it works in (kept; a fresh one, removed after, when absent); `allowedTools`: its --allowedTools. */
export function runClaudeCode(opts: { url: string; key: string; model: string; prompt: string; cwd?: string; allowedTools?: string[]; timeoutMs?: number }): Promise<ToolRun> {
  const home = mkdtempSync(join(tmpdir(), 'gateway-claude-home-'));
  const work = opts.cwd ?? mkdtempSync(join(tmpdir(), 'gateway-claude-work-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: home, TERM: 'dumb',
    ANTHROPIC_BASE_URL: opts.url, ANTHROPIC_AUTH_TOKEN: opts.key,
    ANTHROPIC_MODEL: opts.model, ANTHROPIC_DEFAULT_HAIKU_MODEL: opts.model, ANTHROPIC_SMALL_FAST_MODEL: opts.model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1',
  };
  const args = ['-p', opts.prompt, ...(opts.allowedTools ? ['--allowedTools', ...opts.allowedTools] : [])];
  return runTool(CLAUDE, args, { cwd: work, env, timeoutMs: opts.timeoutMs, removeAfter: opts.cwd ? [home] : [home, work] });
}
