// Budgets and concurrency through the real daemon with the official SDKs: a budget hit by 64
// concurrent streams settles at or under it and nothing refused reaches the provider; a limit of
// 2 in flight under 10 parallel streams; a budget refusal in the OpenAI SDK's shape.
import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply } from '../helpers/mock-provider.js';
import { limitedKey } from '../helpers/limits.js';

// USD per million tokens: a request of the mock's (12 in, 5 out) costs 12×10 + 5×100 = 620 µUSD.
const PRICES = { 'openai/gpt-lim': { input: 10, output: 100 } };
const ACTUAL = (12 * 10 + 5 * 100) / 1e6;

let gw: TestGateway;
beforeEach(async () => {
  gw = await startTestGateway({ settings: { prices: buildPriceTable(readShippedPrices(), PRICES).table } });
});
afterEach(async () => { await gw.close(); });


const client = (key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

async function stream(c: OpenAI): Promise<{ ok: true; text: string } | { ok: false; err: InstanceType<typeof OpenAI.APIError> }> {
  try {
    const s = await c.chat.completions.create({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, stream: true });
    let text = '';
    for await (const chunk of s) text += chunk.choices[0]?.delta.content ?? '';
    return { ok: true, text };
  } catch (e) {
    if (e instanceof OpenAI.APIError) return { ok: false, err: e };
    throw e;
  }
}

it('a budget of two cents under waves of 64 concurrent streams: spend stays under it, refusals never reach the provider', async () => {
  const budget = 0.02;
  const { key } = await limitedKey(gw, 'ci', { budget: { usd: budget, period: 'day' } });
  const c = client(key);
  let admitted = 0;
  let firstWave = 0;
  const refusals: Array<InstanceType<typeof OpenAI.APIError>> = [];
  for (let wave = 0; wave < 40; wave++) {
    // Each admitted stream is held open until every request of its wave has been decided, so
    // the 64 are in flight together: what they may cost is held, not yet settled.
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    gw.mocks.openai.setHandler((req, p) => ({ ...defaultReply(p, req), beforeChunk: (i) => (i === 1 ? gate : undefined) }));
    const before = gw.mocks.openai.requests.length;
    let refused = 0;
    const wave64 = Array.from({ length: 64 }, () => stream(c).then((r) => { if (!r.ok) refused++; return r; }));
    await waitFor(() => refused + gw.mocks.openai.requests.length - before === 64);
    release();
    const results = await Promise.all(wave64);
    const ok = results.filter((r) => r.ok).length;
    for (const r of results) if (!r.ok) refusals.push(r.err);
    if (wave === 0) firstWave = ok;
    admitted += ok;
    if (ok === 0) break; // what is left is less than one request's worst case
  }
  const rec = gw.daemon.ctx.keys.authenticate(key, 'openai');
  const standing = await gw.daemon.ctx.limits.standing(rec);
  console.log(`budget test: ${admitted} streams admitted (${firstWave} in the first wave of 64), ${refusals.length} refused; spent $${standing?.budget?.spent.toFixed(6)} of $${budget}`);
  // The first wave's worst case (about 90 input bytes and 50 output tokens: $0.0059) fits 3 times in $0.02.
  expect(firstWave).toBe(3);
  expect(admitted).toBeGreaterThan(firstWave);
  // Every admitted stream reached the provider, and no refused one did.
  expect(gw.mocks.openai.requests.length).toBe(admitted);
  // Settled at what each really cost, once each; never above the budget.
  expect(standing?.budget?.spent).toBeCloseTo(admitted * ACTUAL, 10);
  expect(standing!.budget!.spent).toBeLessThanOrEqual(budget);
  expect(standing?.budget?.held).toBe(0);
  // The refusals: OpenAI's quota error, naming the limit and when the day resets, with no retry-after.
  const r = refusals[0]!;
  expect(r.status).toBe(429);
  expect(r.type).toBe('insufficient_quota');
  expect(r.code).toBe('insufficient_quota');
  expect(r.message).toMatch(/proxy key "ci" has used \$0\.\d+ of its \$0\.02\/day budget/);
  expect(r.message).toMatch(/resets at \d{4}-\d\d-\d\dT00:00:00\.000Z/);
  expect(r.headers?.get('x-gateway-limit')).toBe('budget');
  expect(r.headers?.get('x-gateway-limit-reset')).toMatch(/T00:00:00\.000Z$/);
  expect(r.headers?.get('retry-after')).toBeNull();
});

it('a concurrency limit of 2 under 10 parallel streams: 2 reach the provider, 8 are told to retry in a second', async () => {
  const { key } = await limitedKey(gw, 'agent', { concurrency: 2 });
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  // Each stream is held after its first chunk until the test has seen every refusal.
  gw.mocks.openai.setHandler((req, p) => ({ ...defaultReply(p, req), beforeChunk: (i) => (i === 1 ? gate : undefined) }));
  const c = client(key);
  const results: Array<Awaited<ReturnType<typeof stream>> | undefined> = [];
  const all = Array.from({ length: 10 }, (_, i) => stream(c).then((r) => { results[i] = r; return r; }));
  await waitFor(() => results.filter((r) => r && !r.ok).length === 8);
  expect(gw.mocks.openai.requests).toHaveLength(2);
  for (const r of results) {
    if (!r || r.ok) continue;
    expect(r.err.status).toBe(429);
    expect(r.err.headers?.get('retry-after')).toBe('1');
    expect(r.err.headers?.get('x-gateway-limit')).toBe('concurrency');
    expect(r.err.type).toBe('rate_limit_error');
    expect(r.err.message).toMatch(/proxy key "agent" may have 2 requests in flight at once/);
  }
  release();
  const done = await Promise.all(all);
  expect(done.filter((r) => r.ok)).toHaveLength(2);
  // Both settled: the next two are admitted.
  expect((await Promise.all([stream(c), stream(c)])).every((r) => r.ok)).toBe(true);
});

async function waitFor(cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
