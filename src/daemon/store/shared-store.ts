// Team mode's one shared store: a PostgreSQL database that several daemons point at (`--store`).
// Opening it connects, checks the credentials and migrates the schema (store/pg-schema.ts) before
// the daemon serves anything, so a bad URL, a wrong password or a newer schema is a one-line error
// at start and never a half-started daemon. Changes made through one daemon reach the others by
// LISTEN/NOTIFY on one dedicated connection; a subscriber also hears `reconnected` after that
// connection was lost (notifications sent meanwhile are gone, so it re-reads everything).
// Every daemon also writes a heartbeat row every HEARTBEAT_MS: the daemons seen in the last
// ALIVE_MS are the ones that share a key's limits while the store is unreachable (limits/
// team-store.ts), and the heartbeat notices a lost store even when no request asks it anything.
import { hostname } from 'node:os';
import pg from 'pg';
import { migratePg, PG_MIGRATIONS } from './pg-schema.js';
import { redact, type StoreUrl } from './store-url.js';

/** How long connecting may take before the store counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Waits between attempts to reach the store again once it is down: 0.5 s, doubling, at most 5 s. */
const PROBE_MS = { first: 500, max: 5_000 };
/** How often each daemon says it is alive, and how long after its last heartbeat it counts as alive. */
export const HEARTBEAT_MS = 10_000;
export const ALIVE_MS = 60_000;
/** Told when a daemon joins or leaves: every daemon counts again at once instead of at its next heartbeat. */
const DAEMONS_CHANNEL = 'gateway_daemons';
/** Heartbeat rows of daemons gone this long are deleted. */
const FORGET_DAEMON_MS = 86_400_000;
/** TCP keepalive on every connection, so a store that vanished without closing them is noticed. */
const KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 };
/**
 * How long the heartbeat, the probe and a read a request waits on may go unanswered: a partition
 * or a hung host leaves the connection open and silent, and keepalive never fires while a query
 * is outstanding (the kernel retransmits for a quarter of an hour). Past it the store counts as
 * unreachable and the connection is dropped.
 */
export const QUIET_MS = 5_000;
/** How long close() waits for the connections to end. */
const END_WAIT_MS = 2_000;

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
  /** False for the CLI: an older schema is refused, never upgraded; a database with none gets it (pg-schema.ts migratePg). */
  upgrade?: boolean;
}

type Listener = (payload: string) => void;

export class SharedStore {
  readonly pool: pg.Pool;
  readonly display: string;
  private id: string;
  private alive = 1;
  private beatTimer: NodeJS.Timeout | undefined;
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
    this.id = o.daemonId;
    this.display = o.store.display;
    this.clock = o.clock ?? Date.now;
    this.pool = new pg.Pool({ connectionString: o.store.url, max: o.poolSize ?? 16, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: `model-gateway ${o.daemonId}`, ...KEEPALIVE });
    // An idle connection the server dropped is the pool's to replace; unheard, it would end the process.
    this.pool.on('error', (e) => this.failed(e));
    // The pool listens on a client only while it is idle in it: a connection lost while a client
    // is handed out (a transaction's, a migration's) would be an uncaught 'error' that ends the
    // daemon. Its query under way fails by itself; this only counts the store as down.
    this.pool.on('connect', (client) => { client.on('error', (e) => this.failed(e)); });
  }

  /** Connects, migrates (see `upgrade`) and starts listening; throws a one-line reason (no password) when it cannot. */
  static async open(o: SharedStoreOptions): Promise<SharedStore> {
    const s = new SharedStore(o);
    try {
      await s.pool.query('SELECT 1');
      await migratePg(s.pool, PG_MIGRATIONS, { upgrade: o.upgrade !== false });
      await s.listen();
    } catch (e) {
      await s.pool.end().catch(() => {});
      throw new Error(s.describeError(e));
    }
    return s;
  }

  /** What usage rows and logs call this daemon. */
  get daemonId(): string { return this.id; }

  /**
   * Starts the heartbeat once the daemon serves, under `id` when given: a daemon started on port 0
   * learns its name (`<hostname>:<port>`) only then, and `<hostname>:0` would be every such daemon's.
   */
  async startHeartbeat(id?: string): Promise<void> {
    if (id !== undefined) this.id = id;
    if (this.beatTimer) return;
    this.beatTimer = setInterval(() => { void this.beat(); }, HEARTBEAT_MS);
    this.beatTimer.unref();
    this.on(DAEMONS_CHANNEL, () => { if (!this.closed) void this.beat(); });
    await this.beat();
    await this.notify(DAEMONS_CHANNEL);
  }

  /** Daemons whose heartbeat was seen in the last ALIVE_MS, this one included, as last read (at least 1). */
  daemonsAlive(): number { return this.alive; }

  /**
   * This daemon's heartbeat, and how many daemons were alive, in one round trip. A failure to
   * reach the store counts against its health (query); the count stays as last read.
   */
  private async beat(): Promise<void> {
    if (this.closed) return;
    const now = this.clock();
    try {
      const { rows } = await this.query<{ n: string }>(`
        WITH me AS (
          INSERT INTO gateway_daemons (daemon_id, seen_at) VALUES ($1, $2) ON CONFLICT (daemon_id) DO UPDATE SET seen_at = excluded.seen_at
        ), forgotten AS (
          DELETE FROM gateway_daemons WHERE seen_at < $4 AND daemon_id <> $1
        )
        SELECT count(*) + 1 AS n FROM gateway_daemons WHERE seen_at > $3 AND daemon_id <> $1`,
      [this.id, now, now - ALIVE_MS, now - FORGET_DAEMON_MS], QUIET_MS);
      this.alive = Number(rows[0]!.n);
    } catch (e) {
      if (!isConnectionError(e)) this.o.log(`store: the heartbeat failed: ${this.describeError(e)}`);
    }
  }

  /** A connection error as one line for a person: where, and why, never the password. */
  describeError(e: unknown): string {
    return describeStoreError(e, this.o.store);
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
   * until the probe reaches it again. Rethrows either way. `timeoutMs`: unanswered this long, it
   * fails as unreachable and its connection is dropped (QUIET_MS, for what must not wait long).
   */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[], timeoutMs?: number): Promise<pg.QueryResult<R>> {
    try {
      return await (timeoutMs === undefined ? this.pool.query<R>(text, values) : this.pool.query<R>({ text, values, query_timeout: timeoutMs } as pg.QueryConfig));
    } catch (e) {
      if (isConnectionError(e)) this.failed(e);
      throw e;
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.store.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: `model-gateway ${this.daemonId} listener`, ...KEEPALIVE });
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
      await this.pool.query({ text: 'SELECT 1', query_timeout: QUIET_MS } as pg.QueryConfig);
      this.probeDelay = PROBE_MS.first;
      this.succeeded();
      if (relisten) for (const fn of this.reconnectHooks) fn();
    } catch (e) {
      this.probeDelay = Math.min(this.probeDelay * 2, PROBE_MS.max);
      this.failed(e);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const beating = this.beatTimer !== undefined && this.health.connected;
    this.closed = true; // from here no heartbeat answers a notification
    clearInterval(this.beatTimer);
    // Gone at once from the daemons that share limits, rather than a minute later; never waited on long.
    if (beating) {
      const leave = async () => {
        await this.pool.query('DELETE FROM gateway_daemons WHERE daemon_id = $1', [this.id]);
        await this.pool.query('SELECT pg_notify($1, $2)', [DAEMONS_CHANNEL, '']);
      };
      await Promise.race([leave().catch(() => {}), new Promise((r) => setTimeout(r, 1000).unref())]);
    }
    clearTimeout(this.probeTimer);
    const c = this.listenClient;
    this.listenClient = undefined;
    // Ending a connection waits for the server's side of it, and the pool's end for every query
    // still out: on a silent store, neither comes. The stop goes on after END_WAIT_MS regardless.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([c?.end().catch(() => {}), this.pool.end().catch(() => {})]),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, END_WAIT_MS); }),
    ]);
    clearTimeout(timer);
  }
}

