// `/admin/usage/*`: the usage history as JSON, for the dashboard's script and `gateway usage`.
// Every read first writes what the recorder still holds, so a request finished a moment ago counts.
import type { ServerResponse } from 'node:http';
import { summarize } from '../observe/usage/index.js';
import { filterOptions, latencyByProvider, recentRequests, usageSeries, GROUP_BY, type GroupBy } from '../observe/usage/queries.js';
import type { UsageRecorder } from '../observe/usage/recorder.js';
import { schemaVersion, SCHEMA_VERSION } from '../observe/usage/schema.js';
import { parseSince } from '../observe/usage/settings.js';
import { ApiError, sendJson } from './http.js';
import { streamLive } from './live.js';
import type { IncomingMessage } from 'node:http';

export function requireRecorder(recorder: UsageRecorder | undefined): UsageRecorder {
  if (!recorder) throw new ApiError(503, 'usage_unavailable', 'usage history is not available in this daemon (see gateway logs)');
  return recorder;
}

export function rangeFrom(q: URLSearchParams, now = Date.now(), fallback = '7d'): { since: number; until: number } {
  const text = q.get('since') ?? fallback;
  let since: number;
  try { since = parseSince(text, now); } catch (e) { throw new ApiError(400, 'invalid_request', (e as Error).message.replace('--since', '"since"')); }
  return { since, until: now };
}

function groupBy(q: URLSearchParams): GroupBy {
  const by = q.get('by') ?? 'model';
  if (!(GROUP_BY as readonly string[]).includes(by)) throw new ApiError(400, 'invalid_request', `"by" must be one of ${GROUP_BY.join(', ')}`);
  return by as GroupBy;
}

export async function handleUsageApi(req: IncomingMessage, res: ServerResponse, sub: string, q: URLSearchParams, rec: UsageRecorder | undefined): Promise<boolean> {
  if (req.method !== 'GET') throw new ApiError(405, 'method_not_allowed', `use GET for /admin/usage/${sub}`);
  const recorder = requireRecorder(rec);
  if (sub === 'live') { streamLive(req, res, recorder); return true; }
  recorder.flush();
  const db = recorder.store.db;
  switch (sub) {
    case 'summary': {
      const r = rangeFrom(q);
      sendJson(res, 200, summarize(db, { ...r, by: groupBy(q) }, recorder.prices));
      return true;
    }
    case 'series': {
      const r = rangeFrom(q);
      const bucket = q.get('bucket') ?? (r.until - r.since > 2 * 86_400_000 ? 'day' : 'hour');
      if (bucket !== 'hour' && bucket !== 'day') throw new ApiError(400, 'invalid_request', '"bucket" must be hour or day');
      sendJson(res, 200, { since: new Date(r.since).toISOString(), until: new Date(r.until).toISOString(), bucket, points: usageSeries(db, r, bucket) });
      return true;
    }
    case 'latency': {
      sendJson(res, 200, { providers: latencyByProvider(db, rangeFrom(q)) });
      return true;
    }
    case 'requests': {
      const status = q.get('status');
      if (status !== null && status !== '' && status !== 'ok' && status !== 'error') throw new ApiError(400, 'invalid_request', '"status" must be ok or error');
      const limit = q.get('limit');
      if (limit !== null && !/^\d+$/.test(limit)) throw new ApiError(400, 'invalid_request', '"limit" must be a whole number (at most 500)');
      const page = recentRequests(db, {
        since: q.has('since') ? rangeFrom(q).since : undefined,
        keyId: q.get('key') || undefined, provider: q.get('provider') || undefined, model: q.get('model') || undefined,
        daemon: q.get('daemon') ?? undefined,
        status: (status || undefined) as 'ok' | 'error' | undefined, before: q.get('before') || undefined,
        limit: limit ? Number(limit) : 50,
      });
      sendJson(res, 200, page);
      return true;
    }
    case 'filters': {
      sendJson(res, 200, filterOptions(db, rangeFrom(q)));
      return true;
    }
    case 'status': {
      sendJson(res, 200, {
        path: recorder.store.path, schemaVersion: schemaVersion(db), latestSchemaVersion: SCHEMA_VERSION,
        rows: recorder.store.count(), inFlight: recorder.inFlight().length, recorder: recorder.stats,
        prices: { date: recorder.prices.date, overrides: recorder.prices.overrides, models: recorder.prices.models.size },
        ...(recorder.team ? { team: recorder.team.stats() } : {}),
      });
      return true;
    }
    default:
      return false;
  }
}

/** `GET /admin/usage/requests/{id}/body`: what `usage.logBodies` stored for one request (redacted, capped). */
export function requestBody(recorder: UsageRecorder, requestId: string) {
  recorder.flush();
  const b = recorder.store.body(requestId);
  if (!b) throw new ApiError(404, 'not_found', `no stored body for request ${requestId}: bodies are kept only while usage.logBodies is on, for retentionDays`);
  return { requestId: b.requestId, startedAt: new Date(b.startedAt).toISOString(), request: b.request, response: b.response };
}

export function pricesView(recorder: UsageRecorder) {
  const p = recorder.prices;
  const sorted = (m: Map<string, unknown>) => Object.fromEntries([...m.entries()].sort((a, b) => a[0].localeCompare(b[0])));
  return { date: p.date, currency: p.currency, overrides: p.overrides, models: sorted(p.models), presets: sorted(p.presets) };
}
