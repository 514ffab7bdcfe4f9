// Drives a real terminal: tmux (Debian's) on a private socket runs a command in a detached session
// of a fixed size; tests type with send-keys and read the screen with capture-pane, polling with a
// deadline instead of sleeping. kill() ends the private tmux server and everything in it.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { baseEnv } from '../helpers/cli.js';

/** What a person's terminal has: the test environment without GATEWAY_* and CI markers. */
function terminalEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(baseEnv()).filter(([k]) => k !== 'CI' && k !== 'CONTINUOUS_INTEGRATION' && !k.startsWith('CI_')));
}

export const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;

const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

export class Tmux {
  readonly socket = `gw-test-${process.pid}-${randomBytes(3).toString('hex')}`;

  private run(args: string[]): string {
    // The tmux server keeps the environment it starts with: never the caller's GATEWAY_* settings,
    // and none of the CI markers either — a person's terminal has none, and Ink stops live
    // rendering when it sees one (CI runs this suite with CI=true).
    const r = spawnSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', env: terminalEnv() });
    if (r.status !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  }

  /** Starts `argv` with `env` in a new session; the pane stays after it exits and shows its status. */
  start(session: string, argv: string[], env: Record<string, string>, size = { width: 100, height: 30 }): void {
    const sets = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`).join(' ');
    const cmd = `env ${sets} ${argv.map(quote).join(' ')}; echo "[exited $?]"; sleep 600`;
    this.run(['new-session', '-d', '-s', session, '-x', String(size.width), '-y', String(size.height), cmd]);
  }

  /** Types text literally. */
  type(session: string, text: string): void { this.run(['send-keys', '-t', session, '-l', text]); }

  /** Sends key names (Enter, Up, Escape, C-c, …). */
  keys(session: string, ...keys: string[]): void { this.run(['send-keys', '-t', session, ...keys]); }

  screen(session: string): string { return this.run(['capture-pane', '-p', '-t', session]); }

  /** The screen with its scrollback. */
  history(session: string): string { return this.run(['capture-pane', '-p', '-S', '-2000', '-t', session]); }

  async waitFor(session: string, pred: (screen: string) => boolean, what: string, timeoutMs = 10_000, scrollback = false): Promise<string> {
    const end = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < end) {
      last = scrollback ? this.history(session) : this.screen(session);
      if (pred(last)) return last;
      await new Promise((r) => setTimeout(r, 40));
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; screen:\n${last}`);
  }

  /** Ends one session (its program gets SIGHUP). */
  end(session: string): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-session', '-t', session], { encoding: 'utf8' });
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { encoding: 'utf8' });
  }
}
