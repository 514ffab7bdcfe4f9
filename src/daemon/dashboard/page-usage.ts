// Usage page, rendered on the server from the hourly rollups: totals, requests and tokens over
// time, cost by model and by key, latency percentiles per provider, and the recent requests with
// filters (plain GET parameters, so every view has a URL).
import { parseRoute } from '../observe/route-text.js';
import { Html, html } from './html.js';
import { legend, meter, timeChart } from './charts.js';
import { fmtCompact, fmtDateTime, fmtDay, fmtClock, fmtInt, fmtMs, fmtPct, fmtUsd, providerName } from './format.js';
import type { FilterOptions, ProviderLatency, SeriesPoint, StoredRequest, UsageGroup, UsageTotals } from '../observe/usage/queries.js';

export const RANGES = ['24h', '7d', '30d', '90d', '1y'] as const;
export type RangeId = (typeof RANGES)[number];
const RANGE_LABEL: Record<RangeId, string> = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days', '90d': 'Last 90 days', '1y': 'Last year' };

export interface UsageFilters { key?: string; provider?: string; model?: string; status?: 'ok' | 'error'; before?: string }

export interface UsageView {
  range: RangeId;
  bucket: 'hour' | 'day';
  totals: UsageTotals;
  series: SeriesPoint[];
  byModel: UsageGroup[];
  byKey: UsageGroup[];
  /** Team mode (or a history several daemons served): which daemon served what, and the requests' daemon column. */
  byDaemon?: UsageGroup[];
  latency: ProviderLatency[];
  recent: { rows: StoredRequest[]; next: string | null };
  /** Which of the recent requests have stored bodies (usage.logBodies); none: no "body" column. */
  bodies?: ReadonlySet<string>;
  options: FilterOptions;
  filters: UsageFilters;
  prices: { date: string; overrides: number };
  retention: { retentionDays: number; rollupRetentionDays: number };
}

function qs(params: Record<string, string | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
}

function costCell(cost: number | null, unpriced: number, requests: number): Html {
  if (requests === 0) return html`<span class="muted">–</span>`;
  if (cost === null) return html`<span class="muted" title="no price for this model in the price table">unknown</span>`;
  return html`${fmtUsd(cost)}${unpriced > 0 ? html`<div class="muted small nowrap" title="${unpriced} could not be priced">+${fmtInt(unpriced)} unpriced</div>` : ''}`;
}

/** The cache's part of the input: reads, writes and the hit ratio (reads / all input). */
function cacheText(t: UsageTotals): Html {
  return html`<span data-cache-read="${t.cachedTokens}">${fmtCompact(t.cachedTokens)} cache read</span> · <span data-cache-write="${t.cacheWriteTokens}">${fmtCompact(t.cacheWriteTokens)} written</span> · <span data-cache-hit="${t.cacheHitRatio ?? ''}">${fmtPct(t.cacheHitRatio)} hit</span>`;
}

