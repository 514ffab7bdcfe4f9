// The usage history: one SQLite file (`usage.db`, 0600) in the state directory. Raw request rows
// are kept for the retention period. Rollups are written in the same transaction as the rows they
// summarize, so the two never disagree, and outlive the raw rows: per hour and per UTC day by
// key/provider/model, per-hour totals, and latency histograms per provider by hour and by day.
// A year of heavy use is then a few thousand rows to read, not millions.
import { renameSync } from 'node:fs';
import type { ProviderId } from '../../../providers/types.js';
import type { RequestMode } from '../events.js';
import type { LimitKind } from '../../limits/limits.js';
import { latencyBucket } from './latency.js';
import { migrate } from './schema.js';
import type { SQLInputValue } from 'node:sqlite';
import { openDatabase, StatementCache, transaction, type Database } from '../../store/sqlite.js';

export const USAGE_DB_FILE = 'usage.db';
export const HOUR_MS = 3_600_000;

export interface UsageRow {
  requestId: string;
  startedAt: number; // ms since epoch
  keyId: string;
  keyName: string;
  mode: RequestMode;
  provider: ProviderId;
  /**
   * The model that served the request, as the provider names it (`claude-sonnet-4-5-20250929`):
   * what usage is grouped and priced by. When the provider never said (a failed request), the
   * model the requested name last resolved to, else the requested name.
   */
  model: string | null;
  /** The model the request asked for (`claude-sonnet-4-5`, aliases resolved), for display; null in rows older than schema 4. */
  requestedModel: string | null;
  method: string;
  path: string;
  stream: boolean;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  ttfbMs: number | null;
  requestBytes: number;
  outputBytes: number;
  /** Tokens as events.ts TokenUsage counts them: input includes the cache reads and writes. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Cache reads (a part of inputTokens). */
  cachedTokens: number | null;
  /** Cache writes, every TTL (a part of inputTokens). */
  cacheWriteTokens: number | null;
  /** The 1-hour cache writes (a part of cacheWriteTokens); null before schema 7. */
  cacheWrite1hTokens: number | null;
  reasoningTokens: number | null;
  /** USD; null when unknown (model not in the price table, or no token counts reported). */
  cost: number | null;
  /** USD the prompt cache saved (prices.ts cacheSavingsOf); null when the cost is unknown, and before schema 7. */
  cacheSaved: number | null;
  /** The session the client named, as session-tag.ts keeps it; null when it named none, and before schema 7. */
  session: string | null;
  /** The attempts as x-gateway-route lists them (`provider/model[#label]=outcome, …`); null before schema 5 and for native requests. */
  route: string | null;
  /** Time waited between attempts (retry-after, backoff); null when none. */
  waitedMs: number | null;
  /** The label of the provider key that served, when its provider has a key pool. */
  keyLabel: string | null;
  /** The key's own limit that refused the request (its 429); null or absent otherwise. */
  limit?: LimitKind | null;
  /** The daemon that served it (shared-store.ts daemonIdOf); null or absent in rows older than schema 9. */
  daemon?: string | null;
}

/** A request's bodies as stored with `usage.logBodies` on: already capped and redacted. */
export interface BodyRow {
  requestId: string;
  startedAt: number;
  request: string | null;
  response: string | null;
}

export const floorHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
export const isError = (status: number): boolean => status >= 400;

/** `INSERT INTO requests … VALUES (…), (…)` for `n` rows: one statement per 50 rows costs a quarter less per row than one per row. */
const insertRequestsSql = (n: number) => `INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, requested_model,
  method, path, stream, status, error_code, error_message, duration_ms, ttfb_ms, request_bytes, output_bytes, input_tokens, output_tokens,
  cached_tokens, cache_write_tokens, reasoning_tokens, cost, route, waited_ms, key_label, cache_write_1h_tokens, cache_saved, session, limit_kind, daemon)
  VALUES ${Array.from({ length: n }, () => `(${Array(32).fill('?').join(', ')})`).join(', ')}`;
const ROWS_PER_INSERT = 50;
/** The statement text per row count, made once (its statement is then found by it in the cache). */
const insertTexts = new Map<number, string>();
function insertRequests(n: number): string {
  let sql = insertTexts.get(n);
  if (!sql) { sql = insertRequestsSql(n); insertTexts.set(n, sql); }
  return sql;
}

