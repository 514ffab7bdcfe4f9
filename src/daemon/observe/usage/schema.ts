// The usage database's schema, versioned with `PRAGMA user_version`. Each migration runs in its
// own transaction together with the version bump, so a crash mid-migration leaves the previous
// version intact. A database written by a newer gateway is refused rather than guessed at.
import type { Database } from '../../store/sqlite.js';

export interface Migration {
  version: number;
  description: string;
  up(db: Database): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'requests, hourly rollups, latency histograms',
    up(db) {
      db.exec(`
        CREATE TABLE requests (
          id INTEGER PRIMARY KEY,
          request_id TEXT NOT NULL,
          started_at INTEGER NOT NULL,
          key_id TEXT NOT NULL,
          key_name TEXT NOT NULL,
          mode TEXT NOT NULL,
          provider TEXT NOT NULL,
          model TEXT,
          method TEXT NOT NULL,
          path TEXT NOT NULL,
          stream INTEGER NOT NULL,
          status INTEGER NOT NULL,
          error_code TEXT,
          error_message TEXT,
          duration_ms REAL NOT NULL,
          ttfb_ms REAL,
          request_bytes INTEGER NOT NULL,
          output_bytes INTEGER NOT NULL,
          input_tokens INTEGER,
          output_tokens INTEGER,
          cached_tokens INTEGER,
          cache_write_tokens INTEGER,
          reasoning_tokens INTEGER,
          cost REAL
        );
        CREATE INDEX requests_started ON requests (started_at);
        CREATE INDEX requests_key ON requests (key_id, started_at);

        CREATE TABLE hourly (
          hour INTEGER NOT NULL,
          key_id TEXT NOT NULL,
          provider TEXT NOT NULL,
          model TEXT NOT NULL,
          key_name TEXT NOT NULL,
          requests INTEGER NOT NULL,
          errors INTEGER NOT NULL,
          input_tokens INTEGER NOT NULL,
          output_tokens INTEGER NOT NULL,
          cached_tokens INTEGER NOT NULL,
          cache_write_tokens INTEGER NOT NULL,
          reasoning_tokens INTEGER NOT NULL,
          cost REAL NOT NULL,
          unpriced INTEGER NOT NULL,
          duration_ms REAL NOT NULL,
          PRIMARY KEY (hour, key_id, provider, model)
        ) WITHOUT ROWID;

        CREATE TABLE latency_hourly (
          hour INTEGER NOT NULL,
          provider TEXT NOT NULL,
          metric TEXT NOT NULL,
          bucket INTEGER NOT NULL,
          count INTEGER NOT NULL,
          PRIMARY KEY (hour, provider, metric, bucket)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    version: 2,
    description: 'per-hour totals and daily rollups, so a year renders from a few thousand rows',
    up(db) {
      const sums = `requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
          cached_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
          cost REAL NOT NULL, unpriced INTEGER NOT NULL, duration_ms REAL NOT NULL`;
      const sum = `SUM(requests), SUM(errors), SUM(input_tokens), SUM(output_tokens), SUM(cached_tokens), SUM(cache_write_tokens),
          SUM(reasoning_tokens), SUM(cost), SUM(unpriced), SUM(duration_ms)`;
      db.exec(`
        CREATE TABLE hourly_totals (hour INTEGER PRIMARY KEY, ${sums});
        CREATE TABLE daily (
          day INTEGER NOT NULL, key_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, key_name TEXT NOT NULL, ${sums},
          PRIMARY KEY (day, key_id, provider, model)
        ) WITHOUT ROWID;
        -- one JSON histogram ({"bucket": count}) per day, provider and metric: a year is ~2,000 rows
        CREATE TABLE latency_daily (
          day INTEGER NOT NULL, provider TEXT NOT NULL, metric TEXT NOT NULL, hist TEXT NOT NULL,
          PRIMARY KEY (day, provider, metric)
        ) WITHOUT ROWID;
        INSERT INTO hourly_totals SELECT hour, ${sum} FROM hourly GROUP BY hour;
        INSERT INTO daily SELECT (hour / 86400000) * 86400000, key_id, provider, model, MAX(key_name), ${sum} FROM hourly GROUP BY 1, 2, 3, 4;
        INSERT INTO latency_daily SELECT day, provider, metric, json_group_object(CAST(bucket AS TEXT), n) FROM (
          SELECT (hour / 86400000) * 86400000 AS day, provider, metric, bucket, SUM(count) AS n FROM latency_hourly GROUP BY 1, 2, 3, 4
        ) GROUP BY day, provider, metric;
      `);
    },
  },
  {
    version: 3,
    description: 'request and response bodies, stored only when usage.logBodies is on',
    up(db) {
      // A rowid table, not WITHOUT ROWID: bodies run to tens of kilobytes, too big for the key b-tree.
      db.exec(`
        CREATE TABLE bodies (
          request_id TEXT PRIMARY KEY,
          started_at INTEGER NOT NULL,
          request TEXT,
          response TEXT
        );
        CREATE INDEX bodies_started ON bodies (started_at);
      `);
    },
  },
  {
    version: 4,
    description: 'the model a request asked for, beside the one the provider served (which `model` now always is)',
    up(db) {
      // Older rows keep NULL: whether their `model` was the asked-for or the served one is not known.
      db.exec('ALTER TABLE requests ADD COLUMN requested_model TEXT');
    },
  },
  {
    version: 5,
    description: 'what routing did (the attempts, the time waited) and the provider key label, per request and in the rollups',
    up(db) {
      // The rollups gain the pool key's label as a dimension ('' when its provider has no pool, as
      // every older row had), so usage and cost per provider key outlive the raw rows. A primary
      // key cannot be altered: each table is copied into its new shape.
      const sums = `requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
          cached_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
          cost REAL NOT NULL, unpriced INTEGER NOT NULL, duration_ms REAL NOT NULL`;
      const columns = 'key_id, provider, model, key_name, requests, errors, input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms';
      const rebuild = (table: 'hourly' | 'daily', period: 'hour' | 'day') => `
        CREATE TABLE ${table}_v5 (
          ${period} INTEGER NOT NULL, key_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, key_label TEXT NOT NULL DEFAULT '',
          key_name TEXT NOT NULL, ${sums},
          PRIMARY KEY (${period}, key_id, provider, model, key_label)
        ) WITHOUT ROWID;
        INSERT INTO ${table}_v5 (${period}, key_label, ${columns}) SELECT ${period}, '', ${columns} FROM ${table};
        DROP TABLE ${table};
        ALTER TABLE ${table}_v5 RENAME TO ${table};`;
      db.exec(`
        ALTER TABLE requests ADD COLUMN route TEXT;
        ALTER TABLE requests ADD COLUMN waited_ms REAL;
        ALTER TABLE requests ADD COLUMN key_label TEXT;
        ${rebuild('hourly', 'hour')}
        ${rebuild('daily', 'day')}
      `);
    },
  },
  {
    version: 6,
    description: 'the ledger of per-key limits: what each settled request of a key with limits used, once per request id',
    up(db) {
      // One row per settled request (its admission time, cost and tokens): a key's spend in a
      // period and its last minute are read back from here when the daemon starts. Rows past the
      // ledger's horizon (limits/sqlite-store.ts) are folded into one total per key.
      db.exec(`
        -- One b-tree in the order it is read (a key's rows by time), keyed to the request too: a row
        -- costs half what a rowid table with an index did.
        CREATE TABLE limit_spend (
          key_id TEXT NOT NULL,
          at INTEGER NOT NULL,
          request_id TEXT NOT NULL,
          usd REAL NOT NULL,
          tokens INTEGER NOT NULL,
          PRIMARY KEY (key_id, at, request_id)
        ) WITHOUT ROWID;
        CREATE TABLE limit_folded (key_id TEXT PRIMARY KEY, usd REAL NOT NULL) WITHOUT ROWID;
      `);
    },
  },
  {
    version: 7,
    description: 'cache writes with a 1-hour TTL and what the cache saved, per request and in the rollups; the session a request belongs to',
    up(db) {
      // Older rows: their 1-hour writes and savings were not kept (NULL per request, 0 in the
      // rollups); their cache reads and writes were, and still count.
      const rollup = (table: string) => `
        ALTER TABLE ${table} ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE ${table} ADD COLUMN cache_saved REAL NOT NULL DEFAULT 0;`;
      db.exec(`
        ALTER TABLE requests ADD COLUMN cache_write_1h_tokens INTEGER;
        ALTER TABLE requests ADD COLUMN cache_saved REAL;
        ALTER TABLE requests ADD COLUMN session TEXT;
        ${rollup('hourly')}
        ${rollup('daily')}
        ${rollup('hourly_totals')}
      `);
    },
  },
  {
    version: 8,
    description: 'which of its key\'s limits refused a request (budget, rpm, tpm, concurrency)',
    up(db) {
      // Its 429's error code says rate_limited for rpm, tpm and concurrency alike; `gateway usage`
      // counts refusals per limit. NULL for every other request, and for rows older than this.
      db.exec('ALTER TABLE requests ADD COLUMN limit_kind TEXT');
    },
  },
  {
    version: 9,
    description: 'which daemon served each request (a dimension of the rollups too); team mode\'s outbox and the cursor of the rows read from the shared store',
    up(db) {
      // Older rows and rollups: '' (not recorded). The rollups gain the daemon as a dimension so
      // `gateway usage --by daemon` covers the rollups' retention, not only the raw rows'. A
      // primary key cannot be altered: each table is copied into its new shape (as in version 5).
      const sums = `requests INTEGER NOT NULL, errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
          cached_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
          cost REAL NOT NULL, unpriced INTEGER NOT NULL, duration_ms REAL NOT NULL,
          cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0, cache_saved REAL NOT NULL DEFAULT 0`;
      const columns = `key_id, provider, model, key_label, key_name, requests, errors, input_tokens, output_tokens, cached_tokens, cache_write_tokens,
          reasoning_tokens, cost, unpriced, duration_ms, cache_write_1h_tokens, cache_saved`;
      const rebuild = (table: 'hourly' | 'daily', period: 'hour' | 'day') => `
        CREATE TABLE ${table}_v9 (
          ${period} INTEGER NOT NULL, key_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, key_label TEXT NOT NULL DEFAULT '',
          daemon TEXT NOT NULL DEFAULT '', key_name TEXT NOT NULL, ${sums},
          PRIMARY KEY (${period}, key_id, provider, model, key_label, daemon)
        ) WITHOUT ROWID;
        INSERT INTO ${table}_v9 (${period}, daemon, ${columns}) SELECT ${period}, '', ${columns} FROM ${table};
        DROP TABLE ${table};
        ALTER TABLE ${table}_v9 RENAME TO ${table};`;
      db.exec(`
        ALTER TABLE requests ADD COLUMN daemon TEXT;
        ${rebuild('hourly', 'hour')}
        ${rebuild('daily', 'day')}
        -- Team mode: this daemon's rows not yet committed to the shared store, by requests.id,
        -- added in the transaction that writes the row and deleted once PostgreSQL committed it.
        CREATE TABLE usage_outbox (id INTEGER PRIMARY KEY);
        -- Team mode: how far the other daemons' rows have been read from each shared store (its
        -- usage_store.id), advanced in the transaction that writes them here.
        CREATE TABLE usage_pulled (store TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
      `);
    },
  },
  {
    version: 10,
    description: 'team mode: the names this usage.db\'s own history carried when it first joined each shared store',
    up(db) {
      // A laptop's history copied by `store migrate` comes back to it from the store under the
      // names it was copied with: those parts are this file's already (team-history.ts).
      db.exec('CREATE TABLE usage_own_names (store TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (store, name)) WITHOUT ROWID');
    },
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function schemaVersion(db: Database): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number } | undefined;
  return row?.user_version ?? 0;
}

/** Brings the database to the newest version in `migrations`; returns the versions applied. */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const target = migrations[migrations.length - 1]?.version ?? 0;
  const current = schemaVersion(db);
  if (current > target) {
    throw new Error(`the usage database has schema version ${current}, newer than this gateway understands (${target}); upgrade model-gateway`);
  }
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      m.up(db);
      db.exec(`PRAGMA user_version = ${Math.trunc(m.version)}`);
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw new Error(`usage database migration to version ${m.version} (${m.description}) failed: ${(e as Error).message}`);
    }
    applied.push(m.version);
  }
  return applied;
}