function stats(t: UsageTotals): Html {
  const errRate = t.requests > 0 ? (t.errors / t.requests) * 100 : 0;
  return html`<div class="stats four">
  <div class="stat"><div class="stat-label">Requests</div><div class="stat-value" data-stat="requests" data-value="${t.requests}">${fmtInt(t.requests)}</div>
    <div class="stat-foot ${t.errors > 0 ? 'bad' : ''}">${fmtInt(t.errors)} ${t.errors === 1 ? 'error' : 'errors'}${t.requests > 0 ? ` · ${errRate.toFixed(errRate < 10 ? 1 : 0)}%` : ''}</div></div>
  <div class="stat"><div class="stat-label">Input tokens</div><div class="stat-value" data-stat="input" data-value="${t.inputTokens}">${fmtCompact(t.inputTokens)}</div>
    <div class="stat-foot" title="input tokens include the cache reads and writes">${cacheText(t)}</div></div>
  <div class="stat"><div class="stat-label">Output tokens</div><div class="stat-value" data-stat="output" data-value="${t.outputTokens}">${fmtCompact(t.outputTokens)}</div>
    <div class="stat-foot">${fmtCompact(t.reasoningTokens)} reasoning</div></div>
  <div class="stat"><div class="stat-label">Cost</div><div class="stat-value" data-stat="cost" data-value="${t.cost ?? ''}">${t.requests === 0 ? '$0.00' : fmtUsd(t.cost)}</div>
    <div class="stat-foot">${t.requests === 0 ? 'no requests' : t.unpricedRequests > 0 ? `${fmtInt(t.unpricedRequests)} ${t.unpricedRequests === 1 ? 'request' : 'requests'} unpriced` : 'all requests priced'}</div>
    ${t.cacheSaved !== null && t.cachedTokens + t.cacheWriteTokens > 0 ? html`<div class="stat-foot" data-cache-saved="${t.cacheSaved}" title="the cached tokens at the input price, less what they cost">cache saved ${fmtUsd(t.cacheSaved)}</div>` : ''}</div>
</div>`;
}

function bucketLabel(t: number, bucket: 'hour' | 'day'): string {
  return bucket === 'day' ? fmtDay(t) : `${fmtDay(t)} ${fmtClock(t)}`;
}

function charts(v: UsageView): Html {
  const s = v.series;
  const times = s.map((p) => p.t);
  const requests = timeChart({
    id: 'chart-requests', times, bucket: v.bucket, format: fmtCompact,
    series: [{ name: 'OK', cls: 's0', values: s.map((p) => p.requests - p.errors) }, { name: 'Errors', cls: 'err', values: s.map((p) => p.errors) }],
    describe: (i) => `${bucketLabel(s[i]!.t, v.bucket)}: ${fmtInt(s[i]!.requests)} requests, ${fmtInt(s[i]!.errors)} errors`,
  });
  const tokens = timeChart({
    id: 'chart-tokens', times, bucket: v.bucket, format: fmtCompact,
    series: [
      { name: 'Input', cls: 's1', values: s.map((p) => p.inputTokens - p.cachedTokens) },
      { name: 'Cached input', cls: 's1l', values: s.map((p) => p.cachedTokens) },
      { name: 'Output', cls: 's2', values: s.map((p) => p.outputTokens) },
    ],
    describe: (i) => `${bucketLabel(s[i]!.t, v.bucket)}: ${fmtInt(s[i]!.inputTokens)} input (${fmtInt(s[i]!.cachedTokens)} cached), ${fmtInt(s[i]!.outputTokens)} output, ${fmtUsd(s[i]!.cost)}`,
  });
  const per = v.bucket === 'hour' ? 'per hour' : 'per day';
  return html`<section class="card"><div class="card-head"><h2>Requests <span class="muted small">${per}</span></h2>${legend([{ name: 'OK', cls: 's0' }, { name: 'Errors', cls: 'err' }])}</div>${requests}</section>
<section class="card"><div class="card-head"><h2>Tokens <span class="muted small">${per}</span></h2>${legend([{ name: 'Input', cls: 's1' }, { name: 'Cached input', cls: 's1l' }, { name: 'Output', cls: 's2' }])}</div>${tokens}</section>`;
}

/** A group's cache hit ratio under its tokens, its reads, writes and savings on hover, when it used the cache. */
function groupCache(g: UsageGroup): Html | string {
  if (g.cachedTokens + g.cacheWriteTokens === 0) return '';
  const detail = `${fmtInt(g.cachedTokens)} cache read · ${fmtInt(g.cacheWriteTokens)} written${g.cacheSaved !== null ? ` · saved ${fmtUsd(g.cacheSaved)}` : ''}`;
  return html`<div class="muted small nowrap" data-cache-hit="${g.cacheHitRatio ?? ''}" title="${detail}">${fmtPct(g.cacheHitRatio)} cache hit</div>`;
}

