// Proxy-key authentication: finds the key where each client puts it, looks its hash up in an
// in-memory index, and checks revocation, expiry and the key's model allow-list. No disk or
// database I/O per request. The index is loaded from the daemon's key store (store/key-records.ts)
// and reloaded when the store says a key changed: keys.json's file watcher on a laptop, the shared
// store's notifications, reconnections and backstop in team mode; and on /admin/reload.
import type { IncomingMessage } from 'node:http';
import { withoutProviderPrefix, type KeyPlacement } from '../../providers/registry.js';
import { GatewayError, type Protocol } from '../http/errors.js';
import { isKeyParamName } from '../http/http-util.js';
import { keyRefusal } from './key-refusals.js';
import { ADMIN_KEY_PREFIX, hashKey, keyStatus, PROXY_KEY_PREFIX, type KeyRecord } from '../store/keys.js';
import { FileKeyRecords, type KeyRecords } from '../store/key-records.js';

export type { KeyPlacement };

export function extractKey(req: IncomingMessage, query: URLSearchParams | null, placements: readonly KeyPlacement[]): string | undefined {
  for (const p of placements) {
    switch (p) {
      case 'bearer': {
        const h = req.headers.authorization;
        if (h && /^bearer\s+/i.test(h)) return h.replace(/^bearer\s+/i, '').trim();
        break;
      }
      case 'x-api-key': {
        const h = req.headers['x-api-key'];
        if (typeof h === 'string' && h) return h.trim();
        break;
      }
      case 'x-goog-api-key': {
        const h = req.headers['x-goog-api-key'];
        if (typeof h === 'string' && h) return h.trim();
        break;
      }
      case 'query': {
        if (query) for (const [name, v] of query) if (v && isKeyParamName(name)) return v;
        break;
      }
      default: {
        const never: never = p;
        return never;
      }
    }
  }
  return undefined;
}

export class KeyIndex {
  private byHash = new Map<string, KeyRecord>();
  private watcher: { close(): void } | undefined;
  private reloading: Promise<void> = Promise.resolve();
  /** Where the records live: keys.json in `dir` unless given (team mode: the shared store). */
  readonly store: KeyRecords;

  /** `clock`: milliseconds since the epoch, what expiry is judged by (injectable for tests). */
  constructor(readonly dir: string, private readonly clock: () => number = Date.now, store?: KeyRecords) {
    this.store = store ?? new FileKeyRecords(dir);
  }

  /**
   * Re-reads every record. Reloads run one after another, so when one resolves the index reflects
   * a read made after it was called: an earlier reload (say, the watcher's) can never publish the
   * store as it was before a revocation after the revocation's own reload. A store that cannot be
   * read (a half-written file, an unreachable database) leaves the index as it was, never empty;
   * with `strict` (the first load of a daemon on a shared store) that is an error instead.
   */
  reload(opts: { strict?: boolean } = {}): Promise<void> {
    return this.queue(async () => {
      let keys: KeyRecord[];
      try {
        keys = await this.store.list();
      } catch (e) {
        if (opts.strict) throw e;
        return;
      }
      const next = new Map<string, KeyRecord>();
      for (const k of keys) next.set(k.hash, k);
      this.byHash = next;
    });
  }

  /** Re-reads one record (a notification named it): updated, added, or dropped when it is gone. */
  reloadKey(id: string): Promise<void> {
    return this.queue(async () => {
      let rec: KeyRecord | undefined;
      try { rec = await this.store.get(id); } catch { return; }
      const next = new Map(this.byHash);
      for (const [hash, k] of next) if (k.id === id) next.delete(hash);
      if (rec) next.set(rec.hash, rec);
      this.byHash = next;
    });
  }

  private queue(load: () => Promise<void>): Promise<void> {
    const run = this.reloading.then(load);
    this.reloading = run.catch(() => {});
    return run;
  }

