// How the user runs this CLI, so that every command a hint prints works as printed: `gateway` when
// the first `gateway` on the PATH is this one (a global install, npm link), `npx gateway` when npm
// launched it (npx in a clone, where `gateway` is not on the PATH), else `node <its script>`.
// Daemon messages (read by API clients, with no shell to look at) keep the plain `gateway` form.
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shQuote } from './common.js';

const OWN_BIN = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));

export interface Launch {
  env: NodeJS.ProcessEnv;
  /** The script node was given (process.argv[1]). */
  script: string | undefined;
  cwd: string;
  platform: NodeJS.Platform;
}

function realpath(p: string): string | undefined {
  try { return realpathSync(p); } catch { return undefined; }
}

const NPM_BIN_DIR = /[\\/]node_modules[\\/]\.bin[\\/]?$/;

/**
 * The file the user's shell would run for `gateway`, if any. The node_modules/.bin directories
 * npm and npx put on the PATH of what they launch are not the shell's, so they do not count.
 */
function firstOnPath(l: Launch): string | undefined {
  const names = l.platform === 'win32' ? ['gateway.cmd', 'gateway.exe', 'gateway'] : ['gateway'];
  for (const dir of (l.env.PATH ?? '').split(delimiter)) {
    if (!dir || NPM_BIN_DIR.test(dir)) continue;
    for (const name of names) {
      const p = join(dir, name);
      try {
        accessSync(p, l.platform === 'win32' ? constants.F_OK : constants.X_OK);
        return p;
      } catch { /* not here */ }
    }
  }
  return undefined;
}

function isThisGateway(found: string, l: Launch): boolean {
  if (realpath(found) === realpath(OWN_BIN)) return true;
  // npm's Windows shims are small scripts naming the package's bin, not links.
  if (l.platform !== 'win32' || !found.endsWith('.cmd')) return false;
  try { return /model-gateway[\\/]bin[\\/]gateway\.js/.test(readFileSync(found, 'utf8')); } catch { return false; }
}

/** `gateway`, `npx gateway` or `node <script>`: what to type to run this CLI again. */
export function commandName(l: Launch): string {
  const found = firstOnPath(l);
  if (found && isThisGateway(found, l)) return 'gateway';
  if (l.env.npm_command || /[\\/]node_modules[\\/]\.bin[\\/]/.test(l.script ?? '')) return 'npx gateway';
  // Relative from the package's own directory (`node bin/gateway.js` in a clone), else absolute.
  const script = l.script ?? OWN_BIN;
  const rel = relative(l.cwd, script);
  const shown = resolve(l.cwd) === dirname(dirname(resolve(script))) ? rel : script;
  return `node ${/^[\w./-]+$/.test(shown) ? shown : shQuote(shown)}`;
}

let cached: string | undefined;

/** This process's command name (found once). */
export function gatewayName(): string {
  cached ??= commandName({ env: process.env, script: process.argv[1], cwd: process.cwd(), platform: process.platform });
  return cached;
}

/** A command for a hint, e.g. gatewayCmd('keys create') → `npx gateway keys create`. */
export function gatewayCmd(args: string): string {
  return `${gatewayName()} ${args}`;
}
