// What a request of a key with a budget is charged when it ends: what the provider reported, at
// the price of the model that served it (a fallback's), also when the provider refused it, when
// the client left mid-stream and when the stream broke off; and a claim is never left held.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { DEFAULT_ROUTING } from '../../src/daemon/routing/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply } from '../helpers/mock-provider.js';
import { budgetOf, limitedKey, settledBudget } from '../helpers/limits.js';

// USD per million tokens. The mock answers 12 input and 5 output tokens.
const PRICES = {
  'openai/gpt-lim': { input: 10, output: 100 },
  'anthropic/claude-lim': { input: 20, output: 200 },
  'openai/gpt-cut': { input: 10, output: 100 },
};
const cost = (p: { input: number; output: number }, input: number, output: number) => (input * p.input + output * p.output) / 1e6;

let gw: TestGateway;
let cutter: Server;
beforeAll(async () => {
  // A provider that answers 200 and one chunk, then drops the connection (openai's origin for one test).
  cutter = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-cut', choices: [{ index: 0, delta: { role: 'assistant', content: 'Par' }, finish_reason: null }] })}\n\n`);
      setTimeout(() => res.socket?.destroy(), 30);
    });
  });
  await new Promise<void>((r) => cutter.listen(0, '127.0.0.1', () => r()));
  gw = await startTestGateway({
    settings: {
      prices: buildPriceTable(readShippedPrices(), PRICES).table,
      routing: { ...DEFAULT_ROUTING, retries: 0, routes: { 'openai/gpt-lim': ['openai/gpt-lim', 'anthropic/claude-lim'] } },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  cutter?.closeAllConnections();
  cutter?.close();
});

let key: string;
let n = 0;
beforeEach(async () => {
  key = (await limitedKey(gw, `b${++n}`, { budget: { usd: 10, period: 'day' } })).key;
  gw.mocks.openai.setHandler(undefined);
  gw.mocks.anthropic.setHandler(undefined);
});

const standing = () => budgetOf(gw, key);
const settled = () => settledBudget(gw, key);
const client = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

it('a good answer is charged what the provider reported, once', async () => {
  await client().chat.completions.create({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30 });
  expect((await settled()).spent).toBeCloseTo(cost(PRICES['openai/gpt-lim'], 12, 5), 12);
});

it('an error the provider answered costs nothing', async () => {
  gw.mocks.openai.setHandler(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'bad', type: 'invalid_request_error', param: null, code: null } }) }));
  const err = await client().chat.completions.create({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30 }).catch((e: unknown) => e);
  expect((err as { status: number }).status).toBe(400);
  expect(await settled()).toMatchObject({ spent: 0, held: 0 });
});

it('a fallback to another model is charged at the price of the model that answered', async () => {
  gw.mocks.openai.setHandler(() => ({ status: 503, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } }) }));
  const r = await client().chat.completions.create({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30 });
  expect(r.choices[0]?.message.content).toBeTruthy();
  expect(gw.mocks.anthropic.requests.length).toBeGreaterThan(0);
  expect((await settled()).spent).toBeCloseTo(cost(PRICES['anthropic/claude-lim'], 12, 5), 12);
});

it('a client that leaves mid-stream is charged the input and what it was sent, never more than the claim; nothing stays held', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  gw.mocks.openai.setHandler((req, p) => ({ ...defaultReply(p, req), beforeChunk: (i) => (i === 2 ? gate : undefined) }));
  const ac = new AbortController();
  const s = await client().chat.completions.create({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30, stream: true }, { signal: ac.signal });
  const held = (await standing()).held;
  expect(held).toBeGreaterThan(0);
  for await (const chunk of s) { if (chunk.choices[0]?.delta.content) { ac.abort(); break; } }
  const b = await settled();
  release();
  // The provider sent no usage: the input's estimate and a token per 4 bytes sent.
  expect(b.spent).toBeGreaterThan(0);
  expect(b.spent).toBeLessThanOrEqual(held);
});

it('a stream the provider broke off is charged like one the client left, and the client gets an error, not a clean end', async () => {
  const cutOrigin = `http://127.0.0.1:${(cutter.address() as AddressInfo).port}`;
  gw.daemon.ctx.upstreams.overrides.openai = cutOrigin;
  try {
    const held: number[] = [];
    const s = await client().chat.completions.create({ model: 'openai/gpt-cut', messages: [{ role: 'user', content: 'hi' }], max_tokens: 30, stream: true });
    held.push((await standing()).held);
    const err = await (async () => { for await (const _ of s) { /* read */ } })().catch((e: unknown) => e);
    expect(err).toBeTruthy();
    const b = await settled();
    expect(b.spent).toBeGreaterThan(0);
    expect(b.spent).toBeLessThanOrEqual(held[0]!);
  } finally {
    gw.daemon.ctx.upstreams.overrides.openai = gw.mocks.openai.origin;
  }
});
