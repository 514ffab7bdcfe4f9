// Read side of the usage history. Totals, charts and by-day come from the per-hour totals (8,760
// rows a year); breakdowns by key, provider or model and latency read daily rollups for whole UTC
// days and hourly ones only for the partial days at either end. The recent-requests table reads
// raw rows. `gateway usage` and the dashboard call these same functions, so they always agree.
import type { Database } from '../../store/sqlite.js';
import { cacheHitRatio } from '../events.js';
import { DAY_MS, HOUR_MS, floorDay, floorHour, parseHist, type UsageRow } from './store.js';
import { percentiles, type Percentiles } from './latency.js';
import { LIMIT_KINDS, type LimitKind } from '../../limits/limits.js';

/**
 * `key` is the proxy key a client used; `provider-key` the provider key (of a pool, by its label)
 * that served; `session` the session the client named (read from the request rows, so it covers
 * the raw rows' retention, not the rollups'); `daemon` the daemon that served (team mode).
 */
export type GroupBy = 'model' | 'key' | 'provider' | 'provider-key' | 'day' | 'session' | 'daemon';
export const GROUP_BY: readonly GroupBy[] = ['model', 'key', 'provider', 'provider-key', 'day', 'session', 'daemon'];

/**
 * Tokens are counted as events.ts TokenUsage counts them, whichever door and provider: inputTokens
 * is the whole prompt, its cache reads (cachedTokens) and cache writes (cacheWriteTokens, of which
 * cacheWrite1hTokens had a 1-hour TTL) included; outputTokens includes reasoningTokens.
 */
export interface UsageTotals {
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
  reasoningTokens: number;
  /** Cache reads / all input tokens (0 to 1); null without input. */
  cacheHitRatio: number | null;
  /** USD of the priced requests; null when none of them could be priced. */
  cost: number | null;
  /** USD the prompt cache saved on the priced requests (cached tokens at the input price, less what they cost); null when none could be priced. */
  cacheSaved: number | null;
  /** Requests whose cost is unknown (model not in the price table, or no token counts). */
  unpricedRequests: number;
  avgDurationMs: number | null;
}

export interface UsageGroup extends UsageTotals {
  /**
   * Stable identifier: `provider/model`, key id, provider, `provider#label` (`provider` alone for a
   * provider without a pool), local `YYYY-MM-DD`, or the daemon's id ('' for rows from before daemons were recorded).
   */
  group: string;
  /** What to show: same as group, except the key's name for `by key`, `provider (no pool)` for `by provider-key` and `(not recorded)` for a daemon ''. */
  label: string;
}

export interface Range { since: number; until: number }

interface RawSums {
  requests: number; errors: number; input: number; output: number; cached: number; cache_write: number; cache_write_1h: number;
  reasoning: number; cost: number; cache_saved: number; unpriced: number; duration: number;
}

const SUMS = `SUM(requests) AS requests, SUM(errors) AS errors, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
  SUM(cached_tokens) AS cached, SUM(cache_write_tokens) AS cache_write, SUM(cache_write_1h_tokens) AS cache_write_1h,
  SUM(reasoning_tokens) AS reasoning, SUM(cost) AS cost, SUM(cache_saved) AS cache_saved, SUM(unpriced) AS unpriced, SUM(duration_ms) AS duration`;

/** A ratio to four places (77.92%), so JSON shows 0.7792; null when there is none. */
const roundRatio = (r: number | undefined): number | null => (r === undefined ? null : Math.round(r * 10_000) / 10_000);

/** Rounds to a hundred-millionth of a dollar so JSON shows 0.0042, not 0.004200000000000001. */
export const roundUsd = (v: number): number => Math.round(v * 1e8) / 1e8;

function totalsOf(s: RawSums | undefined): UsageTotals {
  const requests = Number(s?.requests ?? 0);
  const unpriced = Number(s?.unpriced ?? 0);
  const input = Number(s?.input ?? 0);
  const cached = Number(s?.cached ?? 0);
  const priced = !(requests > 0 && unpriced === requests);
  return {
    requests,
    errors: Number(s?.errors ?? 0),
    inputTokens: input,
    outputTokens: Number(s?.output ?? 0),
    cachedTokens: cached,
    cacheWriteTokens: Number(s?.cache_write ?? 0),
    cacheWrite1hTokens: Number(s?.cache_write_1h ?? 0),
    reasoningTokens: Number(s?.reasoning ?? 0),
    cacheHitRatio: roundRatio(cacheHitRatio(cached, input)),
    cost: priced ? roundUsd(Number(s?.cost ?? 0)) : null,
    cacheSaved: priced ? roundUsd(Number(s?.cache_saved ?? 0)) : null,
    unpricedRequests: unpriced,
    avgDurationMs: requests > 0 ? Number(s?.duration ?? 0) / requests : null,
  };
}

