// Gathers each page's data and renders it in the shared frame.
import type { RunningDaemon } from '../server.js';
import { VERSION } from '../../version.js';
import { filterOptions, groupCombos, latencyByProvider, recentRequests, usageCombos, usageGroups, usageSeries, usageTotals, type UsageGroup } from '../observe/usage/queries.js';
import type { UsageRecorder } from '../observe/usage/recorder.js';
import { parseSince } from '../observe/usage/settings.js';
import { bareModel } from '../observe/usage/prices.js';
import { html } from './html.js';
import { page, type Chrome, type PageId } from './layout.js';
import { listKeys, type KeyDeps } from './keys-api.js';
import { listProviders, type ProviderDeps } from './providers-api.js';
import { keysPage } from './page-keys.js';
import { budgetSpendSeries, type SpendSeries } from './budget-chart.js';
import { providersPage } from './page-providers.js';
import { livePage } from './page-live.js';
import { RANGES, usagePage, type RangeId, type UsageFilters } from './page-usage.js';
import type { Session } from './security.js';

export interface PageDeps extends KeyDeps {
  providers: ProviderDeps;
  daemon: () => RunningDaemon;
  recorder: () => UsageRecorder | undefined;
  now: () => number;
}

const TITLES: Record<PageId, string> = { usage: 'Usage', live: 'Live', keys: 'Keys', providers: 'Providers' };

const unavailable = html`<section class="card empty"><h3>Usage history is unavailable</h3><p>The daemon could not open its usage database; see <span class="mono">gateway logs</span>.</p></section>`;

export async function renderPage(deps: PageDeps, name: string, q: URLSearchParams, session: Session, origin: string): Promise<string | undefined> {
  if (!(name in TITLES)) return undefined;
  const id = name as PageId;
  const d = deps.daemon();
  const now = deps.now();
  const shared = d.ctx.shared;
  const health = shared?.status();
  const chrome: Chrome = {
    csrf: session.csrf, url: origin, version: VERSION, uptimeMs: Date.now() - d.ctx.stats.startedAt, inFlight: d.ctx.stats.inFlight,
    ...(shared && health ? { store: { display: shared.display, connected: health.connected, downSince: health.downSince === undefined ? null : new Date(health.downSince).toISOString() } } : {}),
  };
  const recorder = deps.recorder();
  recorder?.flush();
  const db = recorder?.store.db;
  let body;
  switch (id) {
    case 'keys': {
      const stats = new Map<string, UsageGroup>();
      // Per key id: each session key of chat or run is a row of this page too.
      if (db) for (const g of usageGroups(db, { since: now - 7 * 86_400_000, until: now }, 'key', true)) stats.set(g.group, g);
      const hints = recorder ? [...new Set([...recorder.prices.models.keys()].map((k) => bareModel(k)))].sort() : [];
      const keys = await listKeys(deps, now);
      // Each active key with a budget gets its period's spend chart.
      const spend = new Map<string, SpendSeries>();
      if (db) for (const k of keys) if (k.status === 'active' && k.limits?.budget) spend.set(k.id, budgetSpendSeries(db, k.id, k.limits.budget, k.limits.tz, now));
      body = keysPage({ keys, stats, spend, now, baseUrl: origin, modelHints: hints });
      break;
    }
    case 'providers':
      body = providersPage(await listProviders(deps.providers));
      break;
    case 'live':
      body = db && recorder ? livePage({ recent: recentRequests(db, { limit: 50 }).rows, inFlight: recorder.inFlight(), now }) : unavailable;
      break;
    case 'usage': {
      if (!db || !recorder) { body = unavailable; break; }
      const rangeParam = q.get('range') ?? '7d';
      const range: RangeId = (RANGES as readonly string[]).includes(rangeParam) ? (rangeParam as RangeId) : '7d';
      const r = { since: parseSince(range, now), until: now };
      const bucket = range === '24h' || range === '7d' ? 'hour' : 'day';
      const status = q.get('status');
      const filters: UsageFilters = {
        key: q.get('key') || undefined, provider: q.get('provider') || undefined, model: q.get('model') || undefined,
        status: status === 'ok' || status === 'error' ? status : undefined, before: q.get('before') || undefined,
      };
      const combos = usageCombos(db, r);
      const byDaemon = groupCombos(combos, 'daemon');
      const recent = recentRequests(db, { since: r.since, keyId: filters.key, provider: filters.provider, model: filters.model, status: filters.status, before: filters.before, limit: 50 });
      body = usagePage({
        range, bucket, filters,
        totals: usageTotals(db, r), series: usageSeries(db, r, bucket),
        byModel: groupCombos(combos, 'model'), byKey: groupCombos(combos, 'key'),
        ...(d.ctx.shared || byDaemon.length > 1 ? { byDaemon } : {}), latency: latencyByProvider(db, r),
        recent, bodies: recorder.store.withBodies(recent.rows.map((row) => row.requestId)),
        options: filterOptions(db, r, combos),
        prices: { date: recorder.prices.date, overrides: recorder.prices.overrides },
        retention: recorder.retention,
      });
      break;
    }
    default: {
      const never: never = id;
      return never;
    }
  }
  return page({ id, title: TITLES[id], chrome, body });
}
