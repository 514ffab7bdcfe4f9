// The shared store's schema in PostgreSQL, versioned like the usage database's: each migration in
// one transaction with its version row, applied under an advisory lock so several daemons starting
// at once migrate it once; a database written by a newer gateway is refused, never guessed at.
import type { Pool, PoolClient } from 'pg';

export interface PgMigration {
  version: number;
  description: string;
  sql: string;
}

/** Any number the gateway's daemons agree on, to take turns migrating. */
const MIGRATION_LOCK = 0x6761_7465; // "gate"

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: 'per-key limits: one row per key (its lock and its spend in the current budget period), one per claim',
    sql: `
      CREATE TABLE limit_keys (
        key_id text PRIMARY KEY,
        -- the budget period whose settled spend 'spent' is ('<period>:<tz>:<start>'), and its start
        period text NOT NULL DEFAULT '',
        period_start bigint NOT NULL DEFAULT 0,
        spent double precision NOT NULL DEFAULT 0
      );
      -- A claim holds a request's worst case until it settles; then tokens and usd are what it used.
      CREATE TABLE limit_claims (
        request_id text PRIMARY KEY,
        key_id text NOT NULL,
        at bigint NOT NULL,
        tokens bigint NOT NULL,
        usd double precision NOT NULL,
        expires_at bigint NOT NULL,
        settled boolean NOT NULL DEFAULT false
      );
      CREATE INDEX limit_claims_key_at ON limit_claims (key_id, at);
      CREATE INDEX limit_claims_open ON limit_claims (key_id) WHERE NOT settled;

      -- Every check and the hold in one call, one round trip: the key's row is locked first, so
      -- the requests of one key take turns across every daemon, and each statement after the
      -- lock sees what the turn before committed.
      CREATE FUNCTION limit_reserve(p_key text, p_request text, p_at bigint, p_tokens bigint, p_usd double precision, p_expires bigint,
          p_rpm bigint, p_tpm bigint, p_concurrency bigint, p_budget double precision, p_period text, p_period_start bigint)
        RETURNS TABLE (ok boolean, lim text, used double precision, held double precision, retry_after_ms bigint)
        LANGUAGE plpgsql AS $fn$
      DECLARE
        n bigint; t bigint; h bigint; s double precision; hu double precision; k limit_keys%ROWTYPE;
      BEGIN
        INSERT INTO limit_keys (key_id) VALUES (p_key) ON CONFLICT DO NOTHING;
        SELECT * INTO k FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        IF p_concurrency IS NOT NULL THEN
          SELECT count(*) INTO n FROM limit_claims WHERE key_id = p_key AND NOT settled AND expires_at > p_at;
          IF n + 1 > p_concurrency THEN
            RETURN QUERY SELECT false, 'concurrency'::text, n::float8, 0::float8, 1000::bigint; RETURN;
          END IF;
        END IF;
        IF p_rpm IS NOT NULL THEN
          SELECT count(*) INTO n FROM limit_claims WHERE key_id = p_key AND at > p_at - 60000;
          IF n + 1 > p_rpm THEN
            RETURN QUERY SELECT false, 'rpm'::text, n::float8, 0::float8,
              (SELECT c.at + 60000 - p_at FROM limit_claims c WHERE c.key_id = p_key AND c.at > p_at - 60000 ORDER BY c.at OFFSET n - p_rpm LIMIT 1);
            RETURN;
          END IF;
        END IF;
        IF p_tpm IS NOT NULL THEN
          SELECT coalesce(sum(tokens), 0), coalesce(sum(tokens) FILTER (WHERE NOT settled AND expires_at > p_at), 0) INTO t, h
            FROM limit_claims WHERE key_id = p_key AND at > p_at - 60000;
          -- A request larger than the whole minute's tokens runs alone: once nothing else is in the minute.
          IF t + p_tokens > p_tpm AND NOT (p_tokens > p_tpm AND NOT EXISTS (SELECT 1 FROM limit_claims WHERE key_id = p_key AND at > p_at - 60000)) THEN
            RETURN QUERY SELECT false, 'tpm'::text, (t - h)::float8, h::float8,
              CASE WHEN p_tokens > p_tpm THEN (SELECT max(c.at) + 60000 - p_at FROM limit_claims c WHERE c.key_id = p_key AND c.at > p_at - 60000) ELSE (
                SELECT x.at + 60000 - p_at FROM (
                  SELECT c.at, sum(c.tokens) OVER (ORDER BY c.at, c.request_id) AS gone FROM limit_claims c WHERE c.key_id = p_key AND c.at > p_at - 60000
                ) x WHERE p_tpm - t + x.gone >= p_tokens ORDER BY x.at LIMIT 1) END;
            RETURN;
          END IF;
        END IF;
        IF p_budget IS NOT NULL THEN
          IF k.period <> p_period THEN
            -- A new period (or another kind of budget): its settled spend, read once.
            SELECT coalesce(sum(usd), 0) INTO s FROM limit_claims WHERE key_id = p_key AND settled AND at >= p_period_start;
            UPDATE limit_keys SET period = p_period, period_start = p_period_start, spent = s WHERE key_id = p_key;
          ELSE
            s := k.spent;
          END IF;
          SELECT coalesce(sum(usd), 0) INTO hu FROM limit_claims WHERE key_id = p_key AND NOT settled AND expires_at > p_at AND at >= p_period_start;
          IF s + hu + p_usd > p_budget + 1e-9 THEN -- a billionth of a dollar: sums of cents are not exact in binary
            RETURN QUERY SELECT false, 'budget'::text, s, hu, NULL::bigint; RETURN;
          END IF;
        END IF;
        INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at) VALUES (p_request, p_key, p_at, p_tokens, p_usd, p_expires);
        RETURN QUERY SELECT true, NULL::text, 0::float8, 0::float8, NULL::bigint;
      END $fn$;

      -- Idempotent by request id: only an unsettled claim is settled, and its spend counted once.
      CREATE FUNCTION limit_settle(p_request text, p_tokens bigint, p_usd double precision) RETURNS void LANGUAGE plpgsql AS $fn$
      DECLARE c limit_claims%ROWTYPE;
      BEGIN
        UPDATE limit_claims SET settled = true, tokens = p_tokens, usd = p_usd WHERE request_id = p_request AND NOT settled RETURNING * INTO c;
        IF FOUND THEN
          UPDATE limit_keys SET spent = spent + p_usd WHERE key_id = c.key_id AND period <> '' AND c.at >= period_start;
        END IF;
      END $fn$;
    `,
  },
  {
    version: 6,
    description: 'degraded mode: a heartbeat per daemon (the local share of a limit while the store is unreachable), settlements written back once by request id, old claims pruned into a total, the window passed in',
    sql: `
      -- Each daemon's last heartbeat: the daemons seen in the last minute share a key's limits
      -- while the store is unreachable.
      CREATE TABLE gateway_daemons (
        daemon_id text PRIMARY KEY,
        seen_at bigint NOT NULL
      );
      -- What a total budget still counts of the claims pruned as too old for any window or period.
      ALTER TABLE limit_keys ADD COLUMN folded double precision NOT NULL DEFAULT 0;
      CREATE INDEX limit_claims_at ON limit_claims (at);

      -- Version 1's, with the sliding window's length passed in (limits.ts WINDOW_MS is the one
      -- place it is set), a total budget counting what was pruned, and the key's spend and holds
      -- returned on success too: what a daemon last knew of a budget when the store goes away.
      DROP FUNCTION limit_reserve(text, text, bigint, bigint, double precision, bigint, bigint, bigint, bigint, double precision, text, bigint);
      CREATE FUNCTION limit_reserve(p_key text, p_request text, p_at bigint, p_tokens bigint, p_usd double precision, p_expires bigint,
          p_rpm bigint, p_tpm bigint, p_concurrency bigint, p_budget double precision, p_period text, p_period_start bigint, p_window bigint)
        RETURNS TABLE (ok boolean, lim text, used double precision, held double precision, retry_after_ms bigint)
        LANGUAGE plpgsql AS $fn$
      DECLARE
        n bigint; t bigint; h bigint; s double precision; hu double precision; k limit_keys%ROWTYPE;
      BEGIN
        INSERT INTO limit_keys (key_id) VALUES (p_key) ON CONFLICT DO NOTHING;
        SELECT * INTO k FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        IF p_concurrency IS NOT NULL THEN
          SELECT count(*) INTO n FROM limit_claims WHERE key_id = p_key AND NOT settled AND expires_at > p_at;
          IF n + 1 > p_concurrency THEN
            RETURN QUERY SELECT false, 'concurrency'::text, n::float8, 0::float8, 1000::bigint; RETURN;
          END IF;
        END IF;
        IF p_rpm IS NOT NULL THEN
          SELECT count(*) INTO n FROM limit_claims WHERE key_id = p_key AND at > p_at - p_window;
          IF n + 1 > p_rpm THEN
            RETURN QUERY SELECT false, 'rpm'::text, n::float8, 0::float8,
              (SELECT c.at + p_window - p_at FROM limit_claims c WHERE c.key_id = p_key AND c.at > p_at - p_window ORDER BY c.at OFFSET n - p_rpm LIMIT 1);
            RETURN;
          END IF;
        END IF;
        IF p_tpm IS NOT NULL THEN
          SELECT coalesce(sum(tokens), 0), coalesce(sum(tokens) FILTER (WHERE NOT settled AND expires_at > p_at), 0) INTO t, h
            FROM limit_claims WHERE key_id = p_key AND at > p_at - p_window;
          -- A request larger than the whole window's tokens runs alone: once nothing else is in the window.
          IF t + p_tokens > p_tpm AND NOT (p_tokens > p_tpm AND NOT EXISTS (SELECT 1 FROM limit_claims WHERE key_id = p_key AND at > p_at - p_window)) THEN
            RETURN QUERY SELECT false, 'tpm'::text, (t - h)::float8, h::float8,
              CASE WHEN p_tokens > p_tpm THEN (SELECT max(c.at) + p_window - p_at FROM limit_claims c WHERE c.key_id = p_key AND c.at > p_at - p_window) ELSE (
                SELECT x.at + p_window - p_at FROM (
                  SELECT c.at, sum(c.tokens) OVER (ORDER BY c.at, c.request_id) AS gone FROM limit_claims c WHERE c.key_id = p_key AND c.at > p_at - p_window
                ) x WHERE p_tpm - t + x.gone >= p_tokens ORDER BY x.at LIMIT 1) END;
            RETURN;
          END IF;
        END IF;
        IF p_budget IS NOT NULL THEN
          IF k.period <> p_period THEN
            -- A new period (or another kind of budget): its settled spend, read once; a total also counts what was pruned.
            SELECT coalesce(sum(usd), 0) INTO s FROM limit_claims WHERE key_id = p_key AND settled AND at >= p_period_start;
            IF p_period_start = 0 THEN s := s + k.folded; END IF;
            UPDATE limit_keys SET period = p_period, period_start = p_period_start, spent = s WHERE key_id = p_key;
          ELSE
            s := k.spent;
          END IF;
          SELECT coalesce(sum(usd), 0) INTO hu FROM limit_claims WHERE key_id = p_key AND NOT settled AND expires_at > p_at AND at >= p_period_start;
          IF s + hu + p_usd > p_budget + 1e-9 THEN -- a billionth of a dollar: sums of cents are not exact in binary
            RETURN QUERY SELECT false, 'budget'::text, s, hu, NULL::bigint; RETURN;
          END IF;
        END IF;
        INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at) VALUES (p_request, p_key, p_at, p_tokens, p_usd, p_expires);
        RETURN QUERY SELECT true, NULL::text, coalesce(s, 0), coalesce(hu, 0) + p_usd, NULL::bigint;
      END $fn$;

      -- A request settled while the store was unreachable, written back when it returns: its claim
      -- (if it was reserved here before the store went away) is settled, or a settled claim is
      -- added; once per request id either way. Claim first, then the key's row, as limit_settle
      -- does, so the two never wait on each other.
      CREATE FUNCTION limit_record(p_request text, p_key text, p_at bigint, p_tokens bigint, p_usd double precision) RETURNS void LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at, settled) VALUES (p_request, p_key, p_at, p_tokens, p_usd, p_at, true)
          ON CONFLICT (request_id) DO NOTHING;
        IF FOUND THEN
          UPDATE limit_keys SET spent = spent + p_usd WHERE key_id = p_key AND period <> '' AND p_at >= period_start;
        ELSE
          PERFORM limit_settle(p_request, p_tokens, p_usd);
        END IF;
      END $fn$;

      -- Claims no window or period needs any more (admitted before p_before): settled ones are
      -- folded into their key's total, long-expired open ones (their request vanished) dropped.
      CREATE FUNCTION limit_prune(p_before bigint) RETURNS bigint LANGUAGE plpgsql AS $fn$
      DECLARE n bigint;
      BEGIN
        WITH gone AS (
          DELETE FROM limit_claims WHERE at < p_before AND (settled OR expires_at < p_before) RETURNING key_id, usd, settled
        ), sums AS (
          SELECT key_id, coalesce(sum(usd) FILTER (WHERE settled), 0) AS usd, count(*) AS n FROM gone GROUP BY key_id
        ), folded AS (
          INSERT INTO limit_keys (key_id, folded) SELECT key_id, usd FROM sums
            ON CONFLICT (key_id) DO UPDATE SET folded = limit_keys.folded + excluded.folded RETURNING 1
        )
        SELECT coalesce(sum(sums.n), 0) INTO n FROM sums;
        RETURN n;
      END $fn$;
    `,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** Brings the database to the newest version; throws a one-line reason when it is newer than this gateway. */
export async function migratePg(pool: Pool, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  const target = migrations[migrations.length - 1]?.version ?? 0;
  const client: PoolClient = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS gateway_schema (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM gateway_schema');
      const current = rows[0]?.v ?? 0;
      if (current > target) {
        throw new Error(`the store has schema version ${current}, newer than this gateway understands (${target}); upgrade model-gateway`);
      }
      const applied: number[] = [];
      for (const m of migrations) {
        if (m.version <= current) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO gateway_schema (version, description) VALUES ($1, $2)', [m.version, m.description]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw new Error(`store migration to version ${m.version} (${m.description}) failed: ${(e as Error).message}`);
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
