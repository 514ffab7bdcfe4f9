// `gateway store migrate`: a laptop's state copied once into a team's PostgreSQL store, with the
// laptop's daemon stopped. Each kind goes in as the team's daemons write it, and each is keyed so
// that copying it again adds nothing (a key by its id, a usage row and a ledger entry by request id,
// an answer by its id):
//   - keys.json's records (proxy, admin and session keys: hashes, models, limits, expiry,
//     revocation), under the lock key creation takes, each announced to running daemons;
//   - usage.db's request rows, through usage_push (so they are numbered after the rows already
//     there, and every daemon reads them), each with its daemon (this machine's for older rows);
//   - the history usage.db keeps only as rollups (older than its raw rows' retention) as rollup
//     parts (usage_rollups), which every other daemon adds to its own rollups;
//   - the spend each key's budget counts (limit_spend, limit_folded and priced requests from
//     before the key had limits, as limits/sqlite-store.ts sums them) as settled limit claims;
//   - responses.db's answers still within the retention.
// Nothing in the state directory is written: usage.db and responses.db are read from copies made
// in a temporary directory (opening a WAL database in place, even read-only, leaves files beside it).
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { configuredPort } from './daemon-client.js';
import { readConfig } from '../daemon/store/config.js';
import { FileKeyRecords } from '../daemon/store/key-records.js';
import { assertNameFree, keyStatus } from '../daemon/store/keys.js';
import { INSERT_KEY, insertKeyValues, KEYS_CHANNEL, KEYS_LOCK, recordOf, type KeyRow } from '../daemon/store/pg-keys.js';
import { openDatabase, type Database } from '../daemon/store/sqlite.js';
import { daemonIdOf, type SharedStore } from '../daemon/store/shared-store.js';
import { parseResponsesSettings, RESPONSES_DB_FILE, retentionStart, type Row as ResponseRow } from '../daemon/store/responses.js';
import { migrate as migrateUsage } from '../daemon/observe/usage/schema.js';
import { DAY_MS, historyNames, ROLLUP_KEYS, rollupsBeyond, USAGE_DB_FILE, UsageStore, type RollupTable, type UsageRow } from '../daemon/observe/usage/store.js';
import { PULL_COLUMNS, ROLLUPS_NOTICE, USAGE_CHANNEL, USAGE_LOCK } from '../daemon/observe/usage/team-history.js';
import { requestsAfter } from '../daemon/observe/usage/queries.js';
import { LEDGER_DAYS } from '../daemon/limits/sqlite-store.js';

/** What one kind came to: rows written now, and rows the store had already (an earlier run). */
export interface Copied { copied: number; already: number }

export interface MigrationResult {
  /** `refused`: keys left out because the store holds another key in their way (said why). */
  keys: Copied & { refused: Array<{ id: string; name: string; reason: string }> };
  /**
   * `unnamed` rows were recorded before daemons were named: they go in as `daemon`'s. `rollups`:
   * the rollup rows of history older than the raw rows (rollupsBeyond), as parts.
   */
  usage: Copied & { daemon: string; unnamed: number; rollups: Copied };
  limits: Copied;
  /** `expired`: answers past the retention, which no daemon would serve, left out. */
  responses: Copied & { expired: number };
}

/** Rows per usage_push and per limit claims insert. */
const BATCH = 500;
/** Answers per insert, and about the most bytes of them. */
const ANSWERS = { rows: 200, bytes: 8 * 1024 * 1024 };

/**
 * Copies the state of `dir` into the store (already connected and migrated). `env`: the
 * environment, for GATEWAY_DAEMON_ID and GATEWAY_PORT (the name older usage rows get).
 */