function addSums(into: RawSums, s: RawSums): void {
  for (const k of Object.keys(into) as (keyof RawSums)[]) into[k] += Number(s[k] ?? 0);
}
const zeroSums = (): RawSums => ({
  requests: 0, errors: 0, input: 0, output: 0, cached: 0, cache_write: 0, cache_write_1h: 0, reasoning: 0, cost: 0, cache_saved: 0, unpriced: 0, duration: 0,
});

/** Rollups cover whole hours: a range starts at the top of the hour that contains `since`. */
export function hourRange(since: number, until: number): { from: number; to: number } {
  return { from: floorHour(since), to: floorHour(until) + HOUR_MS };
}

/** [from, to) as whole UTC days (daily tables) plus the hours before and after them (hourly tables). */
export function splitRange(from: number, to: number): { hours: Array<[number, number]>; days: [number, number] | null } {
  const d0 = Math.ceil(from / DAY_MS) * DAY_MS;
  const d1 = floorDay(to);
  if (d1 <= d0) return { hours: [[from, to]], days: null };
  return { hours: ([[from, d0], [d1, to]] as Array<[number, number]>).filter(([a, b]) => b > a), days: [d0, d1] };
}

const DIM_COLUMNS = `key_id, key_name, provider, model, key_label, daemon, requests, errors, input_tokens, output_tokens, cached_tokens, cache_write_tokens,
  cache_write_1h_tokens, reasoning_tokens, cost, cache_saved, unpriced, duration_ms`;

/** A subquery over the rollups by key/provider/model for a range, and its parameters. */
function dims(r: Range): { sql: string; args: number[] } {
  const { from, to } = hourRange(r.since, r.until);
  const split = splitRange(from, to);
  const parts = split.hours.map(() => `SELECT ${DIM_COLUMNS} FROM hourly WHERE hour >= ? AND hour < ?`);
  const args = split.hours.flat();
  if (split.days) { parts.push(`SELECT ${DIM_COLUMNS} FROM daily WHERE day >= ? AND day < ?`); args.push(...split.days); }
  return { sql: `(${parts.join(' UNION ALL ')})`, args };
}

/** `YYYY-MM-DD` of the local day containing `ms` (the daemon's time zone). */
export function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function byCost(a: UsageGroup, b: UsageGroup): number {
  return (b.cost ?? -1) - (a.cost ?? -1) || b.requests - a.requests || a.label.localeCompare(b.label);
}

/** SQLite's idea of the local day (the process time zone, DST included) of an hour column. */
const LOCAL_DAY = "date(hour / 1000, 'unixepoch', 'localtime')";

export function usageTotals(db: Database, r: Range): UsageTotals {
  const { from, to } = hourRange(r.since, r.until);
  return totalsOf(db.prepare(`SELECT ${SUMS} FROM hourly_totals WHERE hour >= ? AND hour < ?`).get(from, to) as unknown as RawSums);
}

/** One row per key × provider × model × provider key label ('' without a pool) × daemon ('' unrecorded) in the range, summed inside SQLite. */
export interface Combo extends RawSums { key_id: string; key_name: string; provider: string; model: string; key_label: string; daemon: string }

export function usageCombos(db: Database, r: Range): Combo[] {
  const src = dims(r);
  return db.prepare(`SELECT key_id, MAX(key_name) AS key_name, provider, model, key_label, daemon, ${SUMS} FROM ${src.sql} GROUP BY key_id, provider, model, key_label, daemon`)
    .all(...src.args) as unknown as Combo[];
}

/**
 * The purpose of a session key `chat` or `run` gave itself (named `<purpose>.<its id>`, see
 * KeyStore.createSession), from its usage row; undefined for any other key. Each session has a
 * key of its own, so counted apart they would bury the keys a user made under one row per chat.
 */
export function sessionPurpose(keyId: string, keyName: string): string | undefined {
  const m = /^(chat|run)\.([0-9a-f]+)$/.exec(keyName);
  return m && m[2] === keyId ? m[1] : undefined;
}

