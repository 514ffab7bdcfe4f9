// Team mode's usage history: one history for every daemon on the shared store, read where it
// always was, in each daemon's own usage.db.
//
// Write side: the recorder writes this daemon's rows with an outbox entry in the same transaction
// (store.ts); here the outbox is pushed to PostgreSQL in batches (usage_push in pg-schema.ts:
// INSERT … ON CONFLICT (request_id) DO NOTHING, so a batch pushed twice adds nothing) and a row
// leaves the outbox only once PostgreSQL has committed it. While the store is down the outbox
// grows; it drains when the store is back, and a daemon killed and started again pushes what its
// outbox still holds.
//
// Read side: each daemon keeps a replica of the team's rows. PostgreSQL numbers rows in commit
// order (seq); every daemon reads the other daemons' rows after the last one it has (a cursor kept in usage.db,
// advanced in the transaction that writes the rows) into its own requests table and rollups, so
// `gateway usage`, GET /admin/usage/* and the dashboard run the same SQLite queries as on a
// laptop, over the whole team, and keep answering while PostgreSQL is away. It reads when any
// daemon's push commits (NOTIFY usage_rows), after the listening connection came back, and every
// few seconds as a backstop. Nothing here is on the request path.
import { setImmediate as turn } from 'node:timers/promises';
import { isConnectionError, QUIET_MS, type SharedStore } from '../../store/shared-store.js';
import { ROW_COLUMNS, type RollupTable, type UsageRow, type UsageStore } from './store.js';

/** Notified when rows (or rollup parts) commit. */
export const USAGE_CHANNEL = 'usage_rows';
/** The payload of USAGE_CHANNEL when rollup parts committed (store migrate): rows come with ''. */
export const ROLLUPS_NOTICE = 'rollups';
/** The advisory lock usage_push takes (pg-schema.ts, "usag"): whatever is numbered under it is numbered in commit order. */
export const USAGE_LOCK = 1970495847;
/** A prune deletes up to an hour's worth of rows: it may take longer than a read, but never hangs on a silent store. */
const PRUNE_QUIET_MS = 60_000;
const DAY_MS = 86_400_000;
/** soon()'s wait: the most another daemon's usage lags behind this one's, beyond the round trips. */
const GATHER_MS = 200;
/** Rows whose JSON is kept for the push (remember()): a few seconds of a busy daemon's. */
const REMEMBERED = 50_000;

/** A pulled row as UsageRow's JSON (bigint columns as float8: exact below 2^53, and numbers, not strings, in node-pg). */
export const PULL_COLUMNS = ['seq::float8 AS seq', ...ROW_COLUMNS.map(([k, c, t]: readonly [string, string, string?]) => `${c}${t === 'int' ? '::float8' : ''} AS "${k}"`)].join(', ');

export interface TeamHistoryOptions {
  store: UsageStore;
  shared: SharedStore;
  /** The name this daemon's rows carry: those it pushed are not read back. */
  daemon?: string;
  log: (line: string) => void;
  /** The raw rows' retention: this daemon's older rows are deleted from the shared store too. */
  retentionDays: () => number;
  /** Rows per push and per pull (one PostgreSQL statement, one SQLite transaction). */
  batchRows?: number;
  /** The backstop: push and pull this often even without a notification. */
  backstopMs?: number;
  /** How long rows just written wait for others before they are pushed (soon()). */
  gatherMs?: number;
  pruneIntervalMs?: number;
  now?: () => number;
}

export interface TeamHistoryStats {
  /** This daemon's rows waiting for the shared store. */
  outbox: number;
  /** Rows pushed, and rows of other daemons read into this usage.db, since the daemon started. */
  pushed: number;
  pulled: number;
}

/** Runs `step` once at a time; a call while it runs asks for one more run after it. */
class Serial {
  private running: Promise<void> | undefined;
  private again = false;
  constructor(private readonly step: () => Promise<void>) {}

  run(): Promise<void> {
    if (this.running) { this.again = true; return this.running; }
    this.running = (async () => {
      do { this.again = false; await this.step(); } while (this.again);
    })().finally(() => { this.running = undefined; });
    return this.running;
  }

  idle(): Promise<void> { return this.running ?? Promise.resolve(); }
}

export class TeamHistory {
  private readonly pushes = new Serial(() => this.pushAll());
  private readonly pulls = new Serial(() => this.pullAll());
  private storeId: string | undefined;
  /** This daemon's rows not yet pushed, as the journal wrote them, by request id (remember()). */
  private readonly lines = new Map<string, string>();
  private gathering: NodeJS.Timeout | undefined;
  /** The shared store's last row when this daemon first read it: its own rows up to there are read too. */
  private ownUpTo = 0;
  /** The names this usage.db's own history has in the store (UsageStore.ownNames): its rollup parts are here already. */
  private ownNames: string[] = [];
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: Array<() => void> = [];
  /** No new pushes or pulls; `stopped`: the usage.db may be closed, nothing touches it any more. */
  private closing = false;
  private stopped = false;
  private pushed = 0;
  private pulled = 0;
  private lastError = '';
  private readonly batch: number;
  /**
   * The store may hold rollup parts not read yet: at the start, after the store or the listening
   * connection came back, on the backstop and on store migrate's notice; not on every push of
   * rows, which would cost every daemon a query more per push of any daemon.
   */
  private rollupsDue = true;

