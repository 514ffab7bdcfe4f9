// Where the gateway keeps its state: GATEWAY_HOME when set (tests use a temp dir), else the
// platform's config directory. Every file that holds a secret, a hash or a token is mode 0600.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { mkdirSync, chmodSync } from 'node:fs';

export const FILES = {
  config: 'config.json',
  keys: 'keys.json',
  keyUsage: 'key-usage.json',
  insecureSecrets: 'insecure-secrets.json',
  keyPools: 'key-pools.json',
  daemon: 'daemon.json',
  adminToken: 'admin-token',
  log: 'daemon.log',
  /** Team mode: the store URL the daemon was last started with (0600), so the CLI acts on the same store. */
  store: 'store-url',
  /**
   * Team mode: what limit claims this daemon settled while the shared store was unreachable,
   * until they are written back to it (SQLite, the laptop's limit ledger's schema).
   */
  limitOutbox: 'limit-outbox.db',
  /** Team mode: the team's shared config as this state directory last took it (store/team-config.ts); no secret in it. */
  teamConfig: 'team-config.json',
  /** Team mode: config.json as it was before a daemon joining a team took the team's shared sections. */
  configBeforeTeam: 'config.before-team.json',
  /**
   * Team mode: the usage journal's segments (observe/usage/journal.ts), in a directory of their
   * own: the state directory is watched for config.json and keys.json (store/watch-file.ts), and
   * every write in it wakes that watcher (an inotify event: two reads and a callback). With one
   * client at a time the journal writes once per request, and that cost the daemon ~6 µs a request.
   */
  journal: 'usage-journal',
  /** Held while config.json or key-pools.json is read, changed and written back (store/state-lock.ts). */
  configLock: 'config.lock',
} as const;

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GATEWAY_HOME) return env.GATEWAY_HOME;
  const home = homedir();
  switch (process.platform) {
    case 'darwin': return join(home, 'Library', 'Application Support', 'model-gateway');
    case 'win32': return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'model-gateway');
    default: return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'model-gateway');
  }
}

/** Creates the state directory (0700) if needed and returns it. */
export function ensureStateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try { chmodSync(dir, 0o700); } catch { /* not ours to change (e.g. a shared temp dir) */ }
  return dir;
}