/** A "Cost by …" card: `by` names its first column and the `gateway usage --by` that lists every row. */
function breakdown(title: string, id: string, by: { column: string; cli: string }, rows: UsageGroup[], labelCell: (g: UsageGroup) => Html): Html {
  const max = Math.max(0, ...rows.map((r) => r.cost ?? 0));
  const maxReq = Math.max(0, ...rows.map((r) => r.requests));
  return html`<section class="card flush"><div class="card-head pad"><h2>${title}</h2></div>
  ${rows.length === 0 ? html`<p class="muted pad">Nothing in this period.</p>` : html`<table class="table compact" id="${id}">
  <thead><tr><th>${by.column}</th><th class="num">Requests</th><th class="num">Tokens in / out</th><th class="num">Cost</th><th class="meter-col"></th></tr></thead>
  <tbody>${rows.slice(0, 12).map((g) => html`<tr data-group="${g.group}" data-requests="${g.requests}" data-cost="${g.cost ?? ''}">
    <td>${labelCell(g)}</td><td class="num">${fmtInt(g.requests)}</td>
    <td class="num">${fmtCompact(g.inputTokens)} / ${fmtCompact(g.outputTokens)}${groupCache(g)}</td>
    <td class="num">${costCell(g.cost, g.unpricedRequests, g.requests)}</td>
    <td class="meter-col">${max > 0 ? meter(g.cost ?? 0, max) : meter(g.requests, maxReq, 's3')}</td></tr>`)}</tbody></table>
  ${rows.length > 12 ? html`<p class="muted small pad">and ${rows.length - 12} more — see <span class="mono">gateway usage --by ${by.cli}</span></p>` : ''}`}
</section>`;
}

const plainLabel = (g: UsageGroup): Html => html`<span class="nowrap">${g.label}</span>`;

function modelLabel(g: UsageGroup): Html {
  const slash = g.group.indexOf('/');
  const provider = g.group.slice(0, slash);
  return html`<span class="nowrap"><span class="prov-dot ${provider}" title="${providerName(provider)}"></span><span class="mono">${g.group.slice(slash + 1)}</span></span>`;
}

function latencyTable(rows: ProviderLatency[]): Html {
  const max = Math.max(0, ...rows.map((r) => r.duration.p99 ?? 0));
  return html`<section class="card flush"><div class="card-head pad"><h2>Latency by provider</h2><span class="muted small">successful requests</span></div>
  ${rows.length === 0 ? html`<p class="muted pad">No successful requests in this period.</p>` : html`<table class="table compact" id="latency">
  <thead><tr><th>Provider</th><th class="num">Requests</th><th class="num">TTFB p50</th><th class="num">TTFB p90</th><th class="num">Total p50</th><th class="num">Total p90</th><th class="num">Total p99</th><th class="meter-col"></th></tr></thead>
  <tbody>${rows.map((r) => html`<tr data-provider="${r.provider}">
    <td class="nowrap"><span class="prov-dot ${r.provider}"></span>${providerName(r.provider)}</td>
    <td class="num">${fmtInt(r.duration.count)}</td>
    <td class="num">${fmtMs(r.ttfb.p50)}</td><td class="num">${fmtMs(r.ttfb.p90)}</td>
    <td class="num">${fmtMs(r.duration.p50)}</td><td class="num">${fmtMs(r.duration.p90)}</td><td class="num">${fmtMs(r.duration.p99)}</td>
    <td class="meter-col">${meter(r.duration.p50 ?? 0, max, 's0')}</td></tr>`)}</tbody></table>`}
</section>`;
}

function select(name: string, label: string, current: string | undefined, options: Array<{ value: string; label: string }>): Html {
  return html`<label class="filter"><span>${label}</span><select name="${name}" data-autosubmit>
  <option value="">All</option>${options.map((o) => html`<option value="${o.value}"${o.value === current ? html` selected` : ''}>${o.label}</option>`)}</select></label>`;
}