  constructor(private readonly o: TeamHistoryOptions) {
    this.batch = o.batchRows ?? 1000;
  }

  start(): this {
    const { shared } = this.o;
    this.unsubscribe.push(
      shared.on(USAGE_CHANNEL, (payload) => { if (payload === ROLLUPS_NOTICE) this.rollupsDue = true; void this.pull(); }),
      // Notifications sent while the listening connection was down are lost: read what is new.
      shared.onReconnect(() => { this.rollupsDue = true; void this.pull(); }),
      shared.onHealth((h) => { if (h.connected) { this.rollupsDue = true; void this.push(); void this.pull(); } }),
    );
    const backstop = setInterval(() => { this.rollupsDue = true; void this.push(); void this.pull(); }, this.o.backstopMs ?? 5_000);
    const prune = setInterval(() => { void this.prune(); }, this.o.pruneIntervalMs ?? 3_600_000);
    for (const t of [backstop, prune]) { t.unref(); this.timers.push(t); }
    void this.push();
    void this.pull();
    return this;
  }

  /**
   * The JSON of a row of this daemon's, as the journal wrote it: the push sends it as it is. Past
   * REMEMBERED rows (a long outage) the rest are made again from usage.db when pushed.
   */
  remember(requestId: string, json: string): void {
    if (this.lines.size < REMEMBERED) this.lines.set(requestId, json);
  }

  /**
   * Rows were written: they are pushed within GATHER_MS, with what else is written meanwhile. A
   * busy daemon's push is then one statement of many rows a few times a second, not one per batch
   * the recorder writes (every push costs a round trip, PostgreSQL's turn, and a read on every
   * other daemon); the others see the rows that much later.
   */
  soon(): void {
    if (this.gathering || this.closing) return;
    this.gathering = setTimeout(() => { this.gathering = undefined; void this.push(); }, this.o.gatherMs ?? GATHER_MS);
    this.gathering.unref();
  }

  /** Sends what the outbox holds. Never throws; a failure leaves the rows there for the next try. */
  push(): Promise<void> {
    return this.closing || !this.o.shared.status().connected ? Promise.resolve() : this.pushes.run();
  }

  /** Reads the rows other daemons committed since the last read. Never throws. */
  pull(): Promise<void> {
    return this.closing || !this.o.shared.status().connected ? Promise.resolve() : this.pulls.run();
  }

  stats(): TeamHistoryStats {
    return { outbox: this.stopped ? 0 : this.o.store.outboxSize(), pushed: this.pushed, pulled: this.pulled };
  }