function pushRequestValues(out: SQLInputValue[], r: UsageRow): void {
  out.push(r.requestId, r.startedAt, r.keyId, r.keyName, r.mode, r.provider, r.model, r.requestedModel, r.method, r.path,
    r.stream ? 1 : 0, r.status, r.errorCode, r.errorMessage, r.durationMs, r.ttfbMs, r.requestBytes, r.outputBytes,
    int(r.inputTokens), int(r.outputTokens), int(r.cachedTokens), int(r.cacheWriteTokens), int(r.reasoningTokens), r.cost,
    r.route, r.waitedMs, r.keyLabel, int(r.cacheWrite1hTokens), r.cacheSaved, r.session, r.limit ?? null, r.daemon ?? null);
}

const SUM_COLUMNS = ['requests', 'errors', 'input_tokens', 'output_tokens', 'cached_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost', 'unpriced', 'duration_ms',
  'cache_write_1h_tokens', 'cache_saved'];
const ADD_SUMS = SUM_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ');
const SUM_PARAMS = SUM_COLUMNS.map(() => '?').join(', ');

/** Upserts into `hourly` or `daily`: per period and key/provider/model/provider key label/daemon. */
const upsertDims = (table: 'hourly' | 'daily', period: 'hour' | 'day') => `INSERT INTO ${table} (${period}, key_id, provider, model, key_label, daemon, key_name, ${SUM_COLUMNS.join(', ')})
  VALUES (?, ?, ?, ?, ?, ?, ?, ${SUM_PARAMS}) ON CONFLICT (${period}, key_id, provider, model, key_label, daemon) DO UPDATE SET key_name = excluded.key_name, ${ADD_SUMS}`;
const UPSERT_TOTALS = `INSERT INTO hourly_totals (hour, ${SUM_COLUMNS.join(', ')}) VALUES (?, ${SUM_PARAMS})
  ON CONFLICT (hour) DO UPDATE SET ${ADD_SUMS}`;
const UPSERT_LATENCY_HOURLY = `INSERT INTO latency_hourly (hour, provider, metric, bucket, count)
  VALUES (?, ?, ?, ?, ?) ON CONFLICT (hour, provider, metric, bucket) DO UPDATE SET count = count + excluded.count`;

/** Moves a shared store's cursor (usage_pulled) forward, never back. */
const ADVANCE_CURSOR = 'INSERT INTO usage_pulled (store, seq) VALUES (?, ?) ON CONFLICT (store) DO UPDATE SET seq = MAX(seq, excluded.seq)';

/** A daily latency histogram `{"bucket": count}`; anything unreadable counts as empty. */
export function parseHist(text: string | undefined): Record<number, number> {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<number, number>) : {};
  } catch {
    return {};
  }
}

export const DAY_MS = 86_400_000;
/** Daily rollups are per UTC day. */
export const floorDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

interface Sums {
  requests: number; errors: number; input: number; output: number; cached: number; cacheWrite: number; reasoning: number; cost: number; unpriced: number; duration: number;
  cacheWrite1h: number; cacheSaved: number;
}
interface DimAgg extends Sums { period: number; keyId: string; provider: string; model: string; keyLabel: string; daemon: string; keyName: string }

const zero = (): Sums => ({ requests: 0, errors: 0, input: 0, output: 0, cached: 0, cacheWrite: 0, reasoning: 0, cost: 0, unpriced: 0, duration: 0, cacheWrite1h: 0, cacheSaved: 0 });
/** In SUM_COLUMNS' order. */
const sumValues = (a: Sums): number[] => [a.requests, a.errors, Math.round(a.input), Math.round(a.output), Math.round(a.cached),
  Math.round(a.cacheWrite), Math.round(a.reasoning), a.cost, a.unpriced, a.duration, Math.round(a.cacheWrite1h), a.cacheSaved];

