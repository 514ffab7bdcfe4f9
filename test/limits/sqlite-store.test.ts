// The laptop's limit store on its own: exact windows from an injected clock, budgets held by
// claims, settlement counted once, a claim released after its expiry, and everything a settlement
// wrote read back by a new store (a restarted daemon).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { KeyLimits } from '../../src/daemon/limits/limits.js';
import { SqliteLimitStore } from '../../src/daemon/limits/sqlite-store.js';
import type { Claim } from '../../src/daemon/limits/store.js';
import { migrate } from '../../src/daemon/observe/usage/schema.js';
import { openDatabase } from '../../src/daemon/store/sqlite.js';

let dir: string;
let now = Date.parse('2026-11-27T10:00:00Z');
const clock = () => now;
const open = async () => new SqliteLimitStore(await openDatabase(join(dir, 'usage.db'), { setup: migrate }), clock);
let seq = 0;
const claim = (over: Partial<Claim> = {}): Claim => ({ requestId: `r${++seq}`, keyId: 'k1', at: now, tokens: 100, usd: 0.01, expiresAt: now + 600_000, ...over });

beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'limits-store-')); now = Date.parse('2026-11-27T10:00:00Z'); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('rpm admits N back to back, then one more each time the oldest leaves the sliding minute', async () => {
  const store = await open();
  const limits: KeyLimits = { rpm: 3 };
  for (const dt of [0, 10_000, 20_000]) {
    now = Date.parse('2026-11-27T10:00:00Z') + dt;
    expect(await store.reserve(limits, claim())).toEqual({ ok: true });
  }
  now += 10_000; // 30 s after the first
  const refused = await store.reserve(limits, claim());
  expect(refused).toMatchObject({ ok: false, limit: 'rpm', max: 3, used: 3, retryAfterMs: 30_000 });
  now += 29_999;
  expect(await store.reserve(limits, claim())).toMatchObject({ ok: false, retryAfterMs: 1 });
  now += 1;
  expect(await store.reserve(limits, claim())).toEqual({ ok: true });
  await store.close();
});

it('tpm holds the worst case until settlement, then what was used; retry-after is when enough has left', async () => {
  const store = await open();
  const limits: KeyLimits = { tpm: 1000 };
  const a = claim({ tokens: 600 });
  expect(await store.reserve(limits, a)).toEqual({ ok: true });
  now += 5000;
  expect(await store.reserve(limits, claim({ tokens: 500 }))).toMatchObject({ ok: false, limit: 'tpm', held: 600, asked: 500, retryAfterMs: 55_000 });
  await store.settle(a, { tokens: 200, usd: 0 });
  const b = claim({ tokens: 500 });
  expect(await store.reserve(limits, b)).toEqual({ ok: true }); // 200 + 500
  // Larger than the whole limit: it runs alone, once the minute is empty (b, admitted at +5 s, leaves at +65 s).
  expect(await store.reserve(limits, claim({ tokens: 1001 }))).toMatchObject({ ok: false, limit: 'tpm', asked: 1001, retryAfterMs: 60_000 });
  now += 60_000;
  expect(await store.reserve(limits, claim({ tokens: 1001 }))).toEqual({ ok: true });
  expect(await store.reserve(limits, claim({ tokens: 1 }))).toMatchObject({ ok: false, limit: 'tpm' });
  await store.close();
});

it('concurrency counts claims until they settle or expire', async () => {
  const store = await open();
  const limits: KeyLimits = { concurrency: 2 };
  const a = claim();
  const b = claim({ expiresAt: now + 1000 });
  expect(await store.reserve(limits, a)).toEqual({ ok: true });
  expect(await store.reserve(limits, b)).toEqual({ ok: true });
  expect(await store.reserve(limits, claim())).toMatchObject({ ok: false, limit: 'concurrency', retryAfterMs: 1000 });
  await store.settle(a, { tokens: 10, usd: 0 });
  expect(await store.reserve(limits, claim())).toEqual({ ok: true });
  expect(await store.reserve(limits, claim())).toMatchObject({ ok: false, limit: 'concurrency' });
  now += 1000; // b's request vanished: its claim is released after its expiry
  expect(await store.reserve(limits, claim())).toEqual({ ok: true });
  await store.close();
});