  /** Follows the store, so a key created, changed or revoked elsewhere applies here at once. */
  watch(): void {
    this.watcher = this.store.watch((id) => { void (id === undefined ? this.reload() : this.reloadKey(id)); });
  }

  close(): void {
    this.watcher?.close();
  }

  get size(): number { return this.byHash.size; }

  /** The records the index serves now, as last read (what a team daemon knows while its store is unreachable). */
  loaded(): KeyRecord[] { return [...this.byHash.values()]; }

  // SHA-256 of the keys clients actually present, so the hot path hashes each key once. Only keys
  // that matched a record are kept (a flood of random keys cannot grow it), at most 256 of them;
  // revocation and expiry are still checked on every request against the record itself.
  private hashes = new Map<string, string>();

  private hashOf(presented: string): string {
    const cached = this.hashes.get(presented);
    if (cached !== undefined) return cached;
    const hash = hashKey(presented);
    if (this.byHash.has(hash)) {
      if (this.hashes.size >= 256) this.hashes.clear();
      this.hashes.set(presented, hash);
    }
    return hash;
  }

  /** Looks an admin key (`sk-gwadmin-…`) up: only a record made as an admin key ever matches. */
  checkAdmin(presented: string, now = this.clock()): AdminKeyCheck {
    const rec = presented.startsWith(ADMIN_KEY_PREFIX) ? this.byHash.get(this.hashOf(presented)) : undefined;
    if (!rec?.admin) return { refused: 'unknown' };
    const status = keyStatus(rec, now);
    return status === 'active' ? { record: rec } : { refused: status, record: rec };
  }

  /** Whether the admin key with this id is still active (a dashboard session it opened lives only as long). */
  adminKeyActive(id: string, now = this.clock()): boolean {
    for (const rec of this.byHash.values()) if (rec.id === id) return rec.admin === true && keyStatus(rec, now) === 'active';
    return false;
  }

  /** Authenticates a presented key; throws the 401 the client should see, worded for its protocol. */
  authenticate(presented: string | undefined, protocol: Protocol, now = this.clock()): KeyRecord {
    if (!presented) throw keyRefusal({ reason: 'missing' }, protocol);
    if (presented.startsWith(ADMIN_KEY_PREFIX)) throw keyRefusal({ reason: 'admin_key', presented }, protocol);
    if (!presented.startsWith(PROXY_KEY_PREFIX)) throw keyRefusal({ reason: 'not_proxy', presented }, protocol);
    const hash = this.hashOf(presented);
    // The index is keyed by the hash itself, so a hit is an exact match; an attacker timing this
    // lookup learns about SHA-256 outputs, not about any key.
    const rec = this.byHash.get(hash);
    if (!rec || rec.admin) throw keyRefusal({ reason: 'unknown', presented }, protocol);
    const status = keyStatus(rec, now);
    if (status === 'revoked' || status === 'expired') throw keyRefusal({ reason: status, presented, record: rec }, protocol);
    return rec;
  }
}

/** An admin key's record when it is accepted, or why it is not. */
export type AdminKeyCheck = { record: KeyRecord } | { refused: 'unknown' | 'revoked' | 'expired'; record?: KeyRecord };

/** Checks a key's model allow-list (only keys created with --models have one). */
export function checkModelAllowed(rec: KeyRecord, model: string | null): void {
  if (!rec.models) return;
  if (model !== null && rec.models.some((m) => modelMatches(m, model))) return;
  throw new GatewayError('model_not_allowed', `proxy key "${rec.name}" may not use model ${model === null ? '(none given)' : `"${model}"`}; allowed: ${rec.models.join(', ')}`);
}

/** `claude-*` style globs, and a prefixed entry (`anthropic/x`) also matches the bare id `x`. */
function modelMatches(pattern: string, model: string): boolean {
  const bare = withoutProviderPrefix;
  const test = (p: string, m: string) => (p.endsWith('*') ? m.startsWith(p.slice(0, -1)) : p === m);
  return test(pattern, model) || test(bare(pattern), bare(model));
}