function addRow(a: Sums, r: UsageRow): void {
  a.requests++;
  if (isError(r.status)) a.errors++;
  a.input += r.inputTokens ?? 0;
  a.output += r.outputTokens ?? 0;
  a.cached += r.cachedTokens ?? 0;
  a.cacheWrite += r.cacheWriteTokens ?? 0;
  a.reasoning += r.reasoningTokens ?? 0;
  a.cacheWrite1h += r.cacheWrite1hTokens ?? 0;
  a.cacheSaved += r.cacheSaved ?? 0;
  if (r.cost === null) a.unpriced++; else a.cost += r.cost;
  a.duration += r.durationMs;
}

/** Latency counts of one period, provider and metric: bucket → count. */
interface LatencyCounts { period: number; provider: string; metric: 'duration' | 'ttfb'; counts: Map<number, number> }

interface Aggregates {
  hourly: DimAgg[];
  daily: DimAgg[];
  totals: Map<number, Sums>;
  latencyHourly: LatencyCounts[];
  latencyDaily: LatencyCounts[];
}

/** The rollup targets of one (hour, key, provider, model, label, daemon): consecutive rows of a batch mostly share them. */
interface Targets {
  hour: number; keyId: string; provider: string; model: string; label: string; daemon: string;
  hourly: DimAgg; daily: DimAgg; total: Sums;
  latency: { duration: [LatencyCounts, LatencyCounts]; ttfb: [LatencyCounts, LatencyCounts] };
}

/**
 * Per-batch pre-aggregation, so a batch of a thousand rows is a handful of rollup upserts. String
 * keys are built only when a row's (hour, key, provider, model, label, daemon) differs from the previous row's.
 */
function aggregate(rows: readonly UsageRow[]): Aggregates {
  const hourly = new Map<string, DimAgg>();
  const daily = new Map<string, DimAgg>();
  const totals = new Map<number, Sums>();
  const latencyHourly = new Map<string, LatencyCounts>();
  const latencyDaily = new Map<string, LatencyCounts>();
  const dim = (map: Map<string, DimAgg>, period: number, r: UsageRow, model: string, label: string, daemon: string): DimAgg => {
    const k = `${period}\u0000${r.keyId}\u0000${r.provider}\u0000${model}\u0000${label}\u0000${daemon}`;
    let a = map.get(k);
    if (!a) { a = { period, keyId: r.keyId, provider: r.provider, model, keyLabel: label, daemon, keyName: r.keyName, ...zero() }; map.set(k, a); }
    return a;
  };
  const lat = (map: Map<string, LatencyCounts>, period: number, provider: string, metric: 'duration' | 'ttfb'): LatencyCounts => {
    const k = `${period}\u0000${provider}\u0000${metric}`;
    let l = map.get(k);
    if (!l) { l = { period, provider, metric, counts: new Map() }; map.set(k, l); }
    return l;
  };
  const bump = (l: LatencyCounts, bucket: number) => l.counts.set(bucket, (l.counts.get(bucket) ?? 0) + 1);
  let t: Targets | undefined;
  for (const r of rows) {
    const hour = floorHour(r.startedAt);
    const model = r.model ?? '';
    const label = r.keyLabel ?? '';
    const daemon = r.daemon ?? '';
    if (!t || t.hour !== hour || t.keyId !== r.keyId || t.provider !== r.provider || t.model !== model || t.label !== label || t.daemon !== daemon) {
      const day = floorDay(r.startedAt);
      let total = totals.get(hour);
      if (!total) { total = zero(); totals.set(hour, total); }
      t = {
        hour, keyId: r.keyId, provider: r.provider, model, label, daemon,
        hourly: dim(hourly, hour, r, model, label, daemon), daily: dim(daily, day, r, model, label, daemon), total,
        latency: {
          duration: [lat(latencyHourly, hour, r.provider, 'duration'), lat(latencyDaily, day, r.provider, 'duration')],
          ttfb: [lat(latencyHourly, hour, r.provider, 'ttfb'), lat(latencyDaily, day, r.provider, 'ttfb')],
        },
      };
    }
    addRow(t.hourly, r);
    addRow(t.daily, r);
    addRow(t.total, r);
    if (isError(r.status)) continue; // error latencies (fast refusals) would flatter the percentiles
    const d = latencyBucket(r.durationMs);
    bump(t.latency.duration[0], d);
    bump(t.latency.duration[1], d);
    if (r.ttfbMs !== null) {
      const b = latencyBucket(r.ttfbMs);
      bump(t.latency.ttfb[0], b);
      bump(t.latency.ttfb[1], b);
    }
  }
  const used = (m: Map<string, LatencyCounts>) => [...m.values()].filter((l) => l.counts.size > 0);
  return { hourly: [...hourly.values()], daily: [...daily.values()], totals, latencyHourly: used(latencyHourly), latencyDaily: used(latencyDaily) };
}

