// What a key with a budget is charged on the paths that are easy to get wrong: a conversation the
// gateway keeps (previous_response_id) is reserved whole, not as the few bytes that name it; a
// token count costs nothing; a native call whose model cannot be priced is refused; a Claude
// stream the client leaves is charged for what it was sent, not the one token message_start says.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { KeyLimits } from '../../src/daemon/limits/limits.js';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply } from '../helpers/mock-provider.js';
import { limitedKey, settledBudget } from '../helpers/limits.js';

const PRICES = { 'openai/gpt-lim': { input: 10, output: 100 }, 'anthropic/claude-lim': { input: 20, output: 200 } };

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway({ settings: { prices: buildPriceTable(readShippedPrices(), PRICES).table } }); });
afterAll(async () => { await gw.close(); });
beforeEach(() => { gw.mocks.anthropic.setHandler(undefined); gw.mocks.openai.setHandler(undefined); });

let n = 0;
async function newKey(limits: KeyLimits): Promise<{ key: string; name: string }> {
  const name = `c${++n}`;
  return { key: (await limitedKey(gw, name, limits)).key, name };
}
const settled = async (key: string): Promise<number> => (await settledBudget(gw, key)).spent;

it('a previous_response_id the gateway keeps is reserved with its whole conversation', async () => {
  const { key, name } = await newKey({ budget: { usd: 1, period: 'day' } });
  const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  const first = await openai.responses.create({ model: 'anthropic/claude-lim', input: 'x'.repeat(20_000), max_output_tokens: 1 });
  const spent = await settled(key); // the mock's 12 in and 5 out: $0.00124
  // Leave a cent: far less than the conversation could cost (20 kB of input at the dearest rate, $40 a million: $0.80).
  gw.keys.setLimits(name, { budget: { usd: spent + 0.01, period: 'day' } });
  await gw.daemon.reload();
  const err = await openai.responses.create({ model: 'anthropic/claude-lim', previous_response_id: first.id, input: 'and then?', max_output_tokens: 1 }).catch((e: unknown) => e);
  expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
  expect((err as Error).message).toMatch(/this request could cost up to \$0\.8\d{3}/);
  // The same few bytes without the conversation fit.
  expect((await openai.responses.create({ model: 'anthropic/claude-lim', input: 'and then?', max_output_tokens: 1 })).output_text).toBeTruthy();
});

it('a token count holds a place and costs nothing, also for a model without a price', async () => {
  const { key } = await newKey({ budget: { usd: 1, period: 'day' }, rpm: 100 });
  const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
  const counted = await anthropic.messages.countTokens({ model: 'claude-unpriced-x', messages: [{ role: 'user', content: 'hi' }] });
  expect(counted.input_tokens).toBe(12);
  const native = await fetch(`${gw.url}/anthropic/v1/messages/count_tokens`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'claude-unpriced-x', messages: [{ role: 'user', content: 'hi' }] }) });
  expect(native.status).toBe(200);
  expect(await settled(key)).toBe(0);
  expect((await gw.daemon.ctx.limits.standing(gw.daemon.ctx.keys.authenticate(key, 'openai')))!.rpm!.used).toBe(2);
});

it('a native call with a body whose model cannot be priced is refused for a key with a budget; lists are free', async () => {
  const { key } = await newKey({ budget: { usd: 1, period: 'day' } });
  const before = gw.mocks.openai.requests.length;
  const batch = await fetch(`${gw.url}/openai/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '24h' }) });
  expect(batch.status).toBe(403);
  expect(((await batch.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: 'permission_error', message: expect.stringMatching(/POST \/openai\/v1\/batches names no model the gateway can price/) });
  expect(gw.mocks.openai.requests.length).toBe(before);
  const models = await fetch(`${gw.url}/openai/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  expect(models.status).toBe(200);
  // A key with rate limits only is not asked for prices.
  const { key: paced } = await newKey({ rpm: 10 });
  const allowed = await fetch(`${gw.url}/openai/v1/embeddings`, { method: 'POST', headers: { authorization: `Bearer ${paced}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'text-embedding-3-small', input: 'hi' }) });
  expect(allowed.status).toBe(200);
});

it('a Claude stream the client leaves is charged what it was sent, not the one output token message_start reported', async () => {
  const { key } = await newKey({ budget: { usd: 20, period: 'day' } }); // 60,000 output tokens at $200 a million may cost $12
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  // A long answer: 200 deltas of 200 characters, held after the 150th until the client has left.
  gw.mocks.anthropic.setHandler((req, p) => {
    const reply = defaultReply(p, req);
    const chunks = reply.chunks!;
    const delta = chunks.find((c) => String(c).includes('content_block_delta'))!;
    const long = String(delta).replace(/"text":"[^"]*"/, `"text":"${'y'.repeat(200)}"`);
    return { ...reply, chunks: [chunks[0]!, chunks[1]!, ...Array.from({ length: 200 }, () => long), ...chunks.slice(-3)], beforeChunk: (i) => (i === 150 ? gate : undefined) };
  });
  const ac = new AbortController();
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST', signal: ac.signal,
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-lim', max_tokens: 60_000, stream: true, messages: [{ role: 'user', content: 'write a lot' }] }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let got = 0;
  while (got < 100 * 200) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended after ${got} bytes: ${JSON.stringify(res.headers.get('content-type'))}`);
    got += value.length;
  }
  ac.abort();
  const spent = await settled(key);
  release();
  // At least a token per 4 bytes of the ~30 kB it was sent, at $200 a million.
  expect(spent).toBeGreaterThan((20_000 / 4) * 200 / 1e6);
});