  private async pushAll(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const { json, ids, requestIds } = this.o.store.outboxBatch(this.batch, (id) => this.lines.get(id));
      if (ids.length === 0) return;
      try {
        // Bounded: a push left hanging on a silent store would hold every later one. Cut off after
        // PostgreSQL committed, its rows stay in the outbox and are pushed again, counted once.
        await this.o.shared.query('SELECT usage_push($1::json)', [json], QUIET_MS);
      } catch (e) {
        this.failed('send the usage outbox to', e);
        // Refused, not unreachable: the rows go next time as usage.db has them (typed by its
        // columns), so no row the journal wrote otherwise can hold every later push back.
        if (!isConnectionError(e)) for (const id of requestIds) this.lines.delete(id);
        return;
      }
      // Committed: only now do they leave the outbox. Killed before this, the daemon pushes them
      // again at its next start, and the shared store keeps the first.
      if (this.stopped) return;
      this.o.store.outboxDone(ids);
      for (const id of requestIds) this.lines.delete(id);
      this.pushed += ids.length;
      if (ids.length < this.batch) return;
      await turn();
    }
  }

  private async pullAll(): Promise<void> {
    try {
      if (this.storeId === undefined) {
        const { rows: [r] } = await this.o.shared.query<{ id: string; top: number }>(
          'SELECT id, (SELECT coalesce(max(seq), 0) FROM usage_requests)::float8 AS top FROM usage_store', [], QUIET_MS);
        if (!r) throw new Error('the shared store has no usage_store row');
        [this.storeId, this.ownUpTo] = [r.id, r.top];
        this.ownNames = this.o.store.ownNames(r.id, this.o.daemon);
      }
      for (;;) {
        if (this.stopped) return;
        const after = this.o.store.pulledUpTo(this.storeId);
        // This daemon's own rows are in its usage.db already, and make most of what a busy daemon
        // would read back: they stay in PostgreSQL, and only `last` moves the cursor past them.
        // Those committed before this daemon started are read (a usage.db lost and started again
        // under the same name gets its own history back); insertMissing skips what it has.
        const { rows } = await this.o.shared.query<UsageRow & { seq: number | null; last: number | null; n: number }>(
          `WITH page AS (SELECT * FROM usage_requests WHERE seq > $1 ORDER BY seq LIMIT $2)
           SELECT m.last, m.n, ${PULL_COLUMNS} FROM (SELECT max(seq)::float8 AS last, count(*)::int AS n FROM page) m
             LEFT JOIN page ON $3::text IS NULL OR page.daemon IS DISTINCT FROM $3 OR page.seq <= $4
             ORDER BY page.seq`,
          [after, this.batch, this.o.daemon ?? null, this.ownUpTo], QUIET_MS);
        const last = rows[0]?.last ?? null;
        if (this.stopped) return;
        if (last === null) break;
        const others = rows.filter((r) => r.seq !== null).map(({ seq: _, last: __, n: ___, ...row }) => row);
        try {
          this.pulled += this.o.store.insertMissing(others, { cursor: { store: this.storeId, seq: last } });
        } catch (e) {
          this.report(`usage: could not write the team's rows to ${this.o.store.path}: ${(e as Error).message}; will retry`);
          return;
        }
        if (rows[0]!.n < this.batch) break;
        await turn();
      }
      if (this.rollupsDue) {
        this.rollupsDue = false;
        let done = false;
        try { done = await this.pullRollups(this.storeId); } finally { if (!done) this.rollupsDue = true; }
      }
    } catch (e) {
      this.failed('read the team\'s usage from', e);
    }
  }

  /**
   * The history other daemons kept only as rollups (a laptop's, copied by `store migrate`), added
   * to this usage.db's rollups with its own cursor. Those under its own names (ownNames) are its own already.
   * True when all are read.
   */
  private async pullRollups(storeId: string): Promise<boolean> {
    const cursor = `${storeId}/rollups`;
    for (;;) {
      if (this.stopped) return false;
      // As in pullAll: the cursor moves past this daemon's own parts too (`last`), or every pull
      // of the laptop that joined under its name would read all of them again, to skip them.
      const { rows } = await this.o.shared.query<{ last: number | null; n: number; kind: RollupTable | null; row: Record<string, unknown> | null }>(
        `WITH page AS (SELECT seq, daemon, kind, row FROM usage_rollups WHERE seq > $1 ORDER BY seq LIMIT $2)
         SELECT m.last, m.n, page.kind, page.row FROM (SELECT max(seq)::float8 AS last, count(*)::int AS n FROM page) m
           LEFT JOIN page ON page.daemon <> ALL($3::text[]) ORDER BY page.seq`,
        [this.o.store.pulledUpTo(cursor), this.batch, this.ownNames], QUIET_MS);
      const last = rows[0]?.last ?? null;
      if (this.stopped) return false;
      if (last === null) return true;
      try {
        const parts = rows.filter((r) => r.kind !== null).map((r) => ({ table: r.kind!, row: r.row! }));
        this.o.store.addRollups(parts, { store: cursor, seq: last });
      } catch (e) {
        this.report(`usage: could not add the team's rollups to ${this.o.store.path}: ${(e as Error).message}; will retry`);
        return false;
      }
      if (rows[0]!.n < this.batch) return true;
      await turn();
    }
  }

  /**
   * This daemon's raw rows past its retention leave the shared store too (each daemon's usage.db
   * keeps its rollups). Only its own: daemons may keep different retentions, and pruning the
   * team's rows by each one's would keep the whole history only as long as the shortest. The rows
   * of a daemon that never comes back stay until a daemon of that name prunes them (or someone
   * deletes them: `DELETE FROM usage_requests WHERE daemon = '…'`). Never throws.
   */
  async prune(): Promise<void> {
    if (this.closing || !this.o.shared.status().connected) return;
    const before = (this.o.now ?? Date.now)() - this.o.retentionDays() * DAY_MS;
    await this.o.shared.query('DELETE FROM usage_requests WHERE daemon = $1 AND started_at < $2', [this.o.shared.daemonId, before], PRUNE_QUIET_MS)
      .catch((e: unknown) => this.failed('prune the usage in', e));
  }

  /** A store that cannot be reached is the shared store's to report (degraded); another failure is logged once per distinct text. */
  private failed(what: string, e: unknown): void {
    if (isConnectionError(e) || this.stopped) return;
    this.report(`usage: could not ${what} ${this.o.shared.describeError(e)}`);
  }

  private report(line: string): void {
    if (line !== this.lastError) this.o.log(line);
    this.lastError = line;
  }

  /**
   * Stops reading, then gives the outbox one last push (at most `timeoutMs`: what is left goes at
   * the next start). After this the usage.db is not touched again and may be closed.
   */
  async close(timeoutMs = 3_000): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    clearTimeout(this.gathering);
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    const last = this.o.shared.status().connected ? this.pushes.run() : Promise.resolve();
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([last, this.pulls.idle()]), new Promise<void>((resolve) => { timer = setTimeout(resolve, timeoutMs); })]);
    clearTimeout(timer);
    this.stopped = true;
  }
}