/** A combo's group and what to show for it; `sessionsApart` keeps each session key a group of its own. */
function groupOf(c: Combo, by: Exclude<GroupBy, 'day' | 'session'>, sessionsApart: boolean): [string, string] {
  switch (by) {
    case 'model': { const m = `${c.provider}/${c.model || '(unknown)'}`; return [m, m]; }
    case 'key': {
      const purpose = sessionsApart ? undefined : sessionPurpose(String(c.key_id), String(c.key_name));
      if (purpose) { const g = `${purpose} (sessions)`; return [g, g]; }
      return [String(c.key_id), String(c.key_name)];
    }
    case 'provider': return [c.provider, c.provider];
    case 'provider-key': return c.key_label ? [`${c.provider}#${c.key_label}`, `${c.provider}#${c.key_label}`] : [c.provider, `${c.provider} (no pool)`];
    case 'daemon': return [String(c.daemon), String(c.daemon) || '(not recorded)'];
    default: { const never: never = by; return never; }
  }
}

/**
 * Groups combos by model, key, provider or provider key. By key, the session keys of `chat` and
 * of `run` are summed into one row each (`chat (sessions)`), unless `sessionsApart`.
 */
export function groupCombos(combos: readonly Combo[], by: Exclude<GroupBy, 'day' | 'session'>, sessionsApart = false): UsageGroup[] {
  const groups = new Map<string, { label: string; sums: RawSums }>();
  for (const c of combos) {
    const [group, label] = groupOf(c, by, sessionsApart);
    let g = groups.get(group);
    if (!g) { g = { label, sums: zeroSums() }; groups.set(group, g); }
    addSums(g.sums, c);
    if (by === 'key' && label > g.label) g.label = label;
  }
  return [...groups.entries()].map(([group, g]) => ({ group, label: g.label, ...totalsOf(g.sums) })).sort(byCost);
}

/** The request rows' own sums, by session ('' for the requests that named none), over the same whole hours as the rollups. */
const SESSION_SUMS = `COUNT(*) AS requests, SUM(status >= 400) AS errors, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
  SUM(cached_tokens) AS cached, SUM(cache_write_tokens) AS cache_write, SUM(cache_write_1h_tokens) AS cache_write_1h,
  SUM(reasoning_tokens) AS reasoning, SUM(cost) AS cost, SUM(cache_saved) AS cache_saved, SUM(cost IS NULL) AS unpriced, SUM(duration_ms) AS duration`;

function sessionGroups(db: Database, r: Range): UsageGroup[] {
  const { from, to } = hourRange(r.since, r.until);
  const rows = db.prepare(`SELECT COALESCE(session, '') AS session, ${SESSION_SUMS} FROM requests WHERE started_at >= ? AND started_at < ? GROUP BY 1`)
    .all(from, to) as unknown as Array<RawSums & { session: string }>;
  return rows.map((s) => ({ group: s.session, label: s.session || '(none named)', ...totalsOf(s) })).sort(byCost);
}

export function usageGroups(db: Database, r: Range, by: GroupBy, sessionsApart = false): UsageGroup[] {
  if (by === 'session') return sessionGroups(db, r);
  if (by !== 'day') return groupCombos(usageCombos(db, r), by, sessionsApart);
  const { from, to } = hourRange(r.since, r.until);
  const rows = db.prepare(`SELECT ${LOCAL_DAY} AS day, ${SUMS} FROM hourly_totals WHERE hour >= ? AND hour < ? GROUP BY day ORDER BY day`)
    .all(from, to) as unknown as Array<RawSums & { day: string }>;
  return rows.map((s) => ({ group: s.day, label: s.day, ...totalsOf(s) }));
}

/** Requests a key's own limit refused, per limit, and those refused for a model without a price (a key with a budget). */
export interface Refusals extends Record<LimitKind, number> { unpricedModel: number }

/**
 * Refusals in the range, from the recorded requests (kept `retentionDays`, so a range reaching
 * further back counts only what is still kept).
 */
export function refusalCounts(db: Database, r: Range): Refusals {
  const out: Refusals = { budget: 0, rpm: 0, tpm: 0, concurrency: 0, unpricedModel: 0 };
  const rows = db.prepare(`SELECT limit_kind AS kind, error_code AS code, COUNT(*) AS n FROM requests
    WHERE started_at >= ? AND started_at < ? AND (limit_kind IS NOT NULL OR error_code = 'model_unpriced') GROUP BY 1, 2`)
    .all(hourRange(r.since, r.until).from, r.until + 1) as unknown as Array<{ kind: string | null; code: string | null; n: number }>;
  for (const row of rows) {
    if (row.kind !== null && (LIMIT_KINDS as readonly string[]).includes(row.kind)) out[row.kind as LimitKind] += Number(row.n);
    else if (row.code === 'model_unpriced') out.unpricedModel += Number(row.n);
  }
  return out;
}

