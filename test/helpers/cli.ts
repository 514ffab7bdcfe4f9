// Runs the real `gateway` binary (node bin/gateway.js, built into dist/) the way a user would,
// with GATEWAY_HOME pointing at a temp dir, and captures stdout, stderr and the exit code.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const GATEWAY_BIN = join(REPO_ROOT, 'bin', 'gateway.js');

export interface CliResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export interface CliOptions {
  /** GATEWAY_HOME for this run (required: tests never touch the real state directory). */
  home: string;
  /** Extra environment; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (stdin is empty otherwise). */
  input?: string;
  timeoutMs?: number;
}

/**
 * A directory holding a `gateway` link to bin/gateway.js, as a global install makes: with it first
 * on the PATH, the CLI's hints say `gateway …`, which then works as printed.
 */
export const GATEWAY_PATH_DIR = join(REPO_ROOT, 'test-artifacts', 'path-bin');

function ensureGatewayOnPath(): void {
  mkdirSync(GATEWAY_PATH_DIR, { recursive: true });
  try { symlinkSync(GATEWAY_BIN, join(GATEWAY_PATH_DIR, 'gateway')); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** The environment a test CLI run starts from: this process's, minus every GATEWAY_* variable, with `gateway` on the PATH. */
export function baseEnv(): NodeJS.ProcessEnv {
  ensureGatewayOnPath();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEWAY_')));
  return { ...env, PATH: `${GATEWAY_PATH_DIR}${delimiter}${env.PATH ?? ''}` };
}

export function runCli(args: string[], opts: CliOptions): Promise<CliResult> {
  if (!existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: build first (npx tsc -p .)');
  const env: NodeJS.ProcessEnv = { ...baseEnv(), GATEWAY_HOME: opts.home };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [GATEWAY_BIN, ...args], { env, cwd: opts.home, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** A fresh temp state directory; `cleanup()` removes it. */
export function makeTempHome(prefix = 'gateway-cli-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
