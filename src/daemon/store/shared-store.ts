// Team mode's one shared store: a PostgreSQL database that several daemons point at (`--store`).
// Opening it connects, checks the credentials and migrates the schema (store/pg-schema.ts) before
// the daemon serves anything, so a bad URL, a wrong password or a newer schema is a one-line error
// at start and never a half-started daemon. Changes made through one daemon reach the others by
// LISTEN/NOTIFY on one dedicated connection; a subscriber also hears `reconnected` after that
// connection was lost (notifications sent meanwhile are gone, so it re-reads everything).
import { hostname } from 'node:os';
import pg from 'pg';
import { migratePg } from './pg-schema.js';
import { redact, type StoreUrl } from './store-url.js';

/** How long connecting may take before the store counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Waits between attempts to reach the store again once it is down: 0.5 s, doubling, at most 5 s. */
const PROBE_MS = { first: 500, max: 5_000 };

export interface StoreHealth {
  connected: boolean;
  /** When the store was last found unreachable, while it still is (ms since the epoch). */
  downSince?: number;
  /** Why, one line, without the password. */
  lastError?: string;
}

export interface SharedStoreOptions {
  store: StoreUrl;
  /** What usage rows and logs call this daemon: `GATEWAY_DAEMON_ID`, else `<hostname>:<port>`. */
  daemonId: string;
  log: (line: string) => void;
  /** Connections in the pool (limit reservations are the request path's only queries). */
  poolSize?: number;
  clock?: () => number;
}

type Listener = (payload: string) => void;

export class SharedStore {
  readonly pool: pg.Pool;
  readonly daemonId: string;
  readonly display: string;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly reconnectHooks = new Set<() => void>();
  private listenClient: pg.Client | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probeDelay = PROBE_MS.first;
  private closed = false;
  private health: StoreHealth = { connected: true };
  private readonly healthHooks = new Set<(h: StoreHealth) => void>();
  private readonly clock: () => number;

  private constructor(private readonly o: SharedStoreOptions) {
    this.daemonId = o.daemonId;
    this.display = o.store.display;
    this.clock = o.clock ?? Date.now;
    this.pool = new pg.Pool({ connectionString: o.store.url, max: o.poolSize ?? 16, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: `model-gateway ${o.daemonId}` });
    // An idle connection the server dropped is the pool's to replace; unheard, it would end the process.
    this.pool.on('error', (e) => this.failed(e));
  }

  /** Connects, migrates and starts listening; throws a one-line reason (no password) when it cannot. */
  static async open(o: SharedStoreOptions): Promise<SharedStore> {
    const s = new SharedStore(o);
    try {
      await s.pool.query('SELECT 1');
      await migratePg(s.pool);
      await s.listen();
    } catch (e) {
      await s.pool.end().catch(() => {});
      throw new Error(s.describeError(e));
    }
    return s;
  }

  /** A connection error as one line for a person: where, and why, never the password. */
  describeError(e: unknown): string {
    const err = e as NodeJS.ErrnoException & { code?: string };
    const where = `the store at ${this.display}`;
    let why: string;
    switch (err.code) {
      case 'ECONNREFUSED': why = 'connection refused (is PostgreSQL running there?)'; break;
      case 'ENOTFOUND': case 'EAI_AGAIN': why = 'no such host'; break;
      case 'ETIMEDOUT': why = 'the connection timed out'; break;
      case '28P01': case '28000': why = `it refused the credentials (${err.message})`; break;
      case '3D000': why = `${err.message}; create it first (createdb)`; break;
      case '42501': why = `permission denied: the user cannot create the gateway's tables (${err.message})`; break;
      default: why = /timeout/i.test(err.message ?? '') ? 'the connection timed out' : (err.message ?? String(e));
    }
    return redact(`${where}: ${why}`, this.o.store);
  }