/** usage.db's rollup tables. */
export type RollupTable = 'hourly' | 'daily' | 'hourly_totals' | 'latency_hourly' | 'latency_daily';

/**
 * One row of a rollup table with no request rows behind it: history kept only as rollups (older
 * than the raw rows' retention), as `store migrate` copies it for the team's daemons to add to
 * theirs. `row` holds the table's columns: its period, dimensions and sums (latency_daily's `hist`
 * as an object of bucket → count).
 */
export interface RollupPart { table: RollupTable; row: Record<string, unknown> }

const ROLLUP_DIMS = ['key_id', 'provider', 'model', 'key_label', 'daemon'];
/** Each rollup table's primary key: what one of its rows is the sums of. */
export const ROLLUP_KEYS: Readonly<Record<RollupTable, readonly string[]>> = {
  hourly: ['hour', ...ROLLUP_DIMS], daily: ['day', ...ROLLUP_DIMS], hourly_totals: ['hour'],
  latency_hourly: ['hour', 'provider', 'metric', 'bucket'], latency_daily: ['day', 'provider', 'metric'],
};

/** The daemon names `db`'s history carries: its request rows' and its rollups' (not '', rows from before daemons were named). */
export function historyNames(db: Database): string[] {
  const rows = db.prepare(`SELECT daemon FROM requests WHERE daemon <> ''
    UNION SELECT daemon FROM hourly WHERE daemon <> '' UNION SELECT daemon FROM daily WHERE daemon <> ''`).all() as Array<{ daemon: string }>;
  return rows.map((r) => r.daemon);
}

/** The sums of a rollup row `m` less those of its twin `x` (absent: nothing). */
const SUMS_LESS = SUM_COLUMNS.map((c) => `m.${c} - coalesce(x.${c}, 0) AS ${c}`).join(', ');

/**
 * What `db`'s rollups hold beyond the request rows of the usage.db at `rowsDb` (made from the
 * same rows, and any pruned from `db` that are known elsewhere): each rollup row's sums less what
 * those rows make of it, where requests are left. A request row without a daemon counts as
 * `daemon`'s, as it goes to the team (and so do its rollups' here).
 */
export function rollupsBeyond(db: Database, rowsDb: string, daemon: string): RollupPart[] {
  const out: RollupPart[] = [];
  db.prepare("ATTACH DATABASE ? AS r").run(rowsDb);
  try {
    const named = "CASE WHEN daemon = '' THEN ? ELSE daemon END AS daemon";
    for (const [table, period] of [['hourly', 'hour'], ['daily', 'day']] as const) {
      const keys = ROLLUP_KEYS[table];
      const rows = db.prepare(`SELECT ${keys.map((k) => `m.${k}`).join(', ')}, m.key_name, ${SUMS_LESS}
        FROM (SELECT ${period}, key_id, provider, model, key_label, ${named}, max(key_name) AS key_name, ${SUM_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(', ')}
              FROM main.${table} GROUP BY 1, 2, 3, 4, 5, 6) m
        LEFT JOIN r.${table} x USING (${keys.join(', ')}) WHERE m.requests > coalesce(x.requests, 0)`).all(daemon);
      for (const row of rows) out.push({ table, row: { ...row } });
    }
    for (const row of db.prepare(`SELECT m.hour, ${SUMS_LESS}
        FROM main.hourly_totals m LEFT JOIN r.hourly_totals x USING (hour) WHERE m.requests > coalesce(x.requests, 0)`).all()) {
      out.push({ table: 'hourly_totals', row: { ...row } });
    }
    for (const row of db.prepare(`SELECT m.hour, m.provider, m.metric, m.bucket, m.count - coalesce(x.count, 0) AS count
        FROM main.latency_hourly m LEFT JOIN r.latency_hourly x USING (hour, provider, metric, bucket) WHERE m.count > coalesce(x.count, 0)`).all()) {
      out.push({ table: 'latency_hourly', row: { ...row } });
    }
    const daily = db.prepare('SELECT m.day, m.provider, m.metric, m.hist, x.hist AS made FROM main.latency_daily m LEFT JOIN r.latency_daily x USING (day, provider, metric)')
      .all() as Array<{ day: number; provider: string; metric: string; hist: string; made: string | null }>;
    for (const { hist: kept, made, ...key } of daily) {
      const less = parseHist(made ?? undefined);
      const hist = Object.fromEntries(Object.entries(parseHist(kept)).map(([b, n]) => [b, n - (less[Number(b)] ?? 0)]).filter(([, n]) => (n as number) > 0));
      if (Object.keys(hist).length > 0) out.push({ table: 'latency_daily', row: { ...key, hist } });
    }
  } finally {
    db.exec('DETACH DATABASE r');
  }
  return out;
}

