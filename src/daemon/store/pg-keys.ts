// Keys in team mode: the `keys` table of the shared PostgreSQL store (pg-schema.ts version 2), one
// row per record, stored by its hash like keys.json. Every change is one transaction that also
// sends NOTIFY on KEYS_CHANNEL with the key's id, so it reaches every daemon's key index (this one
// too) when, and only when, it is committed. A daemon that missed notifications (its listening
// connection dropped) re-reads everything when it reconnects, and every KEYS_RECHECK_MS anyway, in
// case a notification was lost some other way.
import type pg from 'pg';
import type { LimitsPatch } from '../limits/limits.js';
import { KeyStoreUnavailable, type KeyRecords } from './key-records.js';
import {
  adminKeyOptions, assertNameFree, findKey, mintKey, noSuchKey, sessionKeyOptions, staleSession, withLimitsPatch, withValidLimits,
  type AdminKeyOptions, type CreatedKey, type KeyRecord, type NewKeyOptions, type ProxyKeyOptions,
} from './keys.js';
import { isConnectionError, LONGEST_TIMER_MS, recheckMsFrom, type SharedStore } from './shared-store.js';

/** The NOTIFY channel of key changes; the payload is the changed key's id. */
export const KEYS_CHANNEL = 'gateway_keys';
/** How often a daemon re-reads every key, whatever it heard (the backstop for a lost notification). */
export const KEYS_RECHECK_MS = 30_000;
/** Sets the backstop in seconds (tests make it very long, to show a change came by notification). */
export const KEYS_RECHECK_ENV = 'GATEWAY_KEYS_RECHECK_SECONDS';
/** Taken by every key creation (and `gateway store migrate`), so two never both create an active key of one name. */
export const KEYS_LOCK = 0x6b65_7973; // "keys"
/** setInterval's longest delay; a longer one would fire at once. */

/** The backstop's period from the environment: KEYS_RECHECK_MS unless GATEWAY_KEYS_RECHECK_SECONDS says otherwise. */
export function keysRecheckMs(env: NodeJS.ProcessEnv): number {
  return recheckMsFrom(env, KEYS_RECHECK_ENV, KEYS_RECHECK_MS);
}

export interface KeyRow {
  id: string;
  name: string;
  hash: string;
  kind: 'proxy' | 'admin' | 'session';
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  models: string[] | null;
  limits: unknown;
}

export function recordOf(r: KeyRow): KeyRecord {
  return withValidLimits({
    id: r.id, name: r.name, hash: r.hash, createdAt: r.created_at.toISOString(),
    expiresAt: r.expires_at?.toISOString() ?? null,
    models: Array.isArray(r.models) ? r.models : null,
    revokedAt: r.revoked_at?.toISOString() ?? null,
    ...(r.kind === 'session' ? { session: true as const } : {}),
    ...(r.limits ? { limits: r.limits as KeyRecord['limits'] } : {}),
    ...(r.kind === 'admin' ? { admin: true as const } : {}),
  });
}

type Query = (text: string, values?: unknown[]) => Promise<KeyRow[]>;

/** One record's row, as every writer of the keys table inserts it: its hash, never the key. */
export const INSERT_KEY = 'INSERT INTO keys (id, name, hash, kind, created_at, expires_at, revoked_at, models, limits) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)';
export function insertKeyValues(r: KeyRecord): unknown[] {
  return [r.id, r.name, r.hash, r.admin ? 'admin' : r.session ? 'session' : 'proxy', r.createdAt, r.expiresAt, r.revokedAt,
    r.models ? JSON.stringify(r.models) : null, r.limits ? JSON.stringify(r.limits) : null];
}

/** What the key records use of the shared store: its pool for transactions, its health and its notifications. */
export type KeysDb = Pick<SharedStore, 'pool' | 'query' | 'failed' | 'describeError' | 'on' | 'onReconnect' | 'onHealth'>;

export class PgKeyRecords implements KeyRecords {
  /** `close`: what close() does (the CLI's own connection); the daemon's shared store is closed with the daemon. */
  constructor(private readonly db: KeysDb, private readonly o: { recheckMs?: number; close?: () => Promise<void> } = {}) {}

  /** A connection failure as the store being unavailable (a 503 at the admin API, one line at the CLI); other errors as they are. */
  private unavailable(e: unknown): unknown {
    if (!isConnectionError(e)) return e;
    this.db.failed(e);
    return new KeyStoreUnavailable(this.db.describeError(e));
  }

  private async read(text: string, values?: unknown[]): Promise<KeyRow[]> {
    try {
      return (await this.db.query<KeyRow & pg.QueryResultRow>(text, values)).rows;
    } catch (e) {
      throw this.unavailable(e);
    }
  }

