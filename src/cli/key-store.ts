// The key store the CLI acts on for a state directory: keys.json on a laptop, or, when that
// directory's daemon runs on a team's shared store (store-url.ts cliStoreUrl: GATEWAY_STORE_URL,
// config.json store.url, else the URL the daemon last started with), that PostgreSQL database,
// reached directly with the daemon's own connection code (one-line errors, never the password),
// never upgraded: an older schema is refused (a daemon of this version migrates it), a newer one
// too; a database with no schema yet gets this build's, as a daemon's start would make it.
// A change made there reaches every daemon by its notification.
import { hostname } from 'node:os';
import { readConfig } from '../daemon/store/config.js';
import { FileKeyRecords, type KeyRecords } from '../daemon/store/key-records.js';
import { PgKeyRecords } from '../daemon/store/pg-keys.js';
import { SharedStore } from '../daemon/store/shared-store.js';
import { cliStoreUrl, parseStoreUrl } from '../daemon/store/store-url.js';
import { CliError } from './common.js';

/** The team store of state directory `dir`, or undefined: its keys are keys.json's. */
export function teamStoreUrl(dir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return cliStoreUrl(dir, env, readConfig(dir).storeUrl);
}

/** Opens `dir`'s key store; close() it when done (a team store holds connections). */
export async function openKeyStore(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<KeyRecords> {
  const url = teamStoreUrl(dir, env);
  if (url === undefined) return new FileKeyRecords(dir);
  let shared: SharedStore;
  try {
    shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: `cli@${hostname()}`, log: () => {}, poolSize: 2, upgrade: false });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  return new PgKeyRecords(shared, { close: () => shared.close() });
}

/** Runs `fn` on `dir`'s key store and closes it after. */
export async function withKeyStore<T>(dir: string, fn: (store: KeyRecords) => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const store = await openKeyStore(dir, env);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