/** A token count as the history keeps it: a whole number (a provider may report 10.5). */
export const int = (v: number | null): number | null => (v === null ? null : Math.round(v));

export interface PruneResult { requests: number; hourly: number; latency: number }

/**
 * A request row's fields (UsageRow's names) and the column each is kept in, the same in usage.db
 * and in the team's usage_requests; `int`: a whole number (bigint in PostgreSQL), `flag`: a boolean.
 */
export const ROW_COLUMNS = [
  ['requestId', 'request_id'], ['daemon', 'daemon'], ['startedAt', 'started_at', 'int'], ['keyId', 'key_id'], ['keyName', 'key_name'],
  ['mode', 'mode'], ['provider', 'provider'], ['model', 'model'], ['requestedModel', 'requested_model'], ['method', 'method'],
  ['path', 'path'], ['stream', 'stream', 'flag'], ['status', 'status'], ['errorCode', 'error_code'], ['errorMessage', 'error_message'],
  ['durationMs', 'duration_ms'], ['ttfbMs', 'ttfb_ms'], ['requestBytes', 'request_bytes', 'int'], ['outputBytes', 'output_bytes', 'int'],
  ['inputTokens', 'input_tokens', 'int'], ['outputTokens', 'output_tokens', 'int'], ['cachedTokens', 'cached_tokens', 'int'],
  ['cacheWriteTokens', 'cache_write_tokens', 'int'], ['cacheWrite1hTokens', 'cache_write_1h_tokens', 'int'],
  ['reasoningTokens', 'reasoning_tokens', 'int'], ['cost', 'cost'], ['cacheSaved', 'cache_saved'], ['session', 'session'],
  ['route', 'route'], ['waitedMs', 'waited_ms'], ['keyLabel', 'key_label'], ['limit', 'limit_kind'],
] as const satisfies ReadonlyArray<readonly [keyof UsageRow, string, ('int' | 'flag')?]>;

/** json_object()'s arguments for a usage.db row as UsageRow's JSON (SQLite keeps a flag as 0 or 1). */
const ROW_JSON = ROW_COLUMNS.map(([k, c, t]: readonly [string, string, string?]) =>
  `'${k}', ${t === 'flag' ? `json(CASE WHEN ${c} THEN 'true' ELSE 'false' END)` : c}`).join(', ');

export class UsageStore {
  /** The insert and rollup statements, prepared once. */
  private readonly statements: StatementCache;
  private constructor(readonly db: Database, readonly path: string) {
    this.statements = new StatementCache(db);
  }

  /**
   * Opens (creating, 0600) and migrates the database. A file SQLite cannot read is moved aside as
   * `usage.db.corrupt-<time>` and a fresh one started: history is worth less than a daemon that runs.
   */
  static async open(path: string, opts: { log?: (line: string) => void } = {}): Promise<UsageStore> {
    // Incremental vacuum lets pruning give space back.
    const openDb = (): Promise<Database> => openDatabase(path, { incrementalVacuum: true, setup: migrate });
    try {
      return new UsageStore(await openDb(), path);
    } catch (e) {
      const msg = (e as Error).message;
      if (path === ':memory:' || !/not a database|malformed|corrupt/i.test(msg)) throw e;
      const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      renameSync(path, aside);
      for (const ext of ['-wal', '-shm']) { try { renameSync(path + ext, aside + ext); } catch { /* absent */ } }
      opts.log?.(`usage: ${path} could not be read (${msg}); moved it to ${aside} and started a new history`);
      return new UsageStore(await openDb(), path);
    }
  }

