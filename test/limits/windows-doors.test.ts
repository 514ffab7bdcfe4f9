// Rate windows with an injected clock (a refusal's retry-after is exactly when the request fits),
// and every door's and native prefix's refusal in its own protocol's shape.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyLimits } from '../../src/daemon/limits/limits.js';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply } from '../helpers/mock-provider.js';
import { limitedKey } from '../helpers/limits.js';

const PRICES = {
  'openai/gpt-lim': { input: 10, output: 100 },
  'anthropic/claude-lim': { input: 10, output: 100 },
  'gemini/gemini-lim': { input: 10, output: 100 },
};

let gw: TestGateway;
let now = Date.parse('2026-11-27T10:00:00Z');
beforeAll(async () => {
  gw = await startTestGateway({ clock: () => now, settings: { prices: buildPriceTable(readShippedPrices(), PRICES).table } });
});
afterAll(async () => { await gw.close(); });

let n = 0;
const newKey = async (limits: KeyLimits): Promise<string> => (await limitedKey(gw, `k${++n}`, limits)).key;

const chat = (key: string, body: Record<string, unknown> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20, ...body }),
});

describe('windows', () => {
  it('rpm: refused with the exact wait, admitted when it has passed', async () => {
    const key = await newKey({ rpm: 2 });
    const t0 = now;
    expect((await chat(key)).status).toBe(200);
    now = t0 + 15_500;
    expect((await chat(key)).status).toBe(200);
    now = t0 + 20_000;
    const refused = await chat(key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-gateway-limit')).toBe('rpm');
    expect(refused.headers.get('retry-after')).toBe('40');
    expect(refused.headers.get('retry-after-ms')).toBe('40000');
    expect(((await refused.json()) as any).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.stringMatching(/limited to 2 requests a minute and made 2 in the last minute; retry in 40 s/) });
    now = t0 + 59_999;
    expect((await chat(key)).status).toBe(429);
    now = t0 + 20_000 + 40_000; // when retry-after said
    expect((await chat(key)).status).toBe(200);
    // One slot left when the second leaves: at t0 + 75.5 s.
    const again = await chat(key);
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after-ms')).toBe('15500');
    expect(gw.mocks.openai.requests.filter((r) => r.headers.authorization !== undefined).length).toBeGreaterThanOrEqual(3);
  });

  it('tpm: holds the worst case while in flight, counts what was used, admits when enough has left the minute', async () => {
    // The provider reports 300 input and 150 output tokens: more than the request's own estimate.
    gw.mocks.openai.setHandler((req, p) => {
      const r = defaultReply(p, req);
      return { ...r, body: JSON.stringify({ ...JSON.parse(String(r.body)), usage: { prompt_tokens: 300, completion_tokens: 150, total_tokens: 450 } }) };
    });
    try {
      const key = await newKey({ tpm: 1000 });
      const t0 = now;
      expect((await chat(key)).status).toBe(200); // 450 used
      now = t0 + 10_000;
      expect((await chat(key)).status).toBe(200); // 900 used
      now = t0 + 20_000;
      const refused = await chat(key); // ~120 bytes + 20 output > the 100 left
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-gateway-limit')).toBe('tpm');
      expect(refused.headers.get('retry-after-ms')).toBe('40000');
      expect(((await refused.json()) as any).error.message).toMatch(/limited to 1000 tokens a minute: 900 used and 0 held by requests in flight/);
      now = t0 + 60_000;
      expect((await chat(key)).status).toBe(200);
      // More than the whole minute's tokens in one request: it runs alone, once the minute is empty.
      const huge = await chat(key, { max_tokens: 5000 });
      expect(huge.status).toBe(429);
      expect(huge.headers.get('retry-after')).toBe('60');
      expect(((await huge.json()) as any).error.message).toMatch(/more than proxy key "k\d+" may use in a minute \(1000\), so it runs only when nothing else of the key's is in the last minute; retry in 60 s/);
      now = t0 + 120_000;
      expect((await chat(key, { max_tokens: 5000 })).status).toBe(200);
    } finally {
      gw.mocks.openai.setHandler(undefined);
    }
  });
});

describe('refusals in each door\'s shape', () => {
  const doors: Array<{ name: string; send: (key: string) => Promise<Response>; shape: 'openai' | 'anthropic' | 'google' }> = [
    { name: 'Chat', shape: 'openai', send: (key) => chat(key) },
    { name: 'Messages', shape: 'anthropic', send: (key) => fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'anthropic/claude-lim', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }) }) },
    { name: 'Responses', shape: 'openai', send: (key) => fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-lim', input: 'hi', max_output_tokens: 20 }) }) },
    { name: 'Gemini', shape: 'google', send: (key) => fetch(`${gw.url}/v1beta/models/gemini-lim:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 20 } }) }) },
    { name: 'native /openai', shape: 'openai', send: (key) => fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }) }) },
    { name: 'native /anthropic', shape: 'anthropic', send: (key) => fetch(`${gw.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'claude-lim', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }) }) },
    { name: 'native /gemini', shape: 'google', send: (key) => fetch(`${gw.url}/gemini/v1beta/models/gemini-lim:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) }) },
  ];

  it.each(doors)('$name: rpm refusal is a 429 rate-limit error with retry-after', async ({ send, shape }) => {
    const key = await newKey({ rpm: 1 });
    const first = await send(key);
    expect(first.status).toBe(200);
    const res = await send(key);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.headers.get('x-gateway-limit')).toBe('rpm');
    const body = await res.json() as any;
    if (shape === 'openai') expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    if (shape === 'anthropic') expect(body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    if (shape === 'google') expect(body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
  });

  it.each(doors)('$name: a spent budget is a 429 quota error without retry-after, before the provider sees it', async ({ send, shape }) => {
    const key = await newKey({ budget: { usd: 0.000001, period: 'month' } });
    const seen = gw.mocks.openai.requests.length + gw.mocks.anthropic.requests.length + gw.mocks.gemini.requests.length;
    const res = await send(key);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(res.headers.get('x-should-retry')).toBe('false'); // the SDKs' own retries would not help
    expect(res.headers.get('x-gateway-limit')).toBe('budget');
    expect(res.headers.get('x-gateway-limit-reset')).toBe('2026-12-01T00:00:00.000Z');
    const body = await res.json() as any;
    const message = /has used \$0\.00 of its \$0\.000001\/month budget; this request could cost up to \$\d+\.\d+; it resets at 2026-12-01T00:00:00\.000Z/;
    if (shape === 'openai') expect(body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota', message: expect.stringMatching(message) });
    if (shape === 'anthropic') expect(body).toMatchObject({ type: 'error', error: { type: 'billing_error', message: expect.stringMatching(message) } });
    if (shape === 'google') expect(body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: expect.stringMatching(message) });
    expect(gw.mocks.openai.requests.length + gw.mocks.anthropic.requests.length + gw.mocks.gemini.requests.length).toBe(seen);
  });

  it('a key with a budget may not use a model without a price: 403 naming usage.prices, nothing sent upstream', async () => {
    const key = await newKey({ budget: { usd: 5, period: 'day' } });
    const seen = gw.mocks.openai.requests.length;
    const res = await chat(key, { model: 'openai/gpt-unpriced-x' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error).toMatchObject({ type: 'permission_error', message: expect.stringMatching(/model "openai\/gpt-unpriced-x" has no price.*usage\.prices/) });
    const native = await fetch(`${gw.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-unpriced-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(native.status).toBe(403);
    expect(await native.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    expect(gw.mocks.openai.requests.length).toBe(seen);
    // A key with only rate limits may use it.
    expect((await chat(await newKey({ rpm: 5 }), { model: 'openai/gpt-unpriced-x' })).status).toBe(200);
  });
});

describe('a limit store that cannot be opened', () => {
  it('refuses the requests of keys with limits (503 in the door\'s shape), never serves them unlimited; keys without limits are served', async () => {
    const other = await startTestGateway();
    try {
      mkdirSync(join(other.dir, 'usage.db')); // a folder where the database should be
      const { key } = other.keys.create({ name: 'limited', limits: { rpm: 10 } });
      await other.daemon.reload();
      const res = await fetch(`${other.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringMatching(/cannot read its limit store/) } });
      expect(other.mocks.anthropic.requests).toHaveLength(0);
      const free = await fetch(`${other.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': other.key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(free.status).toBe(200);
    } finally {
      await other.close();
    }
  });
});
