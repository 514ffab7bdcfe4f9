// Proxy-key authentication: finds the key where each client puts it, looks its hash up in an
// in-memory index (kept in sync with keys.json by a file watcher and /admin/reload), and checks
// revocation, expiry and the key's model allow-list. No disk I/O per request.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { withoutProviderPrefix, type KeyPlacement } from '../../providers/registry.js';
import { GatewayError, type Protocol } from '../http/errors.js';
import { isKeyParamName } from '../http/http-util.js';
import { keyRefusal } from './key-refusals.js';
import { ADMIN_KEY_PREFIX, hashKey, keyStatus, PROXY_KEY_PREFIX, withValidLimits, type KeyRecord } from '../store/keys.js';
import { FILES } from '../store/paths.js';
import { watchStateFile, type FileWatch } from '../store/watch-file.js';
import { join } from 'node:path';

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
  private watcher: FileWatch | undefined;
  private reloading: Promise<void> = Promise.resolve();
  readonly path: string;

  /** `clock`: milliseconds since the epoch, what expiry is judged by (injectable for tests). */
  constructor(readonly dir: string, private readonly clock: () => number = Date.now) { this.path = join(dir, FILES.keys); }

  /**
   * Re-reads keys.json. Reloads run one after another, so when one resolves the index reflects a
   * read made after it was called: an earlier reload (say, the watcher's) can never publish the
   * file as it was before a revocation after the revocation's own reload.
   */
  reload(): Promise<void> {
    const run = this.reloading.then(() => this.load());
    this.reloading = run.catch(() => {});
    return run;
  }

  private async load(): Promise<void> {
    let keys: KeyRecord[] = [];
    try {
      const parsed = JSON.parse(await readFile(this.path, 'utf8')) as { keys?: KeyRecord[] };
      keys = Array.isArray(parsed.keys) ? parsed.keys : [];
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        // A half-written or corrupt file: keep the previous index rather than locking everyone out.
        return;
      }
    }
    const next = new Map<string, KeyRecord>();
    for (const k of keys) if (k && typeof k.hash === 'string') next.set(k.hash, withValidLimits(k));
    this.byHash = next;
  }

  /** Watches the state directory so a `keys revoke` made while we run applies at once. */
  watch(): void {
    this.watcher = watchStateFile(this.dir, FILES.keys, () => { void this.reload(); }, 10);
  }

  close(): void {
    this.watcher?.close();
  }

  get size(): number { return this.byHash.size; }

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
