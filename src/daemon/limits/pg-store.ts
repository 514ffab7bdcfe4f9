// The limit store shared by several daemons: PostgreSQL (store/pg-schema.ts, versions 1, 6 and 7).
// A reservation is decided by `limit_reserve`, which locks the key's row and checks every limit in
// that turn, so the requests of one key are decided one after another whichever daemon serves
// them. Nothing is counted in a daemon's memory. What keeps a busy key fast:
//
// - Constant work per reservation. The sliding window counts per-second buckets (limit_windows:
//   requests, tokens and the latest admission of each second of each key), at most ~61 rows
//   whatever the rate; the requests in flight, the USD they hold and a budget's settled spend
//   are counters on the key's row, kept by every call that opens or closes a claim, and counted
//   again from the open claims when the period changes or a claim may have expired unsettled.
//   The window's rule: a bucket counts until its latest admission has left the window. That is
//   exact for requests admitted in different seconds (the contract's exact retry-afters hold) and,
//   for several sharing the second at the window's edge, refuses early: an admission counts up to
//   a second longer than WINDOW_MS, never shorter, so no sliding window ever holds more than the
//   limit, and a retry-after is exact or up to a second late, never early.
//
// - Short lock holds. A reservation commits with synchronous_commit off: the key's row lock is
//   released when its work is done, not after the WAL reached the disk (which every other
//   reservation of the key waited for, one after another). The trade-off: a crash of the
//   PostgreSQL *server* (not of a daemon) loses the reservations of its last moments (at most
//   ~3 × wal_writer_delay, 600 ms by default). Their requests are served anyway; their
//   settlements, which are committed durably, find no claim and add it settled (counted once, in
//   its window and its period), so no spend is lost, and the loss is only that, until those
//   settle, the windows, concurrency and holds did not count them: a key can briefly be let past
//   its limits by what was in flight when the server crashed. A settlement's durable commit also
//   flushes every reservation committed before it, so at most the reservations after the last
//   settlement batch are at risk. A daemon crash loses nothing of this.
//
// - Reservations in batches. A key's reservations that arrive while this daemon's previous call
//   for it is out go together in the next call (`limit_reserve_many`: each decided in order, as
//   if alone), so a busy key costs one round trip and one hand-over of its lock per batch, and
//   no more of this daemon's connections queue on its lock than one.
//
// - Settlements in batches. settle() queues, and every SETTLE_BATCH_MS the queue goes in one call
//   of `limit_settle_many` (idempotent by request id, like the write-back after an outage), so
//   settlements take the key's lock once per batch instead of once per request. settle()
//   resolves when its batch committed, and fails with it (team-store.ts then keeps it in its outbox).
//
// Spend from before a key had limits: the laptop's store counts it from its usage history; this
// one counts claims only, because the team's usage history is not in this database's limit
// tables (it is the usage outbox's table, written after the request, keyed by request id). Once
// both are in one database, limit_reserve's new-period branch can add the cost of the key's
// requests in the period that have no claim, as sqlite-store.ts spentSince() does.
import type { QueryResultRow } from 'pg';
import { periodAt, WINDOW_MS, type KeyLimits } from './limits.js';
import { LEDGER_DAYS } from './sqlite-store.js';
import type { Claim, LimitStore, Standing, Used, Verdict } from './store.js';

const DAY = 86_400_000;
/** How long a settlement waits to go with others: the lag before the shared budget counts it. */
export const SETTLE_BATCH_MS = 25;
/** Settlements per statement (a write-back after a long outage can hold many). */
const ROWS_PER_BATCH = 1000;

/** The most reservations of a key in one call. */
const RESERVATIONS_PER_CALL = 200;

interface Queued { row: SettledRow; done: () => void; failed: (e: unknown) => void }
interface Reservation { limits: KeyLimits; claim: Claim; done: (v: Verdict) => void; failed: (e: unknown) => void }

interface ReserveRow { ok: boolean; lim: string | null; used: number; held: number; retry_after_ms: string | null }

/** What the store queries through: a pg Pool, or the daemon's SharedStore (which also tracks whether the database is reachable). */
export interface Queryable {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** A key's budget as the store last stated it: settled spend and holds (this request's included) in `period`. */
export interface BudgetSeen { keyId: string; period: string; periodStart: number; spent: number; held: number }

/** One settled request: as settle() batches it, or as written back after the store was unreachable. */
export interface SettledRow { requestId: string; keyId: string; at: number; tokens: number; usd: number }

/** `<period>:<tz>:<start>`: the budget period a key's cached spend belongs to. */
export function periodId(limits: KeyLimits, start: number): string {
  return `${limits.budget!.period}:${limits.tz ?? 'UTC'}:${start}`;
}