  /**
   * Writes rows, all their rollups and any bodies in one transaction (all or nothing). `outbox`
   * (team mode): the rows are this daemon's and wait in the outbox, in the same transaction, until
   * the shared store has committed them.
   */
  insert(rows: readonly UsageRow[], bodies: readonly BodyRow[] = [], outbox = false): void {
    if (rows.length === 0 && bodies.length === 0) return;
    transaction(this.db, () => this.write(rows, bodies, outbox));
  }

  /**
   * Writes the rows whose request id is not here yet, in one transaction; returns how many. For
   * rows that may have been written before: those read back from the shared store (with the
   * store's cursor, advanced in the same transaction) and those replayed from the journal after a
   * crash (`outbox`: they are this daemon's own).
   */
  insertMissing(rows: readonly UsageRow[], opts: { outbox?: boolean; cursor?: { store: string; seq: number } } = {}): number {
    let fresh: UsageRow[] = [];
    transaction(this.db, () => {
      // By the started_at index: a request's row is found among the few started the same millisecond.
      const seen = this.statements.get('SELECT 1 FROM requests WHERE started_at = ? AND request_id = ?');
      const ids = new Set<string>(); // one request id once, even when it comes twice in one batch
      fresh = rows.filter((r) => {
        if (ids.has(r.requestId)) return false;
        ids.add(r.requestId);
        return seen.get(r.startedAt, r.requestId) === undefined;
      });
      this.write(fresh, [], opts.outbox ?? false);
      if (opts.cursor) this.statements.get(ADVANCE_CURSOR).run(opts.cursor.store, opts.cursor.seq);
    });
    return fresh.length;
  }

  /**
   * Adds rollup parts (another daemon's history kept only as rollups: rollupsBeyond) to the
   * rollups, and moves the shared store's cursor of them (`cursor.store`) in the same transaction.
   */
  addRollups(parts: readonly RollupPart[], cursor: { store: string; seq: number }): void {
    transaction(this.db, () => {
      const num = (v: unknown): number => Number(v ?? 0);
      const sums = (r: Record<string, unknown>) => SUM_COLUMNS.map((c) => num(r[c]));
      for (const { table, row: r } of parts) {
        switch (table) {
          case 'hourly':
          case 'daily':
            this.statements.get(upsertDims(table, table === 'hourly' ? 'hour' : 'day'))
              .run(num(r.hour ?? r.day), String(r.key_id), String(r.provider), String(r.model), String(r.key_label), String(r.daemon), String(r.key_name), ...sums(r));
            break;
          case 'hourly_totals':
            this.statements.get(UPSERT_TOTALS).run(num(r.hour), ...sums(r));
            break;
          case 'latency_hourly':
            this.statements.get(UPSERT_LATENCY_HOURLY).run(num(r.hour), String(r.provider), String(r.metric), num(r.bucket), num(r.count));
            break;
          case 'latency_daily':
            this.addToHist(num(r.day), String(r.provider), String(r.metric), Object.entries(r.hist as Record<string, number>).map(([b, n]) => [Number(b), n]));
            break;
          default: {
            const never: never = table;
            return never;
          }
        }
      }
      this.statements.get(ADVANCE_CURSOR).run(cursor.store, cursor.seq);
    });
  }

  /**
   * The names under which this usage.db's own history is in shared store `store`: those its rows
   * and rollups carried when it first read from that store (before any other daemon's were added:
   * a laptop's history as `store migrate` named it), and `daemon`, the name it runs under now.
   * Recorded at that first read and kept, so a daemon renamed later still knows them.
   */
  ownNames(store: string, daemon: string | undefined): string[] {
    transaction(this.db, () => {
      const add = this.statements.get('INSERT OR IGNORE INTO usage_own_names (store, name) VALUES (?, ?)');
      const known = this.statements.get('SELECT 1 FROM usage_own_names WHERE store = ?').get(store) !== undefined;
      if (!known && this.pulledUpTo(store) === 0) {
        for (const name of historyNames(this.db)) add.run(store, name);
      }
      if (daemon) add.run(store, daemon);
    });
    return (this.statements.get('SELECT name FROM usage_own_names WHERE store = ?').all(store) as Array<{ name: string }>).map((r) => r.name);
  }