export async function copyLaptopState(dir: string, shared: SharedStore, env: NodeJS.ProcessEnv, now = Date.now()): Promise<MigrationResult> {
  const records = await new FileKeyRecords(dir).list();
  const snapshot = mkdtempSync(join(tmpdir(), 'gateway-migrate-'));
  try {
    const usageDb = await openSnapshot(dir, USAGE_DB_FILE, snapshot, migrateUsage);
    const responsesDb = await openSnapshot(dir, RESPONSES_DB_FILE, snapshot);
    try {
      const daemon = laptopDaemonId(usageDb, env);
      const keys = await copyKeys(shared.pool, records);
      const budgetKeys = records.filter((k) => k.limits?.budget).map((k) => k.id);
      const limits = usageDb ? await copyLedger(shared.pool, usageDb, budgetKeys, now) : { copied: 0, already: 0 };
      const usage = usageDb ? await copyUsage(shared.pool, usageDb, daemon) : { copied: 0, already: 0, unnamed: 0 };
      const rollups = usageDb ? await copyRollups(shared.pool, usageDb, join(snapshot, 'rows.db'), daemon) : { copied: 0, already: 0 };
      const settings = parseResponsesSettings(readConfig(dir).responses).settings;
      const responses = responsesDb ? await copyResponses(shared.pool, responsesDb, retentionStart(settings, now)) : { copied: 0, already: 0, expired: 0 };
      return { keys, usage: { ...usage, daemon, rollups }, limits, responses };
    } finally {
      usageDb?.close();
      responsesDb?.close();
    }
  } finally {
    rmSync(snapshot, { recursive: true, force: true });
  }
}

/**
 * `file` of `dir` (with its write-ahead log: a daemon that was killed leaves commits there) copied
 * into `into` and opened there; undefined when `dir` has none. `setup` brings an older file's copy
 * to this version's shape (and refuses a newer one).
 */
async function openSnapshot(dir: string, file: string, into: string, setup?: (db: Database) => void): Promise<Database | undefined> {
  const from = join(dir, file);
  if (!existsSync(from)) return undefined;
  copyFileSync(from, join(into, file));
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, join(into, `${file}-wal`));
  return openDatabase(join(into, file), setup ? { setup } : {});
}

/**
 * The name this machine's daemon goes by in a team: GATEWAY_DAEMON_ID when set, else the one its
 * newest row recorded (or, its rows all past the retention, its newest daily rollup), else
 * `<hostname>:<port>` as a daemon started here would call itself.
 */
function laptopDaemonId(db: Database | undefined, env: NodeJS.ProcessEnv): string {
  if (env.GATEWAY_DAEMON_ID?.trim()) return daemonIdOf(env, 0);
  const recorded = (db?.prepare('SELECT daemon FROM requests WHERE daemon IS NOT NULL AND daemon <> \'\' ORDER BY id DESC LIMIT 1').get()
    ?? db?.prepare('SELECT daemon FROM daily WHERE daemon <> \'\' ORDER BY day DESC LIMIT 1').get()) as { daemon: string } | undefined;
  return recorded?.daemon ?? daemonIdOf(env, configuredPort(env));
}

async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => { broken = true; });
    throw e;
  } finally {
    client.release(broken);
  }
}

/**
 * Every record, oldest first, in one transaction under the key creation lock. A record whose id is
 * there with the same hash is already there; one that another key is in the way of (the same id or
 * hash, or the name of an active key, which the store keeps to one) is left out and said why.
 */
async function copyKeys(pool: pg.Pool, records: Awaited<ReturnType<FileKeyRecords['list']>>): Promise<MigrationResult['keys']> {
  const out: MigrationResult['keys'] = { copied: 0, already: 0, refused: [] };
  if (records.length === 0) return out;
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [KEYS_LOCK]);
    for (const r of records) {
      const found = (await client.query<KeyRow>('SELECT * FROM keys WHERE id = $1 OR hash = $2 OR name = $3', [r.id, r.hash, r.name])).rows;
      const sameId = found.find((k) => k.id === r.id);
      const sameHash = found.find((k) => k.hash === r.hash);
      if (sameId && sameId.hash === r.hash) { out.already++; continue; }
      const refuse = (reason: string) => out.refused.push({ id: r.id, name: r.name, reason });
      if (sameId) { refuse(`the store has another key with id ${r.id}`); continue; }
      if (sameHash) { refuse(`the store has this key under another id (${sameHash.id})`); continue; }
      if (keyStatus(r) === 'active') {
        try { assertNameFree(found.map(recordOf), r.name); } catch { refuse(`the store has another active key named "${r.name}"; revoke one of them, or rename, then run this again`); continue; }
      }
      await client.query(INSERT_KEY, insertKeyValues(r));
      // Delivered at the commit: a daemon already running on the store knows the key at once.
      await client.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, r.id]);
      out.copied++;
    }
  });
  return out;
}

interface Claim { id: string; key: string; at: number; tokens: number; usd: number }