  /** Calls `fn` with each payload sent on `channel` by any daemon (this one included). */
  on(channel: string, fn: Listener): () => void {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`bad channel name ${channel}`);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      void this.listenClient?.query(`LISTEN ${channel}`).catch((e: unknown) => { if (isConnectionError(e)) this.failed(e); });
    }
    set.add(fn);
    return () => { set.delete(fn); };
  }

  /** Called after the listening connection came back: whatever was sent while it was gone was missed. */
  onReconnect(fn: () => void): () => void {
    this.reconnectHooks.add(fn);
    return () => { this.reconnectHooks.delete(fn); };
  }

  onHealth(fn: (h: StoreHealth) => void): () => void {
    this.healthHooks.add(fn);
    return () => { this.healthHooks.delete(fn); };
  }

  /** Tells every daemon (this one too) on `channel`; a failure only counts against the health. */
  async notify(channel: string, payload = ''): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]).catch((e: unknown) => this.failed(e));
  }

  status(): StoreHealth { return { ...this.health }; }

  /** A query or connection failed: the store counts as down from now until a query succeeds again. */
  failed(e: unknown): void {
    if (this.closed) return;
    const line = this.describeError(e);
    if (this.health.connected) {
      this.health = { connected: false, downSince: this.clock(), lastError: line };
      this.o.log(`store: degraded: ${line}`);
      for (const h of this.healthHooks) h(this.status());
    } else {
      this.health = { ...this.health, lastError: line };
    }
    this.scheduleProbe();
  }

  /** A query succeeded: the store is back. */
  succeeded(): void {
    if (this.health.connected || this.closed) return;
    const since = this.health.downSince;
    this.health = { connected: true };
    this.o.log(`store: connected again to ${this.display}${since ? ` after ${Math.round((this.clock() - since) / 1000)} s` : ''}`);
    for (const h of this.healthHooks) h(this.status());
  }

  /**
   * Runs a query on the pool; a failure to reach the store (not a query's own error) marks it down
   * until the probe reaches it again. Rethrows either way.
   */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (e) {
      if (isConnectionError(e)) this.failed(e);
      throw e;
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.store.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: `model-gateway ${this.daemonId} listener` });
    const lost = (e: Error) => { if (this.listenClient === client && !this.closed) { this.listenClient = undefined; this.failed(e); } };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the listening connection ended')));
    client.on('notification', (n) => {
      for (const fn of this.listeners.get(n.channel) ?? []) {
        try { fn(n.payload ?? ''); } catch (e) { this.o.log(`store: a ${n.channel} notification failed: ${(e as Error).message}`); }
      }
    });
    try {
      await client.connect();
      for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`);
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    this.listenClient = client;
  }

  /** While the store is down: tries to get the listening connection and a query through, backing off. */
  private scheduleProbe(): void {
    if (this.closed || this.probeTimer) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, this.probeDelay);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    try {
      const relisten = !this.listenClient;
      if (relisten) await this.listen();
      await this.pool.query('SELECT 1');
      this.probeDelay = PROBE_MS.first;
      this.succeeded();
      if (relisten) for (const fn of this.reconnectHooks) fn();
    } catch (e) {
      this.probeDelay = Math.min(this.probeDelay * 2, PROBE_MS.max);
      this.failed(e);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.probeTimer);
    const c = this.listenClient;
    this.listenClient = undefined;
    await c?.end().catch(() => {});
    await this.pool.end().catch(() => {});
  }
}

/** This daemon's name in a team: GATEWAY_DAEMON_ID, else `<hostname>:<port>` (stable across restarts). */
export function daemonIdOf(env: NodeJS.ProcessEnv, port: number): string {
  const given = env.GATEWAY_DAEMON_ID?.trim();
  if (given) {
    if (!/^[A-Za-z0-9._:-]{1,64}$/.test(given)) throw new Error('GATEWAY_DAEMON_ID must be 1-64 letters, digits, ".", "_", ":" or "-"');
    return given;
  }
  return `${hostname()}:${port}`;
}

/** An error reaching the store (refused, reset, timed out, server shutting down), as against a query's own. */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  const code = err?.code ?? '';
  return /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|57P0[123]|08\w{3})$/.test(code)
    || /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(err?.message ?? '');
}