  /** The shared store's usage rows read so far (its sequence number), 0 for none. */
  pulledUpTo(store: string): number {
    const r = this.statements.get('SELECT seq FROM usage_pulled WHERE store = ?').get(store) as { seq: number } | undefined;
    return Number(r?.seq ?? 0);
  }

  /**
   * Team mode: the oldest `limit` of this daemon's rows still waiting in the outbox for the shared
   * store, as the JSON array usage_push takes, with their requests.id and request ids. A row whose
   * JSON `known` has (the journal's line, made as its request ended) is taken as it is; SQLite makes
   * the others' (rows from before a restart): no row is read into an object and stringified again.
   */
  outboxBatch(limit: number, known: (requestId: string) => string | undefined = () => undefined): { json: string; ids: number[]; requestIds: string[] } {
    const r = this.statements.get(`SELECT json_group_array(id) AS ids, json_group_array(rid) AS rids
      FROM (SELECT o.id, r.request_id AS rid FROM usage_outbox o JOIN requests r ON r.id = o.id ORDER BY o.id LIMIT ?)`).get(limit) as { ids: string; rids: string };
    const ids = JSON.parse(r.ids) as number[];
    const requestIds = JSON.parse(r.rids) as string[];
    const parts: string[] = [];
    const missing: number[] = [];
    requestIds.forEach((rid, i) => {
      const line = known(rid);
      if (line === undefined) missing.push(ids[i]!);
      else parts.push(line);
    });
    if (missing.length > 0) {
      const made = this.statements.get(`SELECT json_group_array(json_object(${ROW_JSON})) AS rows FROM requests WHERE id IN (SELECT value FROM json_each(?))`)
        .get(JSON.stringify(missing)) as { rows: string };
      parts.push(made.rows.slice(1, -1));
    }
    return { json: `[${parts.join(',')}]`, ids, requestIds };
  }

  /** The shared store committed these rows (by requests.id): they leave the outbox. */
  outboxDone(ids: readonly number[]): void {
    if (ids.length === 0) return;
    this.statements.get('DELETE FROM usage_outbox WHERE id IN (SELECT value FROM json_each(?))').run(JSON.stringify(ids));
  }

  outboxSize(): number {
    return Number((this.statements.get('SELECT COUNT(*) AS n FROM usage_outbox').get() as { n: number }).n);
  }