export interface SeriesPoint {
  /** Start of the bucket, ms since epoch. */
  t: number;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cost: number;
}

const SERIES_SUMS = 'SUM(requests) AS requests, SUM(errors) AS errors, SUM(input_tokens) AS input, SUM(output_tokens) AS output, SUM(cached_tokens) AS cached, SUM(cost) AS cost';

/** Continuous buckets (empty ones included) from the hour or local day containing `since` to `until`. */
export function usageSeries(db: Database, r: Range, bucket: 'hour' | 'day'): SeriesPoint[] {
  const { from, to } = hourRange(r.since, r.until);
  const starts: number[] = [];
  if (bucket === 'hour') {
    for (let t = from; t < to; t += HOUR_MS) starts.push(t);
  } else {
    const d = new Date(from);
    d.setHours(0, 0, 0, 0);
    while (d.getTime() < to) { starts.push(d.getTime()); d.setDate(d.getDate() + 1); }
  }
  const index = new Map(starts.map((t, i) => [bucket === 'hour' ? String(t) : localDay(t), i]));
  const key = bucket === 'hour' ? 'hour' : LOCAL_DAY;
  const rows = db.prepare(`SELECT ${key} AS k, ${SERIES_SUMS} FROM hourly_totals WHERE hour >= ? AND hour < ? GROUP BY k`)
    .all(from, to) as unknown as Array<{ k: string | number; requests: number; errors: number; input: number; output: number; cached: number; cost: number }>;
  const points = starts.map((t) => ({ t, requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, cost: 0 }));
  for (const s of rows) {
    const p = points[index.get(String(s.k)) ?? -1];
    if (!p) continue;
    p.requests += Number(s.requests); p.errors += Number(s.errors);
    p.inputTokens += Number(s.input); p.outputTokens += Number(s.output); p.cachedTokens += Number(s.cached);
    p.cost = roundUsd(p.cost + Number(s.cost));
  }
  return points;
}

export interface ProviderLatency { provider: string; duration: Percentiles; ttfb: Percentiles }

export function latencyByProvider(db: Database, r: Range): ProviderLatency[] {
  const { from, to } = hourRange(r.since, r.until);
  const split = splitRange(from, to);
  const hists = new Map<string, { duration: Map<number, number>; ttfb: Map<number, number> }>();
  const add = (provider: string, metric: string, bucket: number, n: number) => {
    let h = hists.get(provider);
    if (!h) { h = { duration: new Map(), ttfb: new Map() }; hists.set(provider, h); }
    const m = metric === 'ttfb' ? h.ttfb : h.duration;
    m.set(bucket, (m.get(bucket) ?? 0) + n);
  };
  const edge = db.prepare('SELECT provider, metric, bucket, SUM(count) AS n FROM latency_hourly WHERE hour >= ? AND hour < ? GROUP BY provider, metric, bucket');
  for (const [a, b] of split.hours) {
    for (const row of edge.all(a, b) as unknown as Array<{ provider: string; metric: string; bucket: number; n: number }>) add(row.provider, row.metric, Number(row.bucket), Number(row.n));
  }
  if (split.days) {
    const days = db.prepare('SELECT provider, metric, hist FROM latency_daily WHERE day >= ? AND day < ?').all(...split.days) as unknown as Array<{ provider: string; metric: string; hist: string }>;
    for (const row of days) for (const [b, n] of Object.entries(parseHist(row.hist))) add(row.provider, row.metric, Number(b), Number(n));
  }
  return [...hists.entries()].sort((a, b) => a[0].localeCompare(b[0]))
    .map(([provider, h]) => ({ provider, duration: percentiles(h.duration), ttfb: percentiles(h.ttfb) }));
}

export interface RequestFilter {
  since?: number;
  keyId?: string;
  provider?: string;
  model?: string;
  daemon?: string;
  status?: 'ok' | 'error';
  /** Cursor from a previous page (`next`). */
  before?: string;
  limit?: number;
}

export interface StoredRequest extends UsageRow { id: number }

interface DbRequest {
  id: number; request_id: string; started_at: number; key_id: string; key_name: string; mode: string; provider: string;
  model: string | null; requested_model: string | null; method: string; path: string; stream: number; status: number; error_code: string | null;
  error_message: string | null; duration_ms: number; ttfb_ms: number | null; request_bytes: number; output_bytes: number;
  input_tokens: number | null; output_tokens: number | null; cached_tokens: number | null; cache_write_tokens: number | null;
  reasoning_tokens: number | null; cost: number | null; route: string | null; waited_ms: number | null; key_label: string | null;
  cache_write_1h_tokens: number | null; cache_saved: number | null; session: string | null; limit_kind: string | null; daemon: string | null;
}