export class PgLimitStore implements LimitStore {
  private queue: Queued[] = [];
  /** Each key (and limits) with a reservation call out: the reservations waiting for the next. */
  private readonly reserving = new Map<string, Reservation[]>();
  private timer: NodeJS.Timeout | undefined;
  /** The batch being written: one at a time, in order. */
  private sending: Promise<void> = Promise.resolve();

  /**
   * `end`: what close() does (a pool the store owns); the daemon's shared store is closed with the
   * daemon instead. `seen`: told the key's budget standing with each reservation's answer.
   */
  constructor(private readonly pool: Queryable, private readonly end: () => Promise<void> = async () => {}, private readonly seen?: (b: BudgetSeen) => void) {}

  /**
   * Decided by limit_reserve_many: a key's reservations that arrive while its previous call is out
   * wait for it and go together in the next (one round trip and one turn of the key's lock for
   * them all, in arrival order); a key with nothing out is sent at once.
   */
  reserve(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    return new Promise<Verdict>((done, failed) => {
      const slot = `${claim.keyId}\n${JSON.stringify(limits)}`;
      const queued = this.reserving.get(slot);
      const r: Reservation = { limits, claim, done, failed };
      if (queued) { queued.push(r); return; }
      this.reserving.set(slot, []);
      void this.reserveBatch(slot, [r]);
    });
  }

  private async reserveBatch(slot: string, batch: Reservation[]): Promise<void> {
    try {
      const verdicts = await this.reserveMany(batch);
      batch.forEach((r, i) => {
        const v = verdicts[i];
        if (v instanceof Error || v === undefined) r.failed(v ?? new Error('the store gave no verdict'));
        else r.done(v);
      });
    } catch (e) {
      for (const r of batch) r.failed(e);
    }
    const next = this.reserving.get(slot)!;
    if (next.length === 0) { this.reserving.delete(slot); return; }
    this.reserving.set(slot, next.slice(RESERVATIONS_PER_CALL));
    void this.reserveBatch(slot, next.slice(0, RESERVATIONS_PER_CALL));
  }

  private async reserveMany(batch: readonly Reservation[]): Promise<Array<Verdict | Error>> {
    const { limits } = batch[0]!;
    const b = limits.budget;
    const periods = batch.map(({ claim }) => (b ? periodAt(b.period, claim.at, limits.tz) : undefined));
    const col = <T>(f: (c: Claim) => T) => batch.map((r) => f(r.claim));
    const { rows } = await this.pool.query<ReserveRow>(
      'SELECT * FROM limit_reserve_many($1, $2::text[], $3::bigint[], $4::bigint[], $5::float8[], $6::bigint[], $7, $8, $9, $10, $11::text[], $12::bigint[], $13)',
      [
        batch[0]!.claim.keyId, col((c) => c.requestId), col((c) => c.at), col((c) => c.tokens), col((c) => c.usd), col((c) => c.expiresAt),
        limits.rpm ?? null, limits.tpm ?? null, limits.concurrency ?? null, b?.usd ?? null,
        periods.map((p) => (p ? periodId(limits, p.start) : '')), periods.map((p) => p?.start ?? 0), WINDOW_MS,
      ],
    );
    return batch.map(({ claim }, i) => {
      const r = rows[i];
      if (!r) return new Error('the store gave no verdict');
      if (r.lim === 'taken') return new Error(`request ${claim.requestId} is taken already in the limit store (a claim voided or reserved before)`);
      return this.verdict(limits, claim, periods[i], r);
    });
  }

  private verdict(limits: KeyLimits, claim: Claim, period: { start: number; end: number | undefined } | undefined, r: ReserveRow): Verdict {
    const b = limits.budget;
    if (b && (r.ok || r.lim === 'budget')) {
      this.seen?.({ keyId: claim.keyId, period: periodId(limits, period!.start), periodStart: period!.start, spent: Number(r.used), held: Number(r.held) });
    }
    if (r.ok) return { ok: true };
    const limit = r.lim as 'budget' | 'rpm' | 'tpm' | 'concurrency';
    const max = limit === 'budget' ? b!.usd : limits[limit]!;
    const asked = limit === 'budget' ? claim.usd : limit === 'tpm' ? claim.tokens : 1;
    return {
      ok: false, limit, max, used: Number(r.used), held: Number(r.held), asked,
      ...(r.retry_after_ms === null ? {} : { retryAfterMs: Number(r.retry_after_ms) }),
      ...(limit === 'budget' && period?.end !== undefined ? { resetAt: period.end } : {}),
    };
  }