  private write(rows: readonly UsageRow[], bodies: readonly BodyRow[], outbox: boolean): void {
    const agg = aggregate(rows);
    // Every row this transaction adds gets an id above the largest before it (no other writer
    // holds the lock meanwhile): those ids are the outbox's.
    const before = outbox && rows.length > 0 ? Number((this.statements.get('SELECT COALESCE(MAX(id), 0) AS id FROM requests').get() as { id: number }).id) : 0;
    const values: SQLInputValue[] = [];
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const n = Math.min(ROWS_PER_INSERT, rows.length - i);
      values.length = 0;
      for (let j = i; j < i + n; j++) pushRequestValues(values, rows[j]!);
      this.statements.get(insertRequests(n)).run(...values);
    }
    if (outbox && rows.length > 0) this.statements.get('INSERT INTO usage_outbox (id) SELECT id FROM requests WHERE id > ?').run(before);
    for (const [table, period, list] of [['hourly', 'hour', agg.hourly], ['daily', 'day', agg.daily]] as const) {
      const up = this.statements.get(upsertDims(table, period));
      for (const a of list) up.run(a.period, a.keyId, a.provider, a.model, a.keyLabel, a.daemon, a.keyName, ...sumValues(a));
    }
    const tot = this.statements.get(UPSERT_TOTALS);
    for (const [hour, t] of agg.totals) tot.run(hour, ...sumValues(t));
    const lat = this.statements.get(UPSERT_LATENCY_HOURLY);
    for (const l of agg.latencyHourly) for (const [bucket, count] of l.counts) lat.run(l.period, l.provider, l.metric, bucket, count);
    for (const l of agg.latencyDaily) this.addToHist(l.period, l.provider, l.metric, l.counts);
    if (bodies.length > 0) {
      const body = this.statements.get('INSERT OR REPLACE INTO bodies (request_id, started_at, request, response) VALUES (?, ?, ?, ?)');
      for (const b of bodies) body.run(b.requestId, b.startedAt, b.request, b.response);
    }
  }

  /** Adds bucket counts to a day's latency histogram (one JSON row per day, provider and metric). */
  private addToHist(day: number, provider: string, metric: string, counts: Iterable<[number, number]>): void {
    const old = this.statements.get('SELECT hist FROM latency_daily WHERE day = ? AND provider = ? AND metric = ?').get(day, provider, metric) as { hist: string } | undefined;
    const hist = parseHist(old?.hist);
    for (const [b, n] of counts) hist[b] = (hist[b] ?? 0) + n;
    this.statements.get('INSERT OR REPLACE INTO latency_daily (day, provider, metric, hist) VALUES (?, ?, ?, ?)').run(day, provider, metric, JSON.stringify(hist));
  }

  /**
   * Deletes raw rows started before `rawBefore` and rollups of hours before `rollupBefore`, at most
   * `chunk` rows per statement so a large backlog never holds the write lock for long.
   */
  prune(rawBefore: number, rollupBefore: number, chunk = 5_000): PruneResult {
    const out: PruneResult = { requests: 0, hourly: 0, latency: 0 };
    const del = this.db.prepare('DELETE FROM requests WHERE id IN (SELECT id FROM requests WHERE started_at < ? ORDER BY started_at LIMIT ?)');
    for (;;) {
      const n = Number(del.run(rawBefore, chunk).changes);
      out.requests += n;
      if (n < chunk) break;
    }
    const delBodies = this.db.prepare('DELETE FROM bodies WHERE rowid IN (SELECT rowid FROM bodies WHERE started_at < ? ORDER BY started_at LIMIT ?)');
    while (Number(delBodies.run(rawBefore, chunk).changes) === chunk) { /* next chunk */ }
    const del2 = (sql: string, at: number) => Number(this.db.prepare(sql).run(at).changes);
    out.hourly = del2('DELETE FROM hourly WHERE hour < ?', rollupBefore) + del2('DELETE FROM hourly_totals WHERE hour < ?', rollupBefore)
      + del2('DELETE FROM daily WHERE day < ?', floorDay(rollupBefore));
    out.latency = del2('DELETE FROM latency_hourly WHERE hour < ?', rollupBefore) + del2('DELETE FROM latency_daily WHERE day < ?', floorDay(rollupBefore));
    // A row pruned while the shared store was away for longer than the retention is not sent late.
    if (out.requests > 0) this.db.exec('DELETE FROM usage_outbox WHERE NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = usage_outbox.id)');
    if (out.requests + out.hourly + out.latency > 0) this.db.exec('PRAGMA incremental_vacuum(2000)');
    return out;
  }

  /** The stored bodies of one request, if `logBodies` was on when it ran. */
  body(requestId: string): BodyRow | undefined {
    const r = this.db.prepare('SELECT request_id, started_at, request, response FROM bodies WHERE request_id = ?').get(requestId) as
      { request_id: string; started_at: number; request: string | null; response: string | null } | undefined;
    return r && { requestId: r.request_id, startedAt: r.started_at, request: r.request, response: r.response };
  }

  /** Which of these requests have stored bodies (for the dashboard's "body" links). */
  withBodies(requestIds: readonly string[]): Set<string> {
    if (requestIds.length === 0) return new Set();
    const rows = this.db.prepare(`SELECT request_id FROM bodies WHERE request_id IN (${requestIds.map(() => '?').join(', ')})`).all(...requestIds) as Array<{ request_id: string }>;
    return new Set(rows.map((r) => r.request_id));
  }

  count(): number {
    return Number((this.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n);
  }

  close(): void {
    if (!this.db.isOpen) return;
    try {
      this.db.exec('PRAGMA optimize');
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch { /* best effort: the WAL is replayed on the next open anyway */ }
    this.db.close();
  }
}