function fromDb(r: DbRequest): StoredRequest {
  return {
    id: r.id, requestId: r.request_id, startedAt: r.started_at, keyId: r.key_id, keyName: r.key_name,
    mode: r.mode as StoredRequest['mode'], provider: r.provider as StoredRequest['provider'], model: r.model,
    requestedModel: r.requested_model, method: r.method, path: r.path, stream: r.stream === 1, status: r.status, errorCode: r.error_code,
    errorMessage: r.error_message, durationMs: r.duration_ms, ttfbMs: r.ttfb_ms, requestBytes: r.request_bytes,
    outputBytes: r.output_bytes, inputTokens: r.input_tokens, outputTokens: r.output_tokens, cachedTokens: r.cached_tokens,
    cacheWriteTokens: r.cache_write_tokens, cacheWrite1hTokens: r.cache_write_1h_tokens, reasoningTokens: r.reasoning_tokens,
    cost: r.cost, cacheSaved: r.cache_saved, session: r.session, route: r.route, waitedMs: r.waited_ms, keyLabel: r.key_label,
    limit: (r.limit_kind ?? null) as LimitKind | null, daemon: r.daemon ?? null,
  };
}

/** Newest first; `next` is the cursor for the following page, null at the end. */
export function recentRequests(db: Database, f: RequestFilter): { rows: StoredRequest[]; next: string | null } {
  const where: string[] = [];
  const args: Array<string | number> = [];
  if (f.since !== undefined) { where.push('started_at >= ?'); args.push(f.since); }
  if (f.keyId) { where.push('key_id = ?'); args.push(f.keyId); }
  if (f.provider) { where.push('provider = ?'); args.push(f.provider); }
  if (f.model) { where.push('model = ?'); args.push(f.model); }
  if (f.daemon !== undefined) { where.push("COALESCE(daemon, '') = ?"); args.push(f.daemon); }
  if (f.status === 'ok') where.push('status < 400');
  if (f.status === 'error') where.push('status >= 400');
  const cursor = /^(\d+):(\d+)$/.exec(f.before ?? '');
  if (cursor) {
    where.push('(started_at < ? OR (started_at = ? AND id < ?))');
    args.push(Number(cursor[1]), Number(cursor[1]), Number(cursor[2]));
  }
  const limit = Math.min(Math.max(Math.trunc(f.limit ?? 50), 1), 500);
  const sql = `SELECT * FROM requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, id DESC LIMIT ?`;
  const rows = (db.prepare(sql).all(...args, limit + 1) as unknown as DbRequest[]).map(fromDb);
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const last = rows[rows.length - 1];
  return { rows, next: more && last ? `${last.startedAt}:${last.id}` : null };
}

/** Every stored request after requests.id `afterId`, in the order they were written, `limit` at a time (`gateway store migrate`). */
export function requestsAfter(db: Database, afterId: number, limit: number): StoredRequest[] {
  return (db.prepare('SELECT * FROM requests WHERE id > ? ORDER BY id LIMIT ?').all(afterId, limit) as unknown as DbRequest[]).map(fromDb);
}

export interface FilterOptions { keys: Array<{ id: string; name: string }>; providers: string[]; models: string[] }

/** What the filters can offer for a range: the keys, providers and models that appear in it. */
export function filterOptions(db: Database, r: Range, combos: readonly Combo[] = usageCombos(db, r)): FilterOptions {
  const keys = new Map<string, string>();
  for (const c of combos) if (!keys.has(String(c.key_id)) || String(c.key_name) > keys.get(String(c.key_id))!) keys.set(String(c.key_id), String(c.key_name));
  return {
    keys: [...keys.entries()].map(([id, name]) => ({ id, name })).sort((a, b) => a.name.localeCompare(b.name)),
    providers: [...new Set(combos.map((c) => c.provider))].sort(),
    models: [...new Set(combos.map((c) => c.model).filter(Boolean))].sort(),
  };
}

/** One key's cost per hour in [from, to), hour start → USD, from the hourly rollups (every model and provider summed). */
export function keyCostByHour(db: Database, keyId: string, from: number, to: number): Map<number, number> {
  const rows = db.prepare('SELECT hour, SUM(cost) AS cost FROM hourly WHERE key_id = ? AND hour >= ? AND hour < ? GROUP BY hour')
    .all(keyId, from, to) as unknown as Array<{ hour: number; cost: number }>;
  return new Map(rows.map((r) => [Number(r.hour), Number(r.cost)]));
}
