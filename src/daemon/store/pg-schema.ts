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
    version: 2,
    description: 'keys: proxy, admin and session keys, one row each, stored by their hash',
    sql: `
      -- One row per key record (store/pg-keys.ts). The key itself is never stored: 'hash' is the
      -- hex SHA-256 of the whole key, and the check refuses anything else in that column.
      CREATE TABLE keys (
        id text PRIMARY KEY,
        -- the order keys were made in (keys.json's order): several can share a created_at
        seq bigint GENERATED ALWAYS AS IDENTITY,
        name text NOT NULL,
        hash text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
        kind text NOT NULL DEFAULT 'proxy' CHECK (kind IN ('proxy', 'admin', 'session')),
        created_at timestamptz NOT NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        models jsonb,
        limits jsonb
      );
      CREATE INDEX keys_name ON keys (name);
    `,
  },
  {
    version: 3,
    description: 'the team\'s usage history: one row per request, pushed by the daemon that served it, read by every daemon in commit order',
    sql: `
      -- One row per request id: a daemon pushing a row again (it was killed before it heard the
      -- commit) adds nothing. seq numbers the rows in the order they were committed, the cursor by
      -- which every daemon reads the rows it has not seen (usage_push hands them out in turn).
      CREATE TABLE usage_requests (
        request_id text PRIMARY KEY,
        seq bigint NOT NULL,
        daemon text,
        started_at bigint NOT NULL,
        key_id text NOT NULL,
        key_name text NOT NULL,
        mode text NOT NULL,
        provider text NOT NULL,
        model text,
        requested_model text,
        method text NOT NULL,
        path text NOT NULL,
        stream boolean NOT NULL,
        status integer NOT NULL,
        error_code text,
        error_message text,
        duration_ms double precision NOT NULL,
        ttfb_ms double precision,
        request_bytes bigint NOT NULL,
        output_bytes bigint NOT NULL,
        input_tokens bigint,
        output_tokens bigint,
        cached_tokens bigint,
        cache_write_tokens bigint,
        cache_write_1h_tokens bigint,
        reasoning_tokens bigint,
        cost double precision,
        cache_saved double precision,
        session text,
        route text,
        waited_ms double precision,
        key_label text,
        limit_kind text
      );
      CREATE SEQUENCE usage_requests_seq OWNED BY usage_requests.seq;
      CREATE UNIQUE INDEX usage_requests_by_seq ON usage_requests (seq);
      CREATE INDEX usage_requests_started ON usage_requests (started_at);
      -- Which database this is, for the cursor each daemon keeps in its own usage.db: a store
      -- dropped and made again starts the count again, and is read from its start.
      CREATE TABLE usage_store (id text PRIMARY KEY);
      INSERT INTO usage_store VALUES (gen_random_uuid()::text);

      -- A batch of rows (the JSON of the gateway's usage rows) in one statement. Pushes take turns
      -- team-wide (a transaction-scoped lock): a push's seq numbers are handed out only after the
      -- push before it is visible, so a daemon that has read up to N never later finds a row below
      -- N. Every daemon hears usage_rows once the push commits. Returns the rows that were new.
      CREATE FUNCTION usage_push(p_rows jsonb) RETURNS integer LANGUAGE plpgsql AS $fn$
      DECLARE n integer;
      BEGIN
        PERFORM pg_advisory_xact_lock(1970495847); -- "usag"
        INSERT INTO usage_requests (request_id, seq, daemon, started_at, key_id, key_name, mode, provider, model, requested_model,
            method, path, stream, status, error_code, error_message, duration_ms, ttfb_ms, request_bytes, output_bytes,
            input_tokens, output_tokens, cached_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens,
            cost, cache_saved, session, route, waited_ms, key_label, limit_kind)
          SELECT r."requestId", nextval('usage_requests_seq'), r.daemon, r."startedAt", r."keyId", r."keyName", r.mode, r.provider, r.model, r."requestedModel",
            r.method, r.path, r.stream, r.status, r."errorCode", r."errorMessage", r."durationMs", r."ttfbMs", r."requestBytes", r."outputBytes",
            r."inputTokens", r."outputTokens", r."cachedTokens", r."cacheWriteTokens", r."cacheWrite1hTokens", r."reasoningTokens",
            r.cost, r."cacheSaved", r.session, r.route, r."waitedMs", r."keyLabel", r."limit"
          FROM jsonb_to_recordset(p_rows) AS r("requestId" text, daemon text, "startedAt" bigint, "keyId" text, "keyName" text, mode text,
            provider text, model text, "requestedModel" text, method text, path text, stream boolean, status integer, "errorCode" text,
            "errorMessage" text, "durationMs" double precision, "ttfbMs" double precision, "requestBytes" bigint, "outputBytes" bigint,
            "inputTokens" bigint, "outputTokens" bigint, "cachedTokens" bigint, "cacheWriteTokens" bigint, "cacheWrite1hTokens" bigint,
            "reasoningTokens" bigint, cost double precision, "cacheSaved" double precision, session text, route text,
            "waitedMs" double precision, "keyLabel" text, "limit" text)
        ON CONFLICT (request_id) DO NOTHING;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN PERFORM pg_notify('usage_rows', ''); END IF;
        RETURN n;
      END $fn$;
    `,
  },
  {
    version: 4,
    description: 'Responses API answers: one row per answer, for previous_response_id on any daemon',
    sql: `
      -- As the laptop's responses.db keeps them (store/responses.ts): the input items and the
      -- response as the client got them, in text rather than jsonb so they come back byte for byte;
      -- bytes is what the size cap counts. held_by: the provider that keeps the answer itself (the
      -- row then records only its id and owner).
      CREATE TABLE responses (
        id text PRIMARY KEY,
        key_id text NOT NULL,
        created_at bigint NOT NULL,
        previous_id text,
        bytes bigint NOT NULL,
        input text NOT NULL,
        response text NOT NULL,
        held_by text
      );
      -- Retention and the size cap drop the oldest first.
      CREATE INDEX responses_created ON responses (created_at);
    `,
  },
  {
    version: 5,
    description: 'shared config: the routing and configured providers every daemon serves, one versioned document',
    sql: `
      -- One row: the document (store/shared-config.ts names its sections; never a provider key)
      -- and its version, raised by one under the row's lock for each change, which is announced
      -- on the gateway_config channel. json, not jsonb: the files it is written back into keep
      -- their order.
      CREATE TABLE shared_config (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        version bigint NOT NULL,
        doc json NOT NULL,
        updated_by text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO shared_config (version, doc, updated_by) VALUES (0, '{}', '');
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
  {
    version: 7,
    description: 'limits at a busy key\'s rate: per-second window buckets, reservations committed without waiting for the disk, settlements in batches',
    sql: `
      -- A key's requests and tokens per second of admission: a minute's window is the sum of at
      -- most ~61 rows, whatever the request rate. last_at is the latest admission in the second:
      -- a bucket counts in the window until that one has left it, so the window is exact for
      -- claims in different seconds and errs only on the side of refusing, by less than a second,
      -- for claims sharing the second at the window's edge (pg-store.ts).
      CREATE TABLE limit_windows (
        key_id text NOT NULL,
        sec bigint NOT NULL,
        requests bigint NOT NULL,
        tokens bigint NOT NULL,
        last_at bigint NOT NULL,
        PRIMARY KEY (key_id, sec)
      );
      -- The claims already made, in their buckets (the last minute is all a window needs).
      INSERT INTO limit_windows (key_id, sec, requests, tokens, last_at)
        SELECT key_id, at / 1000, count(*), sum(tokens), max(at) FROM limit_claims
          WHERE at > (extract(epoch FROM now()) * 1000)::bigint - 120000 GROUP BY key_id, at / 1000;

      -- The key's open claims as counters, kept under its row's lock by every call that opens or
      -- closes one: how many (concurrency) and the USD they hold in the key's budget period.
      -- They count the open claims that expire after swept_at; next_expiry is at or before the
      -- first of those to expire, and once a reservation reaches it the counters are counted
      -- again from the open claims (the rows), as they are when the period changes.
      ALTER TABLE limit_keys ADD COLUMN open_n bigint NOT NULL DEFAULT 0,
        ADD COLUMN held_usd double precision NOT NULL DEFAULT 0,
        ADD COLUMN swept_at bigint NOT NULL DEFAULT 0,
        ADD COLUMN next_expiry bigint NOT NULL DEFAULT 0;

      -- Version 6's, in constant work: the windows from the buckets, concurrency and holds from
      -- the key's counters, the budget's settled spend from the key's row. Committed without
      -- waiting for the WAL flush: the key's row lock, which every reservation of the key waits
      -- for, is held for the function's work only. A server crash can lose the last moments of
      -- reservations; their settlements add them back (limit_settle_many).
      CREATE OR REPLACE FUNCTION limit_reserve(p_key text, p_request text, p_at bigint, p_tokens bigint, p_usd double precision, p_expires bigint,
          p_rpm bigint, p_tpm bigint, p_concurrency bigint, p_budget double precision, p_period text, p_period_start bigint, p_window bigint)
        RETURNS TABLE (ok boolean, lim text, used double precision, held double precision, retry_after_ms bigint)
        LANGUAGE plpgsql AS $fn$
      DECLARE
        n bigint := 0; t bigint := 0; h bigint; k limit_keys%ROWTYPE; fresh boolean; dirty boolean := false;
        v_lim text; v_used double precision := 0; v_held double precision := 0; v_retry bigint;
        lo bigint := (p_at - p_window) / 1000 - 1; -- the first bucket that may hold an admission in the window
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        SELECT * INTO k FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO limit_keys (key_id) VALUES (p_key) ON CONFLICT DO NOTHING;
          SELECT * INTO k FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        END IF;
        IF p_budget IS NOT NULL AND k.period <> p_period THEN
          -- A new period (or another kind of budget): its settled spend, read once; a total also counts what was pruned.
          SELECT coalesce(sum(usd), 0) INTO k.spent FROM limit_claims WHERE key_id = p_key AND settled AND at >= p_period_start;
          IF p_period_start = 0 THEN k.spent := k.spent + k.folded; END IF;
          k.period := p_period; k.period_start := p_period_start;
          k.next_expiry := 0; -- and its holds, counted below
        END IF;
        IF k.next_expiry <= p_at THEN
          SELECT count(*), coalesce(sum(usd) FILTER (WHERE at >= k.period_start), 0), coalesce(min(expires_at), 9223372036854775807)
            INTO k.open_n, k.held_usd, k.next_expiry FROM limit_claims WHERE key_id = p_key AND NOT settled AND expires_at > p_at;
          k.swept_at := p_at;
          dirty := true;
        END IF;
        IF p_rpm IS NOT NULL OR p_tpm IS NOT NULL THEN
          SELECT coalesce(sum(w.requests), 0), coalesce(sum(w.tokens), 0) INTO n, t
            FROM limit_windows w WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window;
        END IF;
        IF p_concurrency IS NOT NULL AND k.open_n + 1 > p_concurrency THEN
          v_lim := 'concurrency'; v_used := k.open_n; v_retry := 1000;
        ELSIF p_rpm IS NOT NULL AND n + 1 > p_rpm THEN
          -- The request fits once enough of the oldest buckets have left the window.
          v_lim := 'rpm'; v_used := n;
          SELECT x.last_at + p_window - p_at INTO v_retry FROM (
            SELECT w.sec, w.last_at, sum(w.requests) OVER (ORDER BY w.sec) AS gone FROM limit_windows w
              WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window
          ) x WHERE x.gone >= n + 1 - p_rpm ORDER BY x.sec LIMIT 1;
        -- A request larger than the whole window's tokens runs alone: once nothing else is in the window.
        ELSIF p_tpm IS NOT NULL AND t + p_tokens > p_tpm AND NOT (p_tokens > p_tpm AND n = 0) THEN
          SELECT coalesce(sum(tokens), 0) INTO h FROM limit_claims
            WHERE key_id = p_key AND NOT settled AND expires_at > p_at AND at > p_at - p_window;
          h := least(h, t);
          v_lim := 'tpm'; v_used := t - h; v_held := h;
          IF p_tokens > p_tpm THEN
            SELECT max(w.last_at) + p_window - p_at INTO v_retry FROM limit_windows w
              WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window AND w.requests > 0;
          ELSE
            SELECT x.last_at + p_window - p_at INTO v_retry FROM (
              SELECT w.sec, w.last_at, sum(w.tokens) OVER (ORDER BY w.sec) AS gone FROM limit_windows w
                WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window
            ) x WHERE p_tpm - t + x.gone >= p_tokens ORDER BY x.sec LIMIT 1;
          END IF;
        ELSIF p_budget IS NOT NULL AND k.spent + k.held_usd + p_usd > p_budget + 1e-9 THEN -- a billionth of a dollar: sums of cents are not exact in binary
          v_lim := 'budget'; v_used := k.spent; v_held := k.held_usd;
        END IF;
        IF v_lim IS NULL THEN
          -- The claim first: a request id already taken (voided by limit_release) rolls the whole reservation back.
          INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at) VALUES (p_request, p_key, p_at, p_tokens, p_usd, p_expires);
          INSERT INTO limit_windows AS w (key_id, sec, requests, tokens, last_at) VALUES (p_key, p_at / 1000, 1, p_tokens, p_at)
            ON CONFLICT (key_id, sec) DO UPDATE SET requests = w.requests + 1, tokens = w.tokens + excluded.tokens, last_at = greatest(w.last_at, excluded.last_at)
            RETURNING (xmax = 0) INTO fresh;
          -- A new second: the key's buckets no window reaches any more go (a few seconds' margin for daemons' clocks).
          IF fresh THEN DELETE FROM limit_windows WHERE key_id = p_key AND sec < lo - 5; END IF;
          k.open_n := k.open_n + 1;
          IF p_at >= k.period_start THEN k.held_usd := k.held_usd + p_usd; END IF;
          k.next_expiry := least(k.next_expiry, p_expires);
          dirty := true;
        END IF;
        IF dirty THEN
          UPDATE limit_keys SET period = k.period, period_start = k.period_start, spent = k.spent, open_n = k.open_n,
              held_usd = k.held_usd, swept_at = k.swept_at, next_expiry = k.next_expiry
            WHERE key_id = p_key;
        END IF;
        IF v_lim IS NULL THEN
          RETURN QUERY SELECT true, NULL::text, CASE WHEN p_budget IS NULL THEN 0 ELSE k.spent END, CASE WHEN p_budget IS NULL THEN p_usd ELSE k.held_usd END, NULL::bigint;
        ELSE
          RETURN QUERY SELECT false, v_lim, v_used, v_held, v_retry;
        END IF;
      END $fn$;

      -- Reservations of one key under the same limits, decided in order in one call and one turn
      -- of the key's lock (a daemon sends the ones that arrived while its previous call was out):
      -- one round trip and one hand-over of the lock for the lot. Each is limit_reserve's, except
      -- that a request id already taken (voided by limit_release) refuses that one alone ('taken').
      CREATE FUNCTION limit_reserve_many(p_key text, p_request text[], p_at bigint[], p_tokens bigint[], p_usd double precision[], p_expires bigint[],
          p_rpm bigint, p_tpm bigint, p_concurrency bigint, p_budget double precision, p_period text[], p_period_start bigint[], p_window bigint)
        RETURNS TABLE (ok boolean, lim text, used double precision, held double precision, retry_after_ms bigint)
        LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        PERFORM 1 FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO limit_keys (key_id) VALUES (p_key) ON CONFLICT DO NOTHING;
          PERFORM 1 FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        END IF;
        FOR j IN 1 .. coalesce(array_length(p_request, 1), 0) LOOP
          IF EXISTS (SELECT 1 FROM limit_claims c WHERE c.request_id = p_request[j]) THEN
            RETURN QUERY SELECT false, 'taken'::text, 0::float8, 0::float8, NULL::bigint;
          ELSE
            RETURN QUERY SELECT * FROM limit_reserve(p_key, p_request[j], p_at[j], p_tokens[j], p_usd[j], p_expires[j],
              p_rpm, p_tpm, p_concurrency, p_budget, p_period[j], p_period_start[j], p_window);
          END IF;
        END LOOP;
      END $fn$;

      -- Settlements, many in one call (a daemon's last few milliseconds of them), each once by
      -- request id: an open claim is settled (its bucket's tokens become what it used, its spend
      -- counted in its key's period, its hold and its place in the key's concurrency released); a
      -- claim the store does not have (reserved on a daemon's share while the store was
      -- unreachable, or a reservation a server crash lost) is added settled, in its bucket; a claim
      -- already settled changes nothing. The keys' rows are locked first, in one order, as
      -- reservations lock them: no two callers deadlock.
      -- Committed as the server's synchronous_commit says (durably, by default): a settlement that
      -- returned is never lost, and its flush also makes durable every reservation committed before it.
      CREATE FUNCTION limit_settle_many(p_request text[], p_key text[], p_at bigint[], p_tokens bigint[], p_usd double precision[]) RETURNS integer
        LANGUAGE plpgsql AS $fn$
      DECLARE n integer;
      BEGIN
        -- (a speculative insert costs more than the look: only keys not there yet)
        INSERT INTO limit_keys (key_id) SELECT DISTINCT k FROM unnest(p_key) AS k WHERE NOT EXISTS (SELECT 1 FROM limit_keys x WHERE x.key_id = k) ORDER BY k
          ON CONFLICT DO NOTHING;
        PERFORM 1 FROM limit_keys WHERE key_id = ANY (p_key) ORDER BY key_id FOR UPDATE;
        WITH v AS (
          SELECT DISTINCT ON (r) r, k, a, t, u FROM unnest(p_request, p_key, p_at, p_tokens, p_usd) AS x(r, k, a, t, u) ORDER BY r
        ), old AS (
          SELECT c.request_id, c.tokens AS was, c.usd AS hold, v.t, v.u FROM limit_claims c JOIN v ON c.request_id = v.r WHERE NOT c.settled
        ), settled AS (
          UPDATE limit_claims c SET settled = true, tokens = old.t, usd = old.u FROM old WHERE c.request_id = old.request_id
            RETURNING c.key_id, c.at, old.t - old.was AS tokens, 0 AS requests, c.usd, true AS was_open, c.expires_at, old.hold
        ), added AS (
          INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at, settled)
            SELECT r, k, a, t, u, a, true FROM v WHERE NOT EXISTS (SELECT 1 FROM limit_claims c WHERE c.request_id = v.r)
            ON CONFLICT (request_id) DO NOTHING
            RETURNING key_id, at, tokens, 1 AS requests, usd, false AS was_open, expires_at, 0::float8 AS hold
        ), d AS (
          SELECT * FROM settled UNION ALL SELECT * FROM added
        ), windows AS (
          -- a voided claim (at 0) left its bucket when it was voided
          INSERT INTO limit_windows AS w (key_id, sec, requests, tokens, last_at)
            SELECT key_id, at / 1000, sum(requests), sum(tokens), max(at) FROM d WHERE at > 0 AND (requests > 0 OR tokens <> 0) GROUP BY key_id, at / 1000 ORDER BY 1, 2
            ON CONFLICT (key_id, sec) DO UPDATE SET requests = w.requests + excluded.requests, tokens = w.tokens + excluded.tokens, last_at = greatest(w.last_at, excluded.last_at)
        ), keys AS (
          -- an open claim is in the counters unless voided or swept out as expired
          UPDATE limit_keys k SET spent = k.spent + x.spent, open_n = greatest(0, k.open_n - x.n), held_usd = greatest(0, k.held_usd - x.held) FROM (
            SELECT kk.key_id,
                coalesce(sum(d.usd) FILTER (WHERE kk.period <> '' AND d.at >= kk.period_start), 0) AS spent,
                count(*) FILTER (WHERE d.was_open AND d.at <> 0 AND d.expires_at > kk.swept_at) AS n,
                coalesce(sum(d.hold) FILTER (WHERE d.was_open AND d.at <> 0 AND d.expires_at > kk.swept_at AND d.at >= kk.period_start), 0) AS held
              FROM d JOIN limit_keys kk ON kk.key_id = d.key_id GROUP BY kk.key_id
          ) x WHERE k.key_id = x.key_id
        )
        SELECT count(*) INTO n FROM d;
        RETURN n;
      END $fn$;
      DROP FUNCTION limit_record(text, text, bigint, bigint, double precision);
      DROP FUNCTION limit_settle(text, bigint, double precision);

      -- Voids the claims of requests nothing will settle (team-store.ts): each leaves its bucket
      -- and its key's counters and becomes a claim outside every window, period and hold
      -- (admitted at 0, expired at 0); a request id not seen yet is taken, so its reservation
      -- arriving later is rolled back.
      CREATE FUNCTION limit_release(p_request text[], p_key text[]) RETURNS void LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO limit_keys (key_id) SELECT DISTINCT k FROM unnest(p_key) AS k ORDER BY k ON CONFLICT DO NOTHING;
        PERFORM 1 FROM limit_keys WHERE key_id = ANY (p_key) ORDER BY key_id FOR UPDATE;
        WITH v AS (
          SELECT DISTINCT ON (r) r, k FROM unnest(p_request, p_key) AS x(r, k) ORDER BY r
        ), old AS (
          SELECT c.request_id, c.key_id, c.at, c.tokens, c.usd, c.expires_at FROM limit_claims c JOIN v ON c.request_id = v.r WHERE NOT c.settled AND c.at <> 0
        ), voided AS (
          UPDATE limit_claims c SET at = 0, expires_at = 0 FROM old WHERE c.request_id = old.request_id
        ), taken AS (
          INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at)
            SELECT r, k, 0, 0, 0, 0 FROM v WHERE NOT EXISTS (SELECT 1 FROM limit_claims c WHERE c.request_id = v.r)
            ON CONFLICT (request_id) DO NOTHING
        ), keys AS (
          UPDATE limit_keys k SET open_n = greatest(0, k.open_n - x.n), held_usd = greatest(0, k.held_usd - x.held) FROM (
            SELECT kk.key_id, count(*) FILTER (WHERE old.expires_at > kk.swept_at) AS n,
                coalesce(sum(old.usd) FILTER (WHERE old.expires_at > kk.swept_at AND old.at >= kk.period_start), 0) AS held
              FROM old JOIN limit_keys kk ON kk.key_id = old.key_id GROUP BY kk.key_id
          ) x WHERE k.key_id = x.key_id
        )
        UPDATE limit_windows w SET requests = w.requests - x.n, tokens = w.tokens - x.t
          FROM (SELECT key_id, at / 1000 AS sec, count(*) AS n, sum(tokens) AS t FROM old GROUP BY 1, 2) x
          WHERE w.key_id = x.key_id AND w.sec = x.sec;
      END $fn$;

      -- Version 6's, and the buckets of keys idle since p_before.
      CREATE OR REPLACE FUNCTION limit_prune(p_before bigint) RETURNS bigint LANGUAGE plpgsql AS $fn$
      DECLARE n bigint;
      BEGIN
        DELETE FROM limit_windows WHERE last_at < p_before;
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
  {
    version: 8,
    description: 'leases: a daemon takes a share of a busy key\'s headroom in one call, admits against it locally and writes back what it used',
    sql: `
      -- A lease (pg-store.ts) is a claim row (request_id 'lease:<uuid>') standing for many
      -- requests: counted at once in every window, hold and counter like a request's claim, and
      -- written back in absolute values. A request's claim keeps the defaults (1 request, 1 slot).
      --   requests, tokens: what it counts in its bucket (the second of admit_until, whose last_at
      --     it raises to admit_until: the requests admitted under it count a whole window from then);
      --   usd: its requests' settled spend (in the budget's spend while it is open too);
      --   held: the USD its requests in flight and its unused part hold; slots: its place in the
      --     key's concurrency; spare_*: the unused part of each, in those values (standing() leaves
      --     it out of what it reports as used);
      --   closed: admission under it ended (its unused part given back); version: of the last
      --     write-back applied (an older one is ignored).
      ALTER TABLE limit_claims ADD COLUMN requests bigint NOT NULL DEFAULT 1,
        ADD COLUMN slots bigint NOT NULL DEFAULT 1,
        ADD COLUMN admit_until bigint,
        ADD COLUMN held double precision NOT NULL DEFAULT 0,
        ADD COLUMN spare_requests bigint NOT NULL DEFAULT 0,
        ADD COLUMN spare_tokens bigint NOT NULL DEFAULT 0,
        ADD COLUMN spare_usd double precision NOT NULL DEFAULT 0,
        ADD COLUMN spare_slots bigint NOT NULL DEFAULT 0,
        ADD COLUMN closed boolean NOT NULL DEFAULT false,
        ADD COLUMN version bigint NOT NULL DEFAULT 0;

      -- The start of a key's turn, as version 7's limit_reserve began it: the key's row locked,
      -- its budget period's spend read again when the period changed, its concurrency and holds
      -- counted again from the open claims once one may have expired unsettled; leases counted by
      -- their slots, their holds and (open or not) their settled spend.
      CREATE FUNCTION limit_key_turn(p_key text, p_at bigint, p_budget double precision, p_period text, p_period_start bigint)
        RETURNS limit_keys LANGUAGE plpgsql AS $fn$
      DECLARE k limit_keys%ROWTYPE; dirty boolean := false;
      BEGIN
        SELECT * INTO k FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO limit_keys (key_id) VALUES (p_key) ON CONFLICT DO NOTHING;
          SELECT * INTO k FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        END IF;
        IF p_budget IS NOT NULL AND k.period <> p_period THEN
          SELECT coalesce(sum(usd), 0) INTO k.spent FROM limit_claims
            WHERE key_id = p_key AND (settled OR admit_until IS NOT NULL) AND at >= p_period_start;
          IF p_period_start = 0 THEN k.spent := k.spent + k.folded; END IF;
          k.period := p_period; k.period_start := p_period_start;
          k.next_expiry := 0;
        END IF;
        IF k.next_expiry <= p_at THEN
          SELECT coalesce(sum(slots), 0)::bigint, coalesce(sum(CASE WHEN admit_until IS NULL THEN usd ELSE held END) FILTER (WHERE at >= k.period_start), 0),
              coalesce(min(expires_at), 9223372036854775807)
            INTO k.open_n, k.held_usd, k.next_expiry FROM limit_claims WHERE key_id = p_key AND NOT settled AND expires_at > p_at;
          k.swept_at := p_at;
          dirty := true;
        END IF;
        IF dirty THEN
          UPDATE limit_keys SET period = k.period, period_start = k.period_start, spent = k.spent, open_n = k.open_n,
              held_usd = k.held_usd, swept_at = k.swept_at, next_expiry = k.next_expiry
            WHERE key_id = p_key;
        END IF;
        RETURN k;
      END $fn$;

      -- Version 7's, starting its turn with limit_key_turn, and: a refusal of rpm, tpm or
      -- concurrency while other leases of the key are open says to retry no later than the first
      -- of them closes (their unused part comes back then).
      CREATE OR REPLACE FUNCTION limit_reserve(p_key text, p_request text, p_at bigint, p_tokens bigint, p_usd double precision, p_expires bigint,
          p_rpm bigint, p_tpm bigint, p_concurrency bigint, p_budget double precision, p_period text, p_period_start bigint, p_window bigint)
        RETURNS TABLE (ok boolean, lim text, used double precision, held double precision, retry_after_ms bigint)
        LANGUAGE plpgsql AS $fn$
      DECLARE
        n bigint := 0; t bigint := 0; h bigint; k limit_keys%ROWTYPE; fresh boolean;
        v_lim text; v_used double precision := 0; v_held double precision := 0; v_retry bigint; v_open bigint;
        lo bigint := (p_at - p_window) / 1000 - 1; -- the first bucket that may hold an admission in the window
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        SELECT * INTO k FROM limit_key_turn(p_key, p_at, p_budget, p_period, p_period_start);
        IF p_rpm IS NOT NULL OR p_tpm IS NOT NULL THEN
          SELECT coalesce(sum(w.requests), 0), coalesce(sum(w.tokens), 0) INTO n, t
            FROM limit_windows w WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window;
        END IF;
        IF p_concurrency IS NOT NULL AND k.open_n + 1 > p_concurrency THEN
          v_lim := 'concurrency'; v_used := k.open_n; v_retry := 1000;
        ELSIF p_rpm IS NOT NULL AND n + 1 > p_rpm THEN
          -- The request fits once enough of the oldest buckets have left the window.
          v_lim := 'rpm'; v_used := n;
          SELECT x.last_at + p_window - p_at INTO v_retry FROM (
            SELECT w.sec, w.last_at, sum(w.requests) OVER (ORDER BY w.sec) AS gone FROM limit_windows w
              WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window
          ) x WHERE x.gone >= n + 1 - p_rpm ORDER BY x.sec LIMIT 1;
        -- A request larger than the whole window's tokens runs alone: once nothing else is in the window.
        ELSIF p_tpm IS NOT NULL AND t + p_tokens > p_tpm AND NOT (p_tokens > p_tpm AND n = 0) THEN
          SELECT coalesce(sum(tokens), 0) INTO h FROM limit_claims
            WHERE key_id = p_key AND NOT settled AND expires_at > p_at AND at > p_at - p_window;
          h := least(h, t);
          v_lim := 'tpm'; v_used := t - h; v_held := h;
          IF p_tokens > p_tpm THEN
            SELECT max(w.last_at) + p_window - p_at INTO v_retry FROM limit_windows w
              WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window AND w.requests > 0;
          ELSE
            SELECT x.last_at + p_window - p_at INTO v_retry FROM (
              SELECT w.sec, w.last_at, sum(w.tokens) OVER (ORDER BY w.sec) AS gone FROM limit_windows w
                WHERE w.key_id = p_key AND w.sec >= lo AND w.last_at > p_at - p_window
            ) x WHERE p_tpm - t + x.gone >= p_tokens ORDER BY x.sec LIMIT 1;
          END IF;
        ELSIF p_budget IS NOT NULL AND k.spent + k.held_usd + p_usd > p_budget + 1e-9 THEN -- a billionth of a dollar: sums of cents are not exact in binary
          v_lim := 'budget'; v_used := k.spent; v_held := k.held_usd;
        END IF;
        IF v_lim IN ('concurrency', 'rpm', 'tpm') THEN
          SELECT min(c.admit_until) - p_at INTO v_open FROM limit_claims c
            WHERE c.key_id = p_key AND NOT c.settled AND NOT c.closed AND c.admit_until > p_at;
          IF v_open IS NOT NULL THEN v_retry := least(coalesce(v_retry, v_open), v_open); END IF;
        ELSIF v_lim = 'budget' THEN
          -- Refused while open leases hold USD they may not use (granted before the budget came within
          -- 100 requests of its end): it may fit once they close, so say when, instead of "never".
          SELECT min(c.admit_until) - p_at INTO v_open FROM limit_claims c
            WHERE c.key_id = p_key AND NOT c.settled AND NOT c.closed AND c.admit_until > p_at
            HAVING k.spent + k.held_usd - sum(c.spare_usd) + p_usd <= p_budget + 1e-9;
          v_retry := v_open;
        END IF;
        IF v_lim IS NULL THEN
          -- The claim first: a request id already taken (voided by limit_release) rolls the whole reservation back.
          INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at) VALUES (p_request, p_key, p_at, p_tokens, p_usd, p_expires);
          INSERT INTO limit_windows AS w (key_id, sec, requests, tokens, last_at) VALUES (p_key, p_at / 1000, 1, p_tokens, p_at)
            ON CONFLICT (key_id, sec) DO UPDATE SET requests = w.requests + 1, tokens = w.tokens + excluded.tokens, last_at = greatest(w.last_at, excluded.last_at)
            RETURNING (xmax = 0) INTO fresh;
          -- A new second: the key's buckets no window reaches any more go (a few seconds' margin for daemons' clocks).
          IF fresh THEN DELETE FROM limit_windows WHERE key_id = p_key AND sec < lo - 5; END IF;
          k.open_n := k.open_n + 1;
          IF p_at >= k.period_start THEN k.held_usd := k.held_usd + p_usd; END IF;
          k.next_expiry := least(k.next_expiry, p_expires);
          UPDATE limit_keys SET open_n = k.open_n, held_usd = k.held_usd, next_expiry = k.next_expiry WHERE key_id = p_key;
          RETURN QUERY SELECT true, NULL::text, CASE WHEN p_budget IS NULL THEN 0 ELSE k.spent END, CASE WHEN p_budget IS NULL THEN p_usd ELSE k.held_usd END, NULL::bigint;
        ELSE
          RETURN QUERY SELECT false, v_lim, v_used, v_held, v_retry;
        END IF;
      END $fn$;

      -- Leases' write-backs, in absolute values (p_leases: a JSON array of them): each applies the
      -- difference from its row to its bucket and its key's counters and spend, unless the row has
      -- that version or a newer one already (a write-back resent or overtaken changes nothing), or
      -- was voided (limit_release). The last one, once nothing admitted under the lease is in
      -- flight, makes it a settled claim of what its requests used. A lease the store lost (a server
      -- crash after its grant) is added as written. The caller holds the keys' rows locked.
      CREATE FUNCTION limit_lease_write(p_leases jsonb) RETURNS void LANGUAGE plpgsql AS $fn$
      DECLARE r record; c limit_claims%ROWTYPE;
      BEGIN
        FOR r IN SELECT * FROM jsonb_to_recordset(p_leases) AS x(id text, key text, at bigint, until bigint, expires bigint, v bigint,
            requests bigint, tokens bigint, usd double precision, held double precision, slots bigint,
            spare_requests bigint, spare_tokens bigint, spare_usd double precision, spare_slots bigint, closed boolean, settled boolean) ORDER BY x.id LOOP
          SELECT * INTO c FROM limit_claims WHERE request_id = r.id FOR UPDATE;
          IF NOT FOUND THEN
            c := ROW(r.id, r.key, r.at, 0, 0, r.expires, false, 0, 0, r.until, 0, 0, 0, 0, 0, false, 0)::limit_claims;
            INSERT INTO limit_claims SELECT c.*;
          END IF;
          CONTINUE WHEN c.admit_until IS NULL OR c.at = 0 OR c.settled OR c.version >= r.v;
          UPDATE limit_claims SET requests = r.requests, tokens = r.tokens, usd = r.usd, held = r.held, slots = r.slots,
              spare_requests = r.spare_requests, spare_tokens = r.spare_tokens, spare_usd = r.spare_usd, spare_slots = r.spare_slots,
              closed = r.closed, settled = r.settled, version = r.v
            WHERE request_id = r.id;
          INSERT INTO limit_windows AS w (key_id, sec, requests, tokens, last_at) VALUES (c.key_id, c.admit_until / 1000, r.requests - c.requests, r.tokens - c.tokens, c.admit_until)
            ON CONFLICT (key_id, sec) DO UPDATE SET requests = w.requests + excluded.requests, tokens = w.tokens + excluded.tokens, last_at = greatest(w.last_at, excluded.last_at);
          UPDATE limit_keys k SET
              spent = k.spent + CASE WHEN k.period <> '' AND c.at >= k.period_start THEN r.usd - c.usd ELSE 0 END,
              open_n = CASE WHEN c.expires_at > k.swept_at THEN greatest(0, k.open_n + r.slots - c.slots) ELSE k.open_n END,
              held_usd = CASE WHEN c.expires_at > k.swept_at AND c.at >= k.period_start THEN greatest(0, k.held_usd + r.held - c.held) ELSE k.held_usd END,
              next_expiry = least(k.next_expiry, c.expires_at)
            WHERE k.key_id = c.key_id;
        END LOOP;
      END $fn$;

      -- Reservations of one key, as the version 7 call with the same name, which may also take a
      -- lease: p_ask > 1 asks for one of about that many requests (id p_lease, admitting from the
      -- batch's earliest admission for p_lease_ms). Under the key's lock, the daemon's leases of
      -- the key not written since they changed (its previous one closing) are written first
      -- (p_close, limit_lease_write: what they did not use comes back), then
      -- each limit grants at most ⌊its headroom ÷ (4 × the daemons alive)⌋ of the ask (tokens and
      -- USD in the batch's largest worst case); less than 2 grants none. A granted lease is counted
      -- at once (its requests and tokens in its bucket, its slots and USD in the key's counters)
      -- and admits the batch's requests it has room for, in order ('lease'); every other one is
      -- decided alone by limit_reserve. Each row also says the lease granted, if any.
      CREATE FUNCTION limit_reserve_many(p_key text, p_request text[], p_at bigint[], p_tokens bigint[], p_usd double precision[], p_expires bigint[],
          p_rpm bigint, p_tpm bigint, p_concurrency bigint, p_budget double precision, p_period text[], p_period_start bigint[], p_window bigint,
          p_lease text, p_ask bigint, p_lease_ms bigint, p_close jsonb)
        RETURNS TABLE (ok boolean, lim text, used double precision, held double precision, retry_after_ms bigint,
          lease_n bigint, lease_tokens bigint, lease_usd double precision, lease_slots bigint, lease_at bigint, lease_expires bigint)
        LANGUAGE plpgsql AS $fn$
      DECLARE
        m integer := coalesce(array_length(p_request, 1), 0); k limit_keys%ROWTYPE;
        f integer := 1; g bigint; each_t bigint := 1; each_u double precision := 0; life bigint := 0;
        n bigint; t bigint; q bigint; got bigint := 0; s bigint; until_at bigint; ends bigint;
        lt bigint; lu double precision; a_n bigint := 0; a_t bigint := 0; a_u double precision := 0; mine boolean[];
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        PERFORM 1 FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO limit_keys (key_id) VALUES (p_key) ON CONFLICT DO NOTHING;
          PERFORM 1 FROM limit_keys WHERE key_id = p_key FOR UPDATE;
        END IF;
        IF p_close IS NOT NULL THEN PERFORM limit_lease_write(p_close); END IF;
        IF p_ask >= 2 AND m > 0 THEN
          FOR j IN 1 .. m LOOP
            IF p_at[j] < p_at[f] THEN f := j; END IF;
            each_t := greatest(each_t, p_tokens[j]);
            each_u := greatest(each_u, p_usd[j]);
            life := greatest(life, p_expires[j] - p_at[j]);
          END LOOP;
          g := p_at[f];
          SELECT * INTO k FROM limit_key_turn(p_key, g, p_budget, p_period[f], p_period_start[f]);
          SELECT coalesce(sum(w.requests), 0), coalesce(sum(w.tokens), 0) INTO n, t
            FROM limit_windows w WHERE w.key_id = p_key AND w.sec >= (g - p_window) / 1000 - 1 AND w.last_at > g - p_window;
          SELECT 4 * greatest(count(*), 1) INTO q FROM gateway_daemons WHERE seen_at > g - 60000;
          got := p_ask;
          IF p_rpm IS NOT NULL THEN got := least(got, floor((p_rpm - n)::float8 / q)::bigint); END IF;
          IF p_tpm IS NOT NULL THEN got := least(got, floor((p_tpm - t)::float8 / q / each_t)::bigint); END IF;
          IF p_budget IS NOT NULL AND each_u > 0 THEN got := least(got, floor((p_budget - k.spent - k.held_usd) / q / each_u)::bigint); END IF;
          -- Nor a budget with room for fewer than 100 of these requests: a budget's refusal holds for the
          -- rest of its period, so near its end every request is decided exactly, with no USD sitting
          -- unused in another daemon's lease.
          IF p_budget IS NOT NULL AND p_budget - k.spent - k.held_usd < 100 * each_u THEN got := 0; END IF;
          IF p_concurrency IS NOT NULL THEN
            s := least(got, floor((p_concurrency - k.open_n)::float8 / q)::bigint);
            IF s < 2 THEN got := 0; END IF;
          END IF;
        END IF;
        IF got >= 2 THEN
          until_at := g + p_lease_ms; ends := until_at + life; s := coalesce(s, 0);
          lt := got * each_t; lu := CASE WHEN p_budget IS NULL THEN 0 ELSE got * each_u END;
          -- The batch's requests it has room for, in order.
          mine := array_fill(false, ARRAY[m]);
          FOR j IN 1 .. m LOOP
            IF a_n < got AND (p_concurrency IS NULL OR a_n < s) AND p_at[j] >= g AND p_at[j] < until_at AND p_period[j] = p_period[f]
                AND p_expires[j] <= ends AND a_t + p_tokens[j] <= lt AND (p_budget IS NULL OR a_u + p_usd[j] <= lu + 1e-9)
                AND NOT EXISTS (SELECT 1 FROM limit_claims c WHERE c.request_id = p_request[j]) THEN
              mine[j] := true;
              a_n := a_n + 1; a_t := a_t + p_tokens[j]; a_u := a_u + CASE WHEN p_budget IS NULL THEN 0 ELSE p_usd[j] END;
            END IF;
          END LOOP;
          INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at, requests, slots, admit_until, held,
              spare_requests, spare_tokens, spare_usd, spare_slots)
            VALUES (p_lease, p_key, g, lt, 0, ends, got, greatest(s, a_n), until_at, lu, got - a_n, lt - a_t, lu - a_u, greatest(s, a_n) - a_n);
          INSERT INTO limit_windows AS w (key_id, sec, requests, tokens, last_at) VALUES (p_key, until_at / 1000, got, lt, until_at)
            ON CONFLICT (key_id, sec) DO UPDATE SET requests = w.requests + excluded.requests, tokens = w.tokens + excluded.tokens, last_at = greatest(w.last_at, excluded.last_at);
          k.open_n := k.open_n + greatest(s, a_n);
          IF g >= k.period_start THEN k.held_usd := k.held_usd + lu; END IF;
          k.next_expiry := least(k.next_expiry, ends);
          UPDATE limit_keys SET open_n = k.open_n, held_usd = k.held_usd, next_expiry = k.next_expiry WHERE key_id = p_key;
        ELSE
          got := NULL;
        END IF;
        FOR j IN 1 .. m LOOP
          IF got IS NOT NULL AND mine[j] THEN
            RETURN QUERY SELECT true, 'lease'::text, k.spent, k.held_usd, NULL::bigint, got, lt, lu, s, g, ends;
          ELSIF EXISTS (SELECT 1 FROM limit_claims c WHERE c.request_id = p_request[j]) THEN
            RETURN QUERY SELECT false, 'taken'::text, 0::float8, 0::float8, NULL::bigint, got, lt, lu, s, g, ends;
          ELSE
            RETURN QUERY SELECT r.*, got, lt, lu, s, g, ends FROM limit_reserve(p_key, p_request[j], p_at[j], p_tokens[j], p_usd[j], p_expires[j],
              p_rpm, p_tpm, p_concurrency, p_budget, p_period[j], p_period_start[j], p_window) r;
          END IF;
        END LOOP;
      END $fn$;

      -- Settlements as the version 7 call with the same name, and leases' write-backs
      -- (limit_lease_write) in the same call: every key's row locked first, in one order.
      CREATE FUNCTION limit_settle_many(p_request text[], p_key text[], p_at bigint[], p_tokens bigint[], p_usd double precision[], p_leases jsonb) RETURNS integer
        LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM 1 FROM limit_keys WHERE key_id = ANY (p_key || ARRAY(SELECT x->>'key' FROM jsonb_array_elements(p_leases) x)) ORDER BY key_id FOR UPDATE;
        PERFORM limit_lease_write(p_leases);
        IF coalesce(array_length(p_request, 1), 0) = 0 THEN RETURN 0; END IF;
        RETURN limit_settle_many(p_request, p_key, p_at, p_tokens, p_usd);
      END $fn$;

      -- Version 7's, for leases too: a lease voided leaves its bucket with all it counted there,
      -- its key's counters with its slots and holds, and its budget's spend with what it settled
      -- (its row then counts nothing).
      CREATE OR REPLACE FUNCTION limit_release(p_request text[], p_key text[]) RETURNS void LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO limit_keys (key_id) SELECT DISTINCT k FROM unnest(p_key) AS k ORDER BY k ON CONFLICT DO NOTHING;
        PERFORM 1 FROM limit_keys WHERE key_id = ANY (p_key) ORDER BY key_id FOR UPDATE;
        WITH v AS (
          SELECT DISTINCT ON (r) r, k FROM unnest(p_request, p_key) AS x(r, k) ORDER BY r
        ), old AS (
          SELECT c.request_id, c.key_id, c.at, c.tokens, c.usd, c.held, c.requests, c.slots, c.admit_until, c.expires_at
            FROM limit_claims c JOIN v ON c.request_id = v.r WHERE NOT c.settled AND c.at <> 0
        ), voided AS (
          UPDATE limit_claims c SET at = 0, expires_at = 0, closed = true, held = 0,
              requests = CASE WHEN c.admit_until IS NULL THEN c.requests ELSE 0 END, slots = CASE WHEN c.admit_until IS NULL THEN c.slots ELSE 0 END,
              tokens = CASE WHEN c.admit_until IS NULL THEN c.tokens ELSE 0 END, usd = CASE WHEN c.admit_until IS NULL THEN c.usd ELSE 0 END
            FROM old WHERE c.request_id = old.request_id
        ), taken AS (
          INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at)
            SELECT r, k, 0, 0, 0, 0 FROM v WHERE NOT EXISTS (SELECT 1 FROM limit_claims c WHERE c.request_id = v.r)
            ON CONFLICT (request_id) DO NOTHING
        ), keys AS (
          UPDATE limit_keys k SET open_n = greatest(0, k.open_n - x.n), held_usd = greatest(0, k.held_usd - x.held), spent = k.spent - x.spent FROM (
            SELECT kk.key_id, coalesce(sum(old.slots) FILTER (WHERE old.expires_at > kk.swept_at), 0) AS n,
                coalesce(sum(CASE WHEN old.admit_until IS NULL THEN old.usd ELSE old.held END) FILTER (WHERE old.expires_at > kk.swept_at AND old.at >= kk.period_start), 0) AS held,
                coalesce(sum(old.usd) FILTER (WHERE old.admit_until IS NOT NULL AND kk.period <> '' AND old.at >= kk.period_start), 0) AS spent
              FROM old JOIN limit_keys kk ON kk.key_id = old.key_id GROUP BY kk.key_id
          ) x WHERE k.key_id = x.key_id
        )
        UPDATE limit_windows w SET requests = w.requests - x.n, tokens = w.tokens - x.t
          FROM (SELECT key_id, coalesce(admit_until, at) / 1000 AS sec, sum(requests) AS n, sum(tokens) AS t FROM old GROUP BY 1, 2) x
          WHERE w.key_id = x.key_id AND w.sec = x.sec;
      END $fn$;

      -- Version 7's, folding a lease's settled spend into its key's total too.
      CREATE OR REPLACE FUNCTION limit_prune(p_before bigint) RETURNS bigint LANGUAGE plpgsql AS $fn$
      DECLARE n bigint;
      BEGIN
        DELETE FROM limit_windows WHERE last_at < p_before;
        WITH gone AS (
          DELETE FROM limit_claims WHERE at < p_before AND (settled OR expires_at < p_before)
            RETURNING key_id, usd, settled OR admit_until IS NOT NULL AS spent
        ), sums AS (
          SELECT key_id, coalesce(sum(usd) FILTER (WHERE spent), 0) AS usd, count(*) AS n FROM gone GROUP BY key_id
        ), folded AS (
          INSERT INTO limit_keys (key_id, folded) SELECT key_id, usd FROM sums
            ON CONFLICT (key_id) DO UPDATE SET folded = limit_keys.folded + excluded.folded RETURNING 1
        )
        SELECT coalesce(sum(sums.n), 0) INTO n FROM sums;
        RETURN n;
      END $fn$;
    `,
  },
  {
    version: 9,
    description: 'the usage push reads its rows as json (parsed once, as they are inserted) instead of jsonb',
    sql: `
      -- Version 3's usage_push, taking json: PostgreSQL then reads each row straight from the text
      -- instead of first building the binary jsonb of the whole batch, a fifth of a row's cost
      -- (about 3 of 16 µs measured with 1,000-row pushes). The jsonb one stays for daemons of
      -- version 8 still running while this one upgrades the schema.
      CREATE FUNCTION usage_push(p_rows json) RETURNS integer LANGUAGE plpgsql AS $fn$
      DECLARE n integer;
      BEGIN
        PERFORM pg_advisory_xact_lock(1970495847); -- "usag"
        INSERT INTO usage_requests (request_id, seq, daemon, started_at, key_id, key_name, mode, provider, model, requested_model,
            method, path, stream, status, error_code, error_message, duration_ms, ttfb_ms, request_bytes, output_bytes,
            input_tokens, output_tokens, cached_tokens, cache_write_tokens, cache_write_1h_tokens, reasoning_tokens,
            cost, cache_saved, session, route, waited_ms, key_label, limit_kind)
          SELECT r."requestId", nextval('usage_requests_seq'), r.daemon, r."startedAt", r."keyId", r."keyName", r.mode, r.provider, r.model, r."requestedModel",
            r.method, r.path, r.stream, r.status, r."errorCode", r."errorMessage", r."durationMs", r."ttfbMs", r."requestBytes", r."outputBytes",
            r."inputTokens", r."outputTokens", r."cachedTokens", r."cacheWriteTokens", r."cacheWrite1hTokens", r."reasoningTokens",
            r.cost, r."cacheSaved", r.session, r.route, r."waitedMs", r."keyLabel", r."limit"
          FROM json_to_recordset(p_rows) AS r("requestId" text, daemon text, "startedAt" bigint, "keyId" text, "keyName" text, mode text,
            provider text, model text, "requestedModel" text, method text, path text, stream boolean, status integer, "errorCode" text,
            "errorMessage" text, "durationMs" double precision, "ttfbMs" double precision, "requestBytes" bigint, "outputBytes" bigint,
            "inputTokens" bigint, "outputTokens" bigint, "cachedTokens" bigint, "cacheWriteTokens" bigint, "cacheWrite1hTokens" bigint,
            "reasoningTokens" bigint, cost double precision, "cacheSaved" double precision, session text, route text,
            "waitedMs" double precision, "keyLabel" text, "limit" text)
        ON CONFLICT (request_id) DO NOTHING;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN PERFORM pg_notify('usage_rows', ''); END IF;
        RETURN n;
      END $fn$;
    `,
  },
  {
    version: 10,
    description: 'the usage history a laptop kept only as rollups, copied by store migrate for every daemon to add to its own',
    sql: `
      -- A laptop's raw rows go to usage_requests; what its retention had already pruned lives on only
      -- in its rollups, and those parts come here, one row per rollup row (usage.db's table and
      -- columns). Numbered in commit order (written under usage_push's lock), read by every other
      -- daemon with a cursor as the rows are. A second copy of the same part adds nothing.
      CREATE SEQUENCE usage_rollups_seq;
      CREATE TABLE usage_rollups (
        seq bigint PRIMARY KEY,
        daemon text NOT NULL,  -- whose history it is; that daemon has it already
        kind text NOT NULL,    -- the rollup table
        part text NOT NULL,    -- the row's period and dimensions, as JSON
        row json NOT NULL,
        UNIQUE (daemon, kind, part)
      );
    `,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

const newerSchema = (current: number, target: number) => `the store has schema version ${current}, newer than this gateway understands (${target}); upgrade model-gateway`;

/**
 * Brings the database to the newest version; throws a one-line reason when it is newer than this
 * gateway. `upgrade: false` (the CLI) creates the schema in a database that has none, but refuses
 * to upgrade one that is older: a newer CLI on a box where no daemon runs would otherwise upgrade
 * the team's schema, and the team's older daemons would then refuse to start again.
 */
export async function migratePg(pool: Pool, migrations: readonly PgMigration[] = PG_MIGRATIONS, o: { upgrade?: boolean } = {}): Promise<number[]> {
  const target = migrations[migrations.length - 1]?.version ?? 0;
  const client: PoolClient = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS gateway_schema (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      const { rows } = await client.query<{ version: number }>('SELECT version FROM gateway_schema');
      // Each migration missing is applied, not only those above the highest: versions are
      // independent parts of the schema, and a database made by a build without one still gets it.
      const done = new Set(rows.map((r) => r.version));
      const current = Math.max(0, ...done);
      if (current > target) {
        throw new Error(newerSchema(current, target));
      }
      if (o.upgrade === false && done.size > 0 && migrations.some((m) => !done.has(m.version))) {
        throw new Error(`its schema is version ${current}, older than this gateway's (${target}): start a daemon of this version on it first, or run gateway store migrate (either migrates the schema; this command never does)`);
      }
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
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