/** A "body" expander (filled by the page script from the admin API), or an empty cell. */
function bodyCell(requestId: string, has: boolean): Html {
  if (!has) return html`<td></td>`;
  const url = `/admin/usage/requests/${encodeURIComponent(requestId)}/body`;
  return html`<td><details class="body-peek" data-body="${url}"><summary>body</summary><a class="muted small" href="${url}">raw JSON</a></details></td>`;
}

/** The name the request asked for, when the provider answered with another (a dated snapshot). */
function askedFor(r: StoredRequest): Html | string {
  if (!r.requestedModel || r.requestedModel === r.model) return '';
  return html`<div class="muted small mono" title="the model the request asked for">asked ${r.requestedModel}</div>`;
}

/** What routing did, when it did more than one attempt or served from a pool: the attempts in full on hover. */
function routeNote(r: StoredRequest): Html | string {
  const attempts = parseRoute(r.route).length;
  if (attempts < 2 && !r.keyLabel) return '';
  const parts = [attempts > 1 ? `${attempts} attempts` : '', r.waitedMs ? `waited ${fmtMs(r.waitedMs)}` : '', r.keyLabel ? `key ${r.keyLabel}` : ''].filter(Boolean);
  return html`<div class="muted small mono" data-route="${r.route ?? ''}" title="${r.route ?? ''}">${parts.join(' · ')}</div>`;
}

/** A request's cache reads and writes (parts of its input), when it had any. */
function cacheNote(r: StoredRequest): Html | string {
  const read = r.cachedTokens ?? 0;
  const written = r.cacheWriteTokens ?? 0;
  if (read + written === 0) return '';
  return html`<div class="muted small nowrap" data-cache-note title="parts of the input">${fmtCompact(read)} cache read · ${fmtCompact(written)} written</div>`;
}

/** One request of the table; `daemons`: with the daemon that served it (team mode). */
export function requestRow(r: StoredRequest, bodies?: ReadonlySet<string>, daemons = false): Html {
  const ok = r.status < 400;
  return html`<tr data-request-id="${r.requestId}">
  <td class="nowrap" title="${new Date(r.startedAt).toISOString()}">${fmtDateTime(r.startedAt)}</td>${daemons ? html`
  <td class="nowrap mono" data-daemon="${r.daemon ?? ''}">${r.daemon || html`<span class="muted">–</span>`}</td>` : ''}
  <td>${r.keyName}</td>
  <td class="nowrap"><span class="prov-dot ${r.provider}" title="${providerName(r.provider)}"></span><span class="mono">${r.model ?? '–'}</span>${askedFor(r)}${routeNote(r)}</td>
  <td><span class="tag">${r.mode}${r.stream ? ' · stream' : ''}</span></td>
  <td><span class="badge ${ok ? 'ok' : 'error'}" title="${r.errorMessage ?? ''}">${r.status}${r.errorCode && !ok ? ` ${r.errorCode}` : ''}</span></td>
  <td class="num">${fmtMs(r.durationMs)}</td>
  <td class="num">${r.inputTokens === null && r.outputTokens === null ? html`<span class="muted">–</span>` : `${fmtCompact(r.inputTokens ?? 0)} / ${fmtCompact(r.outputTokens ?? 0)}`}${cacheNote(r)}</td>
  <td class="num">${r.cost === null ? html`<span class="muted">unknown</span>` : fmtUsd(r.cost)}</td>${bodies ? bodyCell(r.requestId, bodies.has(r.requestId)) : ''}
</tr>`;
}

