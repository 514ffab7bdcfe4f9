// The shared store's address (`--store`, GATEWAY_STORE_URL, or `store.url` in config.json): a
// PostgreSQL URL. Its password is a secret: it is never printed, and every error that might quote
// the URL goes through redact() first.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFileSync } from './atomic.js';
import { FILES } from './paths.js';

export const STORE_ENV = 'GATEWAY_STORE_URL';

export interface StoreUrl {
  /** The URL as given (with its password): only for connecting. */
  readonly url: string;
  /** `host:port/database` (and the user): safe to show, log and record. */
  readonly display: string;
  readonly password: string | undefined;
}

/** A store URL checked for shape; a one-line reason (without the password) otherwise. */
export function parseStoreUrl(text: string): StoreUrl {
  const trimmed = text.trim();
  let u: URL;
  try {
    u = new URL(trimmed);
  } catch {
    // Never echo the text: a malformed URL can still hold a password.
    throw new Error('the store URL is not a URL; it takes the form postgres://user:password@host:5432/database');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new Error(`the store URL must start with postgres:// (got ${u.protocol}//…); only PostgreSQL is supported as a shared store`);
  }
  if (!u.hostname && !u.searchParams.get('host')) throw new Error('the store URL names no host; it takes the form postgres://user:password@host:5432/database');
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default database)';
  const host = u.hostname || u.searchParams.get('host')!;
  const display = `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${host}:${u.port || '5432'}/${database}`;
  return { url: trimmed, display, password };
}

/** `text` with the store's password (raw and URL-encoded) and any whole URL replaced by its display form. */
export function redact(text: string, store: StoreUrl): string {
  let out = text.split(store.url).join(`postgres://${store.display}`);
  if (store.password) {
    for (const p of new Set([store.password, encodeURIComponent(store.password)])) out = out.split(p).join('***');
  }
  return out;
}

/** Where the store URL comes from: the flag, else the environment, else config.json; undefined: the laptop's SQLite. */
export function storeUrlFrom(flag: string | undefined, env: NodeJS.ProcessEnv, config: string | undefined): string | undefined {
  for (const v of [flag, env[STORE_ENV], config]) if (v !== undefined && v.trim() !== '') return v;
  return undefined;
}

/**
 * The store a daemon in `dir` was started with, kept beside its other secrets (0600, like
 * config.json, which may hold the same URL) so that the CLI run with that state directory acts on
 * the same store however it was given; removed when the daemon starts without one.
 */
export function recordStoreUrl(dir: string, url: string | undefined): void {
  const path = join(dir, FILES.store);
  if (url === undefined) rmSync(path, { force: true });
  else writePrivateFileSync(path, `${url}\n`);
}

/** The store the CLI acts on for state directory `dir`: GATEWAY_STORE_URL, else config.json's `store.url`, else the daemon's last. */
export function cliStoreUrl(dir: string, env: NodeJS.ProcessEnv, configUrl: string | undefined): string | undefined {
  let recorded: string | undefined;
  try { recorded = readFileSync(join(dir, FILES.store), 'utf8').trim() || undefined; } catch { /* none */ }
  return storeUrlFrom(undefined, env, configUrl) ?? recorded;
}