/** A failure to reach or use the store as one line for a person: where, and why, never the password. */
export function describeStoreError(e: unknown, store: StoreUrl): string {
  const err = e as NodeJS.ErrnoException & { code?: string };
  const where = `the store at ${store.display}`;
  let why: string;
  switch (err.code) {
    case 'ECONNREFUSED': why = 'connection refused (is PostgreSQL running there?)'; break;
    case 'ENOTFOUND': case 'EAI_AGAIN': why = 'no such host'; break;
    case 'ETIMEDOUT': why = 'the connection timed out'; break;
    case '28P01': case '28000': why = `it refused the credentials (${err.message})`; break;
    case '3D000': why = `${err.message}; create it first (createdb)`; break;
    case '42501': why = `permission denied: the user cannot create the gateway's tables (${err.message})`; break;
    case '57P01': case '57P02': why = `the server shut down (${err.message})`; break;
    case '57P03': why = `the server does not take connections now (${err.message})`; break;
    default: why = /timeout/i.test(err.message ?? '') ? 'the connection timed out' : (err.message ?? String(e));
  }
  return redact(`${where}: ${why}`, store);
}

/** What `gateway doctor` finds at a store: its schema version (0: not created yet) and the daemons alive in it. */
export interface StoreInspection { version: number; daemons: number }

/**
 * Connects once, without migrating or writing anything, and reads the schema version and the
 * heartbeats; throws a one-line reason (no password) when the store cannot be reached or read.
 */
export async function inspectStore(store: StoreUrl, clock: () => number = Date.now): Promise<StoreInspection> {
  const client = new pg.Client({ connectionString: store.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'model-gateway doctor' });
  // An error after connecting (the server going away) must not be an unhandled 'error' event.
  client.on('error', () => {});
  const missing = (e: unknown) => { if ((e as { code?: string }).code === '42P01') return { rows: [] }; throw e; };
  try {
    await client.connect();
    const version = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM gateway_schema').catch(missing);
    const daemons = await client.query<{ n: string }>('SELECT count(*) AS n FROM gateway_daemons WHERE seen_at > $1', [clock() - ALIVE_MS]).catch(missing);
    return { version: version.rows[0]?.v ?? 0, daemons: Number(daemons.rows[0]?.n ?? 0) };
  } catch (e) {
    throw new Error(describeStoreError(e, store));
  } finally {
    await client.end().catch(() => {});
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
    || /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(err?.message ?? '');
}

/** The longest delay a Node timer takes (a longer one fires at once). */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** A backstop re-read's interval from `env[name]` (seconds), else `defaultMs`; one line when it is not a positive number. */
export function recheckMsFrom(env: NodeJS.ProcessEnv, name: string, defaultMs: number): number {
  const v = env[name]?.trim();
  if (v === undefined || v === '') return defaultMs;
  const s = Number(v);
  if (!Number.isFinite(s) || s <= 0) throw new Error(`${name} must be a positive number of seconds, got "${v}"`);
  return Math.min(Math.round(s * 1000), LONGEST_TIMER_MS);
}
