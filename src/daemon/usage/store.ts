// The usage history: one SQLite file (`usage.db`, 0600) in the state directory. Raw request rows
// are kept for the retention period; hourly rollups (totals per key/provider/model and latency
// histograms per provider) are written in the same transaction as the rows they summarize, so the
// two never disagree, and they outlive the raw rows so long ranges render from a few rows per hour.
import { closeSync, existsSync, openSync, renameSync } from 'node:fs';
import type { ProviderId } from '../../providers/types.js';
import type { RequestMode } from '../events.js';
import { latencyBucket } from './latency.js';
import { migrate } from './schema.js';
import { loadSqlite, type Database } from './sqlite.js';

export const USAGE_DB_FILE = 'usage.db';
export const HOUR_MS = 3_600_000;

export interface UsageRow {
  requestId: string;
  startedAt: number; // ms since epoch
  keyId: string;
  keyName: string;
  mode: RequestMode;
  provider: ProviderId;
  model: string | null;
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
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  cacheWriteTokens: number | null;
  reasoningTokens: number | null;
  /** USD; null when unknown (model not in the price table, or no token counts reported). */
  cost: number | null;
}

export const floorHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
export const isError = (status: number): boolean => status >= 400;

const INSERT_REQUEST = `INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, method, path,
  stream, status, error_code, error_message, duration_ms, ttfb_ms, request_bytes, output_bytes, input_tokens, output_tokens,
  cached_tokens, cache_write_tokens, reasoning_tokens, cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const UPSERT_HOURLY = `INSERT INTO hourly (hour, key_id, provider, model, key_name, requests, errors, input_tokens, output_tokens,
  cached_tokens, cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (hour, key_id, provider, model) DO UPDATE SET key_name = excluded.key_name,
  requests = requests + excluded.requests, errors = errors + excluded.errors,
  input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
  cached_tokens = cached_tokens + excluded.cached_tokens, cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
  reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost = cost + excluded.cost,
  unpriced = unpriced + excluded.unpriced, duration_ms = duration_ms + excluded.duration_ms`;

const UPSERT_LATENCY = `INSERT INTO latency_hourly (hour, provider, metric, bucket, count) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (hour, provider, metric, bucket) DO UPDATE SET count = count + excluded.count`;

interface HourAgg {
  hour: number; keyId: string; provider: string; model: string; keyName: string;
  requests: number; errors: number; input: number; output: number; cached: number; cacheWrite: number; reasoning: number;
  cost: number; unpriced: number; duration: number;
}

/** Per-batch pre-aggregation, so a batch of a thousand rows is a handful of rollup upserts. */
function aggregate(rows: readonly UsageRow[]): { hourly: HourAgg[]; latency: Map<string, number> } {
  const hourly = new Map<string, HourAgg>();
  const latency = new Map<string, number>();
  for (const r of rows) {
    const hour = floorHour(r.startedAt);
    const model = r.model ?? '';
    const k = `${hour}\u0000${r.keyId}\u0000${r.provider}\u0000${model}`;
    let a = hourly.get(k);
    if (!a) {
      a = { hour, keyId: r.keyId, provider: r.provider, model, keyName: r.keyName, requests: 0, errors: 0, input: 0, output: 0, cached: 0, cacheWrite: 0, reasoning: 0, cost: 0, unpriced: 0, duration: 0 };
      hourly.set(k, a);
    }
    a.requests++;
    if (isError(r.status)) a.errors++;
    a.input += r.inputTokens ?? 0;
    a.output += r.outputTokens ?? 0;
    a.cached += r.cachedTokens ?? 0;
    a.cacheWrite += r.cacheWriteTokens ?? 0;
    a.reasoning += r.reasoningTokens ?? 0;
    if (r.cost === null) a.unpriced++; else a.cost += r.cost;
    a.duration += r.durationMs;
    if (isError(r.status)) continue; // error latencies (fast refusals) would flatter the percentiles
    const add = (metric: 'duration' | 'ttfb', ms: number) => {
      const lk = `${hour}\u0000${r.provider}\u0000${metric}\u0000${latencyBucket(ms)}`;
      latency.set(lk, (latency.get(lk) ?? 0) + 1);
    };
    add('duration', r.durationMs);
    if (r.ttfbMs !== null) add('ttfb', r.ttfbMs);
  }
  return { hourly: [...hourly.values()], latency };
}

const int = (v: number | null): number | null => (v === null ? null : Math.round(v));

export interface PruneResult { requests: number; hourly: number; latency: number }

export class UsageStore {
  private constructor(readonly db: Database, readonly path: string) {}

  /**
   * Opens (creating, 0600) and migrates the database. A file SQLite cannot read is moved aside as
   * `usage.db.corrupt-<time>` and a fresh one started: history is worth less than a daemon that runs.
   */
  static async open(path: string, opts: { log?: (line: string) => void } = {}): Promise<UsageStore> {
    const { DatabaseSync } = await loadSqlite();
    const openDb = (): Database => {
      if (path !== ':memory:' && !existsSync(path)) closeSync(openSync(path, 'a', 0o600));
      const db = new DatabaseSync(path);
      try {
        db.exec('PRAGMA busy_timeout = 5000');
        // auto_vacuum only takes effect before the first table exists: it lets pruning give space back.
        db.exec('PRAGMA auto_vacuum = INCREMENTAL');
        db.exec('PRAGMA journal_mode = WAL');
        // WAL + NORMAL: a committed batch survives a killed process; only a power cut can lose the last one.
        db.exec('PRAGMA synchronous = NORMAL');
        migrate(db);
        return db;
      } catch (e) {
        db.close();
        throw e;
      }
    };
    try {
      return new UsageStore(openDb(), path);
    } catch (e) {
      const msg = (e as Error).message;
      if (path === ':memory:' || !/not a database|malformed|corrupt/i.test(msg)) throw e;
      const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      renameSync(path, aside);
      for (const ext of ['-wal', '-shm']) { try { renameSync(path + ext, aside + ext); } catch { /* absent */ } }
      opts.log?.(`usage: ${path} could not be read (${msg}); moved it to ${aside} and started a new history`);
      return new UsageStore(openDb(), path);
    }
  }

  /** Writes rows and their rollups in one transaction (all or nothing). */
  insert(rows: readonly UsageRow[]): void {
    if (rows.length === 0) return;
    const { hourly, latency } = aggregate(rows);
    const db = this.db;
    const ins = db.prepare(INSERT_REQUEST);
    const up = db.prepare(UPSERT_HOURLY);
    const lat = db.prepare(UPSERT_LATENCY);
    db.exec('BEGIN IMMEDIATE');
    try {
      for (const r of rows) {
        ins.run(r.requestId, r.startedAt, r.keyId, r.keyName, r.mode, r.provider, r.model, r.method, r.path,
          r.stream ? 1 : 0, r.status, r.errorCode, r.errorMessage, r.durationMs, r.ttfbMs, r.requestBytes, r.outputBytes,
          int(r.inputTokens), int(r.outputTokens), int(r.cachedTokens), int(r.cacheWriteTokens), int(r.reasoningTokens), r.cost);
      }
      for (const a of hourly) {
        up.run(a.hour, a.keyId, a.provider, a.model, a.keyName, a.requests, a.errors, Math.round(a.input), Math.round(a.output),
          Math.round(a.cached), Math.round(a.cacheWrite), Math.round(a.reasoning), a.cost, a.unpriced, a.duration);
      }
      for (const [k, count] of latency) {
        const [hour, provider, metric, bucket] = k.split('\u0000');
        lat.run(Number(hour), provider!, metric!, Number(bucket), count);
      }
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
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
    out.hourly = Number(this.db.prepare('DELETE FROM hourly WHERE hour < ?').run(rollupBefore).changes);
    out.latency = Number(this.db.prepare('DELETE FROM latency_hourly WHERE hour < ?').run(rollupBefore).changes);
    if (out.requests + out.hourly + out.latency > 0) this.db.exec('PRAGMA incremental_vacuum(2000)');
    return out;
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
