// A year of heavy use: 30 days of raw rows (300,000 requests) and a year of rollups for 10 keys ×
// 6 models (525,600 hourly rows); every page and summary answers correctly from the rollups.
// (How fast is measured by `npm run bench`; here the times are only printed.)
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HOUR_MS, floorHour } from '../../src/daemon/observe/usage/store.js';
import { startDashboardGateway, type DashboardGateway } from './harness.js';

// The hourly rollup fixture: a year of hours, each with one row per key and model.
const HOURS = 8760;
const KEYS = 10;
const MODELS = 6;
const REQUESTS_PER_ROW = 20;

let gw: DashboardGateway;
let cookie: string;
beforeAll(async () => {
  gw = await startDashboardGateway();
  cookie = (await gw.login()).cookie;
  const db = gw.recorder.store.db;
  const now = floorHour(Date.now());
  db.exec('BEGIN');
  db.prepare(`WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < ${HOURS - 1}),
      k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ${KEYS - 1}), m(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM m WHERE n < ${MODELS - 1})
    INSERT INTO hourly (hour, key_id, provider, model, key_label, key_name, requests, errors, input_tokens, output_tokens, cached_tokens,
      cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms) SELECT ? - h.i * ${HOUR_MS}, 'key' || k.n, CASE m.n % 3 WHEN 0 THEN 'anthropic' WHEN 1 THEN 'openai' ELSE 'gemini' END,
      'model-' || m.n, '', 'app-' || k.n, ${REQUESTS_PER_ROW}, 1, 40000, 8000, 10000, 0, 500, 0.35, 2, 60000 FROM h, k, m`).run(now);
  db.prepare(`WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < ${HOURS - 1}), b(n) AS (SELECT 60 UNION ALL SELECT n + 1 FROM b WHERE n < 90),
      p(name) AS (VALUES ('anthropic'), ('openai'), ('gemini')), mt(name) AS (VALUES ('duration'), ('ttfb'))
    INSERT INTO latency_hourly SELECT ? - h.i * ${HOUR_MS}, p.name, mt.name, b.n, 7 FROM h, p, mt, b`).run(now);
  // The per-hour totals and daily rollups, derived the way the v2 migration derives them.
  const sum = 'SUM(requests), SUM(errors), SUM(input_tokens), SUM(output_tokens), SUM(cached_tokens), SUM(cache_write_tokens), SUM(reasoning_tokens), SUM(cost), SUM(unpriced), SUM(duration_ms)';
  const sums = 'requests, errors, input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms';
  db.exec(`INSERT INTO hourly_totals (hour, ${sums}) SELECT hour, ${sum} FROM hourly GROUP BY hour`);
  db.exec(`INSERT INTO daily (day, key_id, provider, model, key_label, key_name, ${sums}) SELECT (hour / 86400000) * 86400000, key_id, provider, model, '', MAX(key_name), ${sum} FROM hourly GROUP BY 1, 2, 3, 4`);
  db.exec(`INSERT INTO latency_daily SELECT day, provider, metric, json_group_object(CAST(bucket AS TEXT), n) FROM (
    SELECT (hour / 86400000) * 86400000 AS day, provider, metric, bucket, SUM(count) AS n FROM latency_hourly GROUP BY 1, 2, 3, 4) GROUP BY 1, 2, 3`);
  db.prepare(`WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < 299999)
    INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, method, path, stream, status, duration_ms, ttfb_ms,
      request_bytes, output_bytes, input_tokens, output_tokens, cost)
    SELECT 'req_' || i, ? - i * 8640, 'key' || (i % 10), 'app-' || (i % 10), 'unified', 'openai', 'model-' || (i % 6), 'POST', '/v1/chat/completions',
      0, CASE WHEN i % 50 = 0 THEN 500 ELSE 200 END, 900, 300, 800, 3000, 2000, 400, 0.0175 FROM r`).run(Date.now());
  db.exec('COMMIT');
}, 120_000);
afterAll(async () => { await gw?.close(); });

it('renders a year of heavy use from the rollups', async () => {
  const timed = async (path: string) => {
    const t = performance.now();
    const r = await gw.raw('GET', path, { headers: { cookie } });
    expect(r.status, path).toBe(200);
    return { ms: performance.now() - t, r };
  };
  const results: Record<string, number> = {};
  for (const path of ['/dashboard/usage?range=1y', '/dashboard/usage?range=30d', '/dashboard/usage?range=7d', '/dashboard/keys', '/dashboard/live',
    '/admin/usage/summary?since=1y&by=day', '/admin/usage/summary?since=1y&by=model', '/admin/usage/requests?key=key3&limit=50']) {
    await timed(path); // first call warms the page cache
    const { ms, r } = await timed(path);
    results[path] = Math.round(ms);
    // Every rollup row is in the year (its oldest hour is 8759 hours back; the range reaches 8760).
    if (path === '/dashboard/usage?range=1y') expect(r.text).toContain(`data-stat="requests" data-value="${HOURS * KEYS * MODELS * REQUESTS_PER_ROW}"`);
  }
  console.log(`a year of heavy use (525,600 rollup rows, 300,000 raw rows), server time in ms: ${JSON.stringify(results)}`);
}, 60_000);
