// The Keys page's chart of a budgeted key's spend over its period, from a real usage database: a
// weekly budget in a key's own time zone has one bar per day from its Monday, a daily one per hour,
// and only that key's spend in that period counts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { budgetSpendSeries } from '../../src/daemon/dashboard/budget-chart.js';
import { UsageStore, type UsageRow } from '../../src/daemon/observe/usage/store.js';

let dir: string;
let store: UsageStore;
const NOW = Date.parse('2026-11-25T12:00:00Z'); // a Wednesday

function row(keyId: string, at: string, cost: number): UsageRow {
  return {
    requestId: `req_${Math.random().toString(36).slice(2)}`, startedAt: Date.parse(at), keyId, keyName: keyId, mode: 'unified',
    provider: 'openai', model: 'gpt-4o', requestedModel: 'gpt-4o', method: 'POST', path: '/v1/chat/completions', stream: false, status: 200,
    errorCode: null, errorMessage: null, durationMs: 100, ttfbMs: 50, requestBytes: 10, outputBytes: 20,
    inputTokens: 100, outputTokens: 10, cachedTokens: null, cacheWriteTokens: null, cacheWrite1hTokens: null, reasoningTokens: null, cost, cacheSaved: null, session: null,
    route: null, waitedMs: null, keyLabel: null,
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-budget-chart-'));
  store = await UsageStore.open(join(dir, 'usage.db'));
  store.insert([
    row('k1', '2026-11-22T22:30:00Z', 0.5), // Sunday 23:30 in Berlin: the week before
    row('k1', '2026-11-22T23:30:00Z', 0.01), // Monday 00:30 in Berlin
    row('k1', '2026-11-25T11:00:00Z', 0.02),
    row('k1', '2026-11-25T11:10:00Z', 0.03),
    row('k2', '2026-11-25T11:00:00Z', 1), // another key
  ]);
});
afterAll(() => { store?.close(); rmSync(dir, { recursive: true, force: true }); });

it('a weekly budget in Europe/Berlin: a bar per Berlin day from Monday, only this key, only this week', () => {
  const s = budgetSpendSeries(store.db, 'k1', { usd: 5, period: 'week' }, 'Europe/Berlin', NOW);
  expect(s.bucket).toBe('day');
  expect(s.times.map((t) => new Date(t).toISOString())).toEqual([
    '2026-11-22T23:00:00.000Z', '2026-11-23T23:00:00.000Z', '2026-11-24T23:00:00.000Z', '2026-11-25T23:00:00.000Z',
    '2026-11-26T23:00:00.000Z', '2026-11-27T23:00:00.000Z', '2026-11-28T23:00:00.000Z',
  ]);
  expect(s.usd).toEqual([0.01, 0, 0.05, 0, 0, 0, 0]);
});

it('a daily budget in UTC: a bar per hour of today', () => {
  const s = budgetSpendSeries(store.db, 'k1', { usd: 5, period: 'day' }, undefined, NOW);
  expect(s.bucket).toBe('hour');
  expect(s.times).toHaveLength(24);
  expect(new Date(s.times[0]!).toISOString()).toBe('2026-11-25T00:00:00.000Z');
  expect(s.usd.map((v, i) => [i, v]).filter(([, v]) => v !== 0)).toEqual([[11, 0.05]]);
});

it('a total budget: a bar per day of the last 30', () => {
  const s = budgetSpendSeries(store.db, 'k1', { usd: 5, period: 'total' }, undefined, NOW);
  expect(s.times).toHaveLength(30);
  expect(new Date(s.times[29]!).toISOString()).toBe('2026-11-25T00:00:00.000Z');
  expect(s.usd.slice(26)).toEqual([0.51, 0, 0, 0.05]);
});