  settle(claim: Claim, used: Used): Promise<void> {
    return new Promise<void>((done, failed) => {
      this.queue.push({ row: { requestId: claim.requestId, keyId: claim.keyId, at: claim.at, tokens: used.tokens, usd: used.usd }, done, failed });
      if (!this.timer) {
        this.timer = setTimeout(() => { void this.flush(); }, SETTLE_BATCH_MS);
        this.timer.unref();
      }
    });
  }

  /** Sends the queued settlements now (after the batch in flight); resolves when they are written or failed. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return this.sending;
    this.sending = this.sending.then(async () => {
      try {
        await this.record(batch.map((q) => q.row));
        for (const q of batch) q.done();
      } catch (e) {
        for (const q of batch) q.failed(e);
      }
    });
    return this.sending;
  }

  /**
   * Writes settled requests, each once by request id (limit_settle_many): an open claim is settled,
   * a missing one (settled on a daemon's share while the store was unreachable, or its reservation
   * lost in a server crash) is added settled, a settled one is left alone.
   */
  async record(rows: readonly SettledRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_BATCH) {
      const chunk = rows.slice(i, i + ROWS_PER_BATCH);
      await this.pool.query(
        'SELECT limit_settle_many($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[])',
        [chunk.map((r) => r.requestId), chunk.map((r) => r.keyId), chunk.map((r) => Math.round(r.at)), chunk.map((r) => Math.round(r.tokens)), chunk.map((r) => r.usd)],
      );
    }
  }

  /**
   * Voids the claims of requests whose reservation may have reached the store while it did not
   * answer, and which nothing will settle (the daemon refused them): each becomes a claim outside
   * every window, period and hold (admitted at 0, expired at 0). A reservation arriving later
   * finds its request id taken and is rolled back; one already made is voided the same way.
   */
  async release(claims: ReadonlyArray<{ requestId: string; keyId: string }>): Promise<void> {
    if (claims.length === 0) return;
    await this.pool.query('SELECT limit_release($1::text[], $2::text[])', [claims.map((c) => c.requestId), claims.map((c) => c.keyId)]);
  }

  /**
   * Drops the claims admitted more than LEDGER_DAYS before `now` (longer than a month, the longest
   * calendar period; the minute windows need far less), folding settled spend into its key's total.
   * Returns how many went.
   */
  async prune(now: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT limit_prune($1) AS n', [now - LEDGER_DAYS * DAY]);
    return Number(rows[0]?.n ?? 0);
  }

  async standing(keyId: string, limits: KeyLimits, now: number): Promise<Standing> {
    const b = limits.budget;
    const period = b ? periodAt(b.period, now, limits.tz) : undefined;
    // The windows counted as reservations count them (the buckets' rule, at the top of this file).
    const { rows } = await this.pool.query<{ requests: string; tokens: string; open: string; spent: number; held: number }>(`
      SELECT w.requests, w.tokens, c.open, c.spent, c.held FROM (
        SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(tokens), 0) AS tokens FROM limit_windows
          WHERE key_id = $1 AND sec >= ($2::bigint - $4::bigint) / 1000 - 1 AND last_at > $2::bigint - $4::bigint
      ) w, (
        SELECT count(*) FILTER (WHERE NOT settled AND expires_at > $2::bigint) AS open,
               coalesce(sum(usd) FILTER (WHERE settled AND at >= $3::bigint), 0)
                 + CASE WHEN $3::bigint = 0 THEN coalesce((SELECT folded FROM limit_keys WHERE key_id = $1), 0) ELSE 0 END AS spent,
               coalesce(sum(usd) FILTER (WHERE NOT settled AND expires_at > $2::bigint AND at >= $3::bigint), 0) AS held
          FROM limit_claims WHERE key_id = $1 AND (NOT settled OR at >= $3::bigint)
      ) c`,
    [keyId, now, period?.start ?? Number.MAX_SAFE_INTEGER, WINDOW_MS]);
    const r = rows[0]!;
    const out: Standing = {};
    if (b) {
      const spent = Number(r.spent);
      const held = Number(r.held);
      out.budget = { max: b.usd, period: b.period, spent, held, left: Math.max(0, b.usd - spent - held), ...(period!.end === undefined ? {} : { resetAt: period!.end }) };
    }
    if (limits.rpm !== undefined) out.rpm = { max: limits.rpm, used: Number(r.requests) };
    if (limits.tpm !== undefined) out.tpm = { max: limits.tpm, used: Number(r.tokens) };
    if (limits.concurrency !== undefined) out.concurrency = { max: limits.concurrency, used: Number(r.open) };
    return out;
  }

  /** Writes the settlements still queued, then lets the store go. */
  async close(): Promise<void> {
    await this.flush();
    await this.end();
  }
}