function recentTable(v: UsageView): Html {
  const f = v.filters;
  const base = { range: v.range, key: f.key, provider: f.provider, model: f.model, status: f.status };
  const bodies = v.bodies && v.bodies.size > 0 ? v.bodies : undefined;
  return html`<section class="card flush" id="recent"><div class="card-head pad"><h2>Requests</h2>
  <form class="filters" method="get" action="/dashboard/usage#recent">
    <input type="hidden" name="range" value="${v.range}">
    ${select('key', 'Key', f.key, v.options.keys.map((k) => ({ value: k.id, label: k.name })))}
    ${select('provider', 'Provider', f.provider, v.options.providers.map((p) => ({ value: p, label: providerName(p) })))}
    ${select('model', 'Model', f.model, v.options.models.map((m) => ({ value: m, label: m })))}
    ${select('status', 'Status', f.status, [{ value: 'ok', label: 'Succeeded' }, { value: 'error', label: 'Failed' }])}
    <noscript><button class="btn sm">Apply</button></noscript>
  </form></div>
  ${v.recent.rows.length === 0 ? html`<p class="muted pad">No requests match.${v.retention.retentionDays < 365 ? ` Individual requests are kept ${v.retention.retentionDays} days.` : ''}</p>` : html`<table class="table compact" id="requests-table">
  <thead><tr><th>Time</th>${v.byDaemon ? html`<th>Daemon</th>` : ''}<th>Key</th><th>Model</th><th>Mode</th><th>Status</th><th class="num">Duration</th><th class="num">Tokens in / out</th><th class="num">Cost</th>${bodies ? html`<th>Body</th>` : ''}</tr></thead>
  <tbody>${v.recent.rows.map((r) => requestRow(r, bodies, v.byDaemon !== undefined))}</tbody></table>`}
  <div class="pager pad">${f.before ? html`<a class="btn ghost sm" href="/dashboard/usage${qs(base)}#recent">Newest</a>` : ''}
  ${v.recent.next ? html`<a class="btn ghost sm" href="/dashboard/usage${qs({ ...base, before: v.recent.next })}#recent">Older →</a>` : ''}</div>
</section>`;
}

export function usagePage(v: UsageView): Html {
  const ranges = html`<nav class="segmented" aria-label="Period">${RANGES.map((r) => html`<a href="/dashboard/usage${qs({ range: r })}"${r === v.range ? html` aria-current="page"` : ''}>${r}</a>`)}</nav>`;
  const head = html`<div class="page-head"><div><h1>Usage</h1><p class="sub">${RANGE_LABEL[v.range]} · requests, tokens and spend across every key and provider.</p></div>${ranges}</div>`;
  const foot = html`<p class="footnote">Prices: list prices as of ${v.prices.date}${v.prices.overrides > 0 ? ` with ${v.prices.overrides} from your config` : ''}; models without a price are counted as unpriced, never estimated.
  Totals and charts cover whole hours. Individual requests are kept ${v.retention.retentionDays} days, hourly totals ${v.retention.rollupRetentionDays} days.</p>`;
  if (v.totals.requests === 0 && !v.filters.before) {
    return html`${head}${stats(v.totals)}<section class="card empty"><h3>No requests in this period</h3>
      <p>Create a proxy key on the <a href="/dashboard/keys">Keys</a> page, point an app at the gateway, and its traffic shows up here.</p>
      <p><a class="btn" href="/dashboard/keys">Go to Keys</a>${v.range !== '1y' ? html` <a class="btn ghost" href="/dashboard/usage?range=1y">Look at the last year</a>` : ''}</p></section>${foot}`;
  }
  return html`${head}${stats(v.totals)}${charts(v)}
<div class="grid two">${breakdown('Cost by model', 'by-model', { column: 'Model', cli: 'model' }, v.byModel, modelLabel)}${breakdown('Cost by key', 'by-key', { column: 'Key', cli: 'key' }, v.byKey, plainLabel)}</div>
${v.byDaemon ? breakdown('Cost by daemon', 'by-daemon', { column: 'Daemon', cli: 'daemon' }, v.byDaemon, plainLabel) : ''}
${latencyTable(v.latency)}
${recentTable(v)}
${foot}`;
}
