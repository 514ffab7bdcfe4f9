// The limit store shared by several daemons: PostgreSQL (store/pg-schema.ts). A reservation is one
// call of `limit_reserve`, which locks the key's row and checks every limit in that turn, so the
// requests of one key are decided one after another whichever daemon serves them; a settlement is
// one call of `limit_settle`, idempotent by request id. Nothing is counted in a daemon's memory.
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

interface ReserveRow { ok: boolean; lim: string | null; used: number; held: number; retry_after_ms: string | null }

/** What the store queries through: a pg Pool, or the daemon's SharedStore (which also tracks whether the database is reachable). */
export interface Queryable {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** A key's budget as the store last stated it: settled spend and holds (this request's included) in `period`. */
export interface BudgetSeen { keyId: string; period: string; periodStart: number; spent: number; held: number }

/** One settled request, as written back after the store was unreachable. */
export interface SettledRow { requestId: string; keyId: string; at: number; tokens: number; usd: number }

/** `<period>:<tz>:<start>`: the budget period a key's cached spend belongs to. */
export function periodId(limits: KeyLimits, start: number): string {
  return `${limits.budget!.period}:${limits.tz ?? 'UTC'}:${start}`;
}

export class PgLimitStore implements LimitStore {
  /**
   * `end`: what close() does (a pool the store owns); the daemon's shared store is closed with the
   * daemon instead. `seen`: told the key's budget standing with each reservation's answer.
   */
  constructor(private readonly pool: Queryable, private readonly end: () => Promise<void> = async () => {}, private readonly seen?: (b: BudgetSeen) => void) {}

  async reserve(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    const b = limits.budget;
    const period = b ? periodAt(b.period, claim.at, limits.tz) : undefined;
    const { rows } = await this.pool.query<ReserveRow>(
      'SELECT * FROM limit_reserve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)',
      [
        claim.keyId, claim.requestId, claim.at, claim.tokens, claim.usd, claim.expiresAt,
        limits.rpm ?? null, limits.tpm ?? null, limits.concurrency ?? null,
        b?.usd ?? null, b ? periodId(limits, period!.start) : '', period?.start ?? 0, WINDOW_MS,
      ],
    );
    const r = rows[0]!;
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

  async settle(claim: Claim, used: Used): Promise<void> {
    await this.pool.query('SELECT limit_settle($1, $2, $3)', [claim.requestId, used.tokens, used.usd]);
  }

  /** Writes back requests settled while the store was unreachable, in one statement: each counts once by request id. */
  async record(rows: readonly SettledRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.pool.query(
      'SELECT limit_record(r.request_id, r.key_id, r.at, r.tokens, r.usd) FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[]) AS r(request_id, key_id, at, tokens, usd)',
      [rows.map((r) => r.requestId), rows.map((r) => r.keyId), rows.map((r) => r.at), rows.map((r) => r.tokens), rows.map((r) => r.usd)],
    );
  }

  /**
   * Voids the claims of requests whose reservation may have reached the store while it did not
   * answer, and which nothing will settle (the daemon refused them): each becomes a claim outside
   * every window, period and hold (admitted at 0, expired at 0). A reservation arriving later
   * finds its request id taken and is rolled back; one already made is voided the same way.
   */
  async release(claims: ReadonlyArray<{ requestId: string; keyId: string }>): Promise<void> {
    if (claims.length === 0) return;
    await this.pool.query(
      `INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at) SELECT r, k, 0, 0, 0, 0 FROM unnest($1::text[], $2::text[]) AS v(r, k)
         ON CONFLICT (request_id) DO UPDATE SET at = 0, expires_at = 0 WHERE NOT limit_claims.settled`,
      [claims.map((c) => c.requestId), claims.map((c) => c.keyId)],
    );
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
    const { rows } = await this.pool.query<{ requests: string; tokens: string; open: string; spent: number; held: number }>(`
      SELECT count(*) FILTER (WHERE at > $2::bigint - $4::bigint) AS requests,
             coalesce(sum(tokens) FILTER (WHERE at > $2::bigint - $4::bigint), 0) AS tokens,
             count(*) FILTER (WHERE NOT settled AND expires_at > $2::bigint) AS open,
             coalesce(sum(usd) FILTER (WHERE settled AND at >= $3::bigint), 0)
               + CASE WHEN $3::bigint = 0 THEN coalesce((SELECT folded FROM limit_keys WHERE key_id = $1), 0) ELSE 0 END AS spent,
             coalesce(sum(usd) FILTER (WHERE NOT settled AND expires_at > $2::bigint AND at >= $3::bigint), 0) AS held
        FROM limit_claims WHERE key_id = $1 AND (at > $2::bigint - $4::bigint OR NOT settled OR at >= $3::bigint)`,
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

  close(): Promise<void> {
    return this.end();
  }
}