/**
 * What each key's budget counts on this machine, as settled claims a shared limit store sums in
 * its period: the ledger of settled requests; the totals folded out of it (older than any day,
 * week or month, so they count only in a total budget: at 0); and, for keys with a budget, the
 * priced requests of the ledger's horizon it does not hold (made before the key had limits),
 * which the laptop counts too.
 */
async function copyLedger(pool: pg.Pool, db: Database, budgetKeys: readonly string[], now: number): Promise<Copied> {
  const out: Copied = { copied: 0, already: 0 };
  let batch: Claim[] = [];
  const send = async () => {
    if (batch.length === 0) return;
    // A key's spend in its period is kept beside it: emptying that makes the next reservation sum
    // it again, these claims included. One statement: a reservation sees both changes or neither.
    const { rows } = await pool.query<{ n: number }>(`
      WITH added AS (
        INSERT INTO limit_claims (request_id, key_id, at, tokens, usd, expires_at, settled)
        SELECT id, key, at, tokens, usd, at, true FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[]) AS c(id, key, at, tokens, usd)
        ON CONFLICT (request_id) DO NOTHING
        RETURNING key_id
      ), recount AS (
        UPDATE limit_keys SET period = '' WHERE key_id IN (SELECT key_id FROM added) RETURNING 1
      ) SELECT count(*)::int AS n FROM added`,
    [batch.map((c) => c.id), batch.map((c) => c.key), batch.map((c) => Math.round(c.at)), batch.map((c) => Math.round(c.tokens)), batch.map((c) => c.usd)]);
    out.copied += rows[0]!.n;
    out.already += batch.length - rows[0]!.n;
    batch = [];
  };
  for (const claim of ledgerClaims(db, budgetKeys, now)) {
    batch.push(claim);
    if (batch.length === BATCH) await send();
  }
  await send();
  return out;
}

/** The claims copyLedger copies, read a row at a time (a busy key's ledger holds many). */
function* ledgerClaims(db: Database, budgetKeys: readonly string[], now: number): Generator<Claim> {
  yield* db.prepare('SELECT request_id AS id, key_id AS key, at, tokens, usd FROM limit_spend').iterate() as Iterable<Claim>;
  for (const f of db.prepare('SELECT key_id AS key, usd FROM limit_folded').iterate() as Iterable<{ key: string; usd: number }>) {
    yield { id: `folded:${f.key}`, key: f.key, at: 0, tokens: 0, usd: f.usd };
  }
  const before = db.prepare(`SELECT request_id AS id, key_id AS key, started_at AS at, COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) AS tokens, cost AS usd
    FROM requests WHERE key_id = ? AND started_at >= ? AND cost IS NOT NULL
      AND request_id NOT IN (SELECT request_id FROM limit_spend WHERE key_id = ?)`);
  for (const key of budgetKeys) yield* before.iterate(key, now - LEDGER_DAYS * DAY_MS, key) as Iterable<Claim>;
}

/** Every request row, in the order this machine wrote them; a row without a daemon gets `daemon`. */
async function copyUsage(pool: pg.Pool, db: Database, daemon: string): Promise<Copied & { unnamed: number }> {
  const out = { copied: 0, already: 0, unnamed: 0 };
  for (let after = 0; ;) {
    const rows = requestsAfter(db, after, BATCH);
    if (rows.length === 0) return out;
    after = rows[rows.length - 1]!.id;
    out.unnamed += rows.filter((row) => !row.daemon).length;
    const { rows: [r] } = await pool.query<{ n: number }>('SELECT usage_push($1::json) AS n', [JSON.stringify(rows.map((row) => ({ ...row, daemon: row.daemon || daemon })))]);
    out.copied += r!.n;
    out.already += rows.length - r!.n;
  }
}

/**
 * The history `db` keeps only as rollups, as parts of them in usage_rollups: each rollup row less
 * what the team has of it already, gathered in a scratch usage.db at `scratch`: the request rows
 * here, and the store's rows and parts of every name this history carries (a row pruned here
 * since an earlier copy is there; an earlier copy may have named this machine otherwise, before
 * GATEWAY_DAEMON_ID was set or its port changed). Under usage_push's lock, so the parts are
 * numbered in commit order, and each part once: a second copy adds nothing.
 */