  /** Runs `fn` in one transaction; `changed` ids are announced on KEYS_CHANNEL at its commit. */
  private async tx<T>(fn: (q: Query, changed: (id: string) => void) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try { client = await this.db.pool.connect(); } catch (e) { throw this.unavailable(e); }
    let broken = false;
    try {
      await client.query('BEGIN');
      const ids = new Set<string>();
      const out = await fn(async (text, values) => (await client.query<KeyRow & pg.QueryResultRow>(text, values)).rows, (id) => ids.add(id));
      for (const id of ids) await client.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, id]);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      if (isConnectionError(e)) broken = true;
      else await client.query('ROLLBACK').catch(() => { broken = true; });
      throw this.unavailable(e);
    } finally {
      client.release(broken);
    }
  }

  async list(): Promise<KeyRecord[]> {
    return (await this.read('SELECT * FROM keys ORDER BY seq')).map(recordOf);
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const [row] = await this.read('SELECT * FROM keys WHERE id = $1', [id]);
    return row ? recordOf(row) : undefined;
  }

  async find(idOrName: string): Promise<KeyRecord | undefined> {
    return findKey((await this.read('SELECT * FROM keys WHERE id = $1 OR name = $1 ORDER BY seq', [idOrName])).map(recordOf), idOrName);
  }

  create(opts: ProxyKeyOptions = {}, now = new Date()): Promise<CreatedKey> {
    return this.insert(opts, now);
  }

  createAdmin(opts: AdminKeyOptions = {}, now = new Date()): Promise<CreatedKey> {
    return this.insert(adminKeyOptions(opts), now);
  }

  createSession(purpose: string, leaseMs: number, now = new Date()): Promise<CreatedKey> {
    return this.insert(sessionKeyOptions(purpose, leaseMs, now), now, leaseMs);
  }

  /** `dropStaleAfterMs`: a session key's lease; session keys stale by it are deleted in the same turn. */
  private async insert(opts: NewKeyOptions, now: Date, dropStaleAfterMs?: number): Promise<CreatedKey> {
    let created = mintKey(opts, now); // the name is checked before anything is asked of the store
    return this.tx(async (q, changed) => {
      await q('SELECT pg_advisory_xact_lock($1)', [KEYS_LOCK]);
      if (dropStaleAfterMs !== undefined) {
        const stale = (await q("SELECT * FROM keys WHERE kind = 'session'")).map(recordOf).filter((k) => staleSession(k, dropStaleAfterMs, now)).map((k) => k.id);
        if (stale.length > 0) for (const { id } of await q('DELETE FROM keys WHERE id = ANY($1) RETURNING id', [stale])) changed(id);
      }
      // Ids are 32 random bits: a repeat is rare, and made again (under the lock no other creation races it).
      while ((await q('SELECT id FROM keys WHERE id = $1', [created.record.id])).length > 0) created = mintKey(opts, now);
      const r = created.record;
      assertNameFree((await q('SELECT * FROM keys WHERE name = $1', [r.name])).map(recordOf), r.name);
      await q(INSERT_KEY, insertKeyValues(r));
      changed(r.id);
      return created;
    });
  }

  /** The key `idOrName` names, its row locked until the transaction ends. */
  private async target(q: Query, idOrName: string): Promise<KeyRecord> {
    const target = findKey((await q('SELECT * FROM keys WHERE id = $1 OR name = $1 ORDER BY seq FOR UPDATE', [idOrName])).map(recordOf), idOrName);
    if (!target) throw noSuchKey(idOrName);
    return target;
  }

  setLimits(idOrName: string, patch: LimitsPatch): Promise<KeyRecord> {
    return this.tx(async (q, changed) => {
      const updated = withLimitsPatch(await this.target(q, idOrName), patch);
      const [row] = await q('UPDATE keys SET limits = $2 WHERE id = $1 RETURNING *', [updated.id, updated.limits ? JSON.stringify(updated.limits) : null]);
      changed(updated.id);
      return recordOf(row!);
    });
  }

  revoke(idOrName: string, now = new Date()): Promise<KeyRecord> {
    return this.tx(async (q, changed) => {
      const target = await this.target(q, idOrName);
      if (target.revokedAt) return target;
      const [row] = await q('UPDATE keys SET revoked_at = $2 WHERE id = $1 RETURNING *', [target.id, now.toISOString()]);
      changed(target.id);
      return recordOf(row!);
    });
  }

  renewSession(id: string, until: Date): Promise<KeyRecord | undefined> {
    return this.tx(async (q, changed) => {
      const [row] = await q("UPDATE keys SET expires_at = $2 WHERE id = $1 AND kind = 'session' AND revoked_at IS NULL RETURNING *", [id, until.toISOString()]);
      if (row) changed(id);
      return row ? recordOf(row) : undefined;
    });
  }

  removeSession(id: string): Promise<boolean> {
    return this.tx(async (q, changed) => {
      const gone = await q("DELETE FROM keys WHERE id = $1 AND kind = 'session' RETURNING id", [id]);
      if (gone.length > 0) changed(id);
      return gone.length > 0;
    });
  }

  /**
   * A notification names the key that changed; a reconnection (notifications were missed), the
   * store found reachable again (a re-read meanwhile may have failed), or the backstop's turn
   * means every key.
   */
  watch(changed: (id?: string) => void): { close(): void } {
    const offs = [
      this.db.on(KEYS_CHANNEL, (id) => changed(id || undefined)),
      this.db.onReconnect(() => changed()),
      this.db.onHealth((h) => { if (h.connected) changed(); }),
    ];
    const timer = setInterval(() => changed(), Math.min(this.o.recheckMs ?? KEYS_RECHECK_MS, LONGEST_TIMER_MS));
    timer.unref();
    return { close: () => { clearInterval(timer); for (const off of offs) off(); } };
  }

  async close(): Promise<void> {
    await this.o.close?.();
  }
}
