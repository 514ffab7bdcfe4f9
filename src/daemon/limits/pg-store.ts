// The limit store shared by several daemons: PostgreSQL (store/pg-schema.ts). A reservation is one
// call of `limit_reserve`, which locks the key's row and checks every limit in that turn, so the
// requests of one key are decided one after another whichever daemon serves them; a settlement is
// one call of `limit_settle`, idempotent by request id. Nothing is counted in a daemon's memory.
import type { QueryResultRow } from 'pg';
import { periodAt, WINDOW_MS, type KeyLimits } from './limits.js';
import type { Claim, LimitStore, Standing, Used, Verdict } from './store.js';


interface ReserveRow { ok: boolean; lim: string | null; used: number; held: number; retry_after_ms: string | null }

/** What the store queries through: a pg Pool, or the daemon's SharedStore (which also tracks whether the database is reachable). */
export interface Queryable {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

export class PgLimitStore implements LimitStore {
  /** `end`: what close() does (a pool the store owns); the daemon's shared store is closed with the daemon instead. */
  constructor(private readonly pool: Queryable, private readonly end: () => Promise<void> = async () => {}) {}

  async reserve(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    const b = limits.budget;
    const period = b ? periodAt(b.period, claim.at, limits.tz) : undefined;
    const { rows } = await this.pool.query<ReserveRow>(
      'SELECT * FROM limit_reserve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
      [
        claim.keyId, claim.requestId, claim.at, claim.tokens, claim.usd, claim.expiresAt,
        limits.rpm ?? null, limits.tpm ?? null, limits.concurrency ?? null,
        b?.usd ?? null, b ? `${b.period}:${limits.tz ?? 'UTC'}:${period!.start}` : '', period?.start ?? 0,
      ],
    );
    const r = rows[0]!;
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

  async standing(keyId: string, limits: KeyLimits, now: number): Promise<Standing> {
    const b = limits.budget;
    const period = b ? periodAt(b.period, now, limits.tz) : undefined;
    const { rows } = await this.pool.query<{ requests: string; tokens: string; open: string; spent: number; held: number }>(`
      SELECT count(*) FILTER (WHERE at > $2::bigint - ${WINDOW_MS}) AS requests,
             coalesce(sum(tokens) FILTER (WHERE at > $2::bigint - ${WINDOW_MS}), 0) AS tokens,
             count(*) FILTER (WHERE NOT settled AND expires_at > $2::bigint) AS open,
             coalesce(sum(usd) FILTER (WHERE settled AND at >= $3::bigint), 0) AS spent,
             coalesce(sum(usd) FILTER (WHERE NOT settled AND expires_at > $2::bigint AND at >= $3::bigint), 0) AS held
        FROM limit_claims WHERE key_id = $1 AND (at > $2::bigint - ${WINDOW_MS} OR NOT settled OR at >= $3::bigint)`, [keyId, now, period?.start ?? Number.MAX_SAFE_INTEGER]);
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