async function copyRollups(pool: pg.Pool, db: Database, scratch: string, daemon: string): Promise<Copied> {
  const out: Copied = { copied: 0, already: 0 };
  const names = [...new Set([daemon, ...historyNames(db)])];
  const rows = await UsageStore.open(scratch);
  try {
    for (let after = 0; ;) {
      const page = requestsAfter(db, after, BATCH);
      if (page.length === 0) break;
      after = page[page.length - 1]!.id;
      rows.insertMissing(page.map((row) => ({ ...row, daemon: row.daemon || daemon })));
    }
    for (let after = 0; ;) {
      const { rows: page } = await pool.query<UsageRow & { seq: number }>(
        `SELECT ${PULL_COLUMNS} FROM usage_requests WHERE daemon = ANY($1::text[]) AND seq > $2 ORDER BY seq LIMIT $3`, [names, after, BATCH]);
      if (page.length === 0) break;
      after = page[page.length - 1]!.seq;
      rows.insertMissing(page);
    }
    for (let after = 0; ;) {
      const { rows: page } = await pool.query<{ seq: number; kind: RollupTable; row: Record<string, unknown> }>(
        'SELECT seq::float8 AS seq, kind, row FROM usage_rollups WHERE daemon = ANY($1::text[]) AND seq > $2 ORDER BY seq LIMIT $3', [names, after, BATCH]);
      if (page.length === 0) break;
      after = page[page.length - 1]!.seq;
      rows.addRollups(page.map((p) => ({ table: p.kind, row: p.row })), { store: 'parts', seq: after });
      out.already += page.length;
    }
  } finally {
    rows.close();
  }
  const parts = rollupsBeyond(db, scratch, daemon);
  for (let i = 0; i < parts.length; i += BATCH) {
    const batch = parts.slice(i, i + BATCH);
    const n = await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [USAGE_LOCK]);
      const { rowCount } = await client.query(`
        INSERT INTO usage_rollups (seq, daemon, kind, part, row)
        SELECT nextval('usage_rollups_seq'), $1, kind, part, row::json FROM unnest($2::text[], $3::text[], $4::text[]) AS p(kind, part, row)
        ON CONFLICT (daemon, kind, part) DO NOTHING`,
      [daemon, batch.map((p) => p.table), batch.map((p) => JSON.stringify(ROLLUP_KEYS[p.table].map((k) => p.row[k]))), batch.map((p) => JSON.stringify(p.row))]);
      if ((rowCount ?? 0) > 0) await client.query('SELECT pg_notify($1, $2)', [USAGE_CHANNEL, ROLLUPS_NOTICE]);
      return rowCount ?? 0;
    });
    out.copied += n;
    out.already += batch.length - n;
  }
  return out;
}

/** The answers created since `since` (the retention's start), oldest first; an answer already there is left as it is. */
async function copyResponses(pool: pg.Pool, db: Database, since: number): Promise<MigrationResult['responses']> {
  const out = { copied: 0, already: 0, expired: 0 };
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'responses'").get()) return out;
  let batch: ResponseRow[] = [];
  let bytes = 0;
  const send = async () => {
    if (batch.length === 0) return;
    const { rowCount } = await pool.query(`
      INSERT INTO responses (id, key_id, created_at, previous_id, bytes, input, response, held_by)
      SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[])
      ON CONFLICT (id) DO NOTHING`,
    [batch.map((r) => r.id), batch.map((r) => r.key_id), batch.map((r) => r.created_at), batch.map((r) => r.previous_id),
      batch.map((r) => r.input.length + r.response.length), batch.map((r) => r.input), batch.map((r) => r.response), batch.map((r) => r.held_by)]);
    out.copied += rowCount ?? 0;
    out.already += batch.length - (rowCount ?? 0);
    batch = [];
    bytes = 0;
  };
  const rows = db.prepare('SELECT id, key_id, created_at, previous_id, input, response, held_by FROM responses ORDER BY rowid').iterate() as Iterable<ResponseRow>;
  for (const r of rows) {
    if (r.created_at < since) { out.expired++; continue; }
    const size = r.input.length + r.response.length;
    if (batch.length === ANSWERS.rows || (batch.length > 0 && bytes + size > ANSWERS.bytes)) await send();
    batch.push(r);
    bytes += size;
  }
  await send();
  return out;
}