it('a budget holds claims in flight, counts a settlement once, and outlives the store', async () => {
  const limits: KeyLimits = { budget: { usd: 0.05, period: 'day' } };
  const store = await open();
  const held = [claim({ usd: 0.02 }), claim({ usd: 0.02 })];
  for (const c of held) expect(await store.reserve(limits, c)).toEqual({ ok: true });
  const over = await store.reserve(limits, claim({ usd: 0.02 }));
  expect(over).toMatchObject({ ok: false, limit: 'budget', used: 0, held: 0.04, asked: 0.02, resetAt: Date.parse('2026-11-28T00:00:00Z') });
  await store.settle(held[0]!, { tokens: 50, usd: 0.004 });
  await store.settle(held[0]!, { tokens: 50, usd: 0.004 }); // again: counted once
  await store.settle(held[1]!, { tokens: 50, usd: 0.006 });
  expect((await store.standing('k1', limits, now)).budget).toMatchObject({ spent: 0.01, held: 0, left: 0.04 });
  await store.close();

  const again = await open(); // a restarted daemon
  expect((await again.standing('k1', limits, now)).budget?.spent).toBeCloseTo(0.01, 10);
  expect(await again.reserve(limits, claim({ usd: 0.04 }))).toEqual({ ok: true });
  expect(await again.reserve(limits, claim({ usd: 0.001 }))).toMatchObject({ ok: false, limit: 'budget' });
  // The next day is a new period.
  now = Date.parse('2026-11-28T00:00:00Z');
  expect(await again.reserve(limits, claim({ usd: 0.04 }))).toEqual({ ok: true });
  await again.close();
});

it('a restarted store knows the last minute of each key', async () => {
  const store = await open();
  const limits: KeyLimits = { rpm: 2, tpm: 10_000 };
  for (let i = 0; i < 2; i++) {
    const c = claim();
    await store.reserve(limits, c);
    await store.settle(c, { tokens: 300, usd: 0 });
    now += 1000;
  }
  await store.close();
  const again = await open();
  expect(await again.reserve(limits, claim())).toMatchObject({ ok: false, limit: 'rpm', used: 2, retryAfterMs: 58_000 });
  expect((await again.standing('k1', limits, now)).tpm).toEqual({ max: 10_000, used: 600 });
  await again.close();
});

it('a total budget never resets, counts spend from before the key had limits, and keeps folded spend', async () => {
  const store = await open();
  // A request of the key's from before it had limits, in the usage history.
  const db = await openDatabase(join(dir, 'usage.db'));
  db.prepare(`INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, method, path, stream, status, duration_ms, request_bytes, output_bytes, cost)
    VALUES ('old', ?, 'k1', 'ci', 'unified', 'openai', 'gpt-x', 'POST', '/v1/chat/completions', 0, 200, 1, 1, 1, 0.1)`).run(now - 3_600_000);
  db.close();
  const limits: KeyLimits = { budget: { usd: 1, period: 'total' } };
  const c = claim({ usd: 0.3 });
  await store.reserve(limits, c);
  await store.settle(c, { tokens: 1, usd: 0.25 });
  expect((await store.standing('k1', limits, now)).budget).toMatchObject({ spent: 0.35, left: 0.65 });
  await store.close();
  // A year on, the ledger's old rows are folded into the key's total (by the next settlement).
  now += 400 * 86_400_000;
  const later = await open();
  const d = claim({ usd: 0.1 });
  await later.reserve(limits, d);
  await later.settle(d, { tokens: 1, usd: 0.05 });
  await later.close();
  const last = await open();
  const s = await last.standing('k1', limits, now);
  expect(s.budget?.spent).toBeCloseTo(0.3, 10); // the usage row is past the ledger's horizon; the ledger's own spend is all there
  expect(s.budget?.resetAt).toBeUndefined();
  await last.close();
});
