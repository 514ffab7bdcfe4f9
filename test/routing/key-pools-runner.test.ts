// A provider's key pool on the request path: a rate-limited key rests and the next key serves the
// same request at once (no retry used up), a refused key is taken out, requests spread across the
// healthy keys, and a session keeps its key. The mock accepts both keys and records which came.
import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { DEFAULT_ROUTING } from '../../src/daemon/routing/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, type MockHandler, type Recorded } from '../helpers/mock-provider.js';

const KEY_A = 'sk-pool-a-0123456789';
const KEY_B = 'sk-pool-b-0123456789';
let gw: TestGateway | undefined;
afterEach(async () => { await gw?.close(); gw = undefined; });

const keyOf = (r: Recorded): string => String(r.headers.authorization).replace(/^Bearer /, '');
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
/** Answers with `fail(key)` when it returns one, else as OpenAI would. */
const byKey = (fail: (key: string) => ReturnType<typeof json> | undefined): MockHandler => (r, provider) => fail(keyOf(r)) ?? defaultReply(provider, r);

async function pooled(): Promise<{ g: TestGateway; client: OpenAI }> {
  const g = await startTestGateway({ providerKeys: { openai: [KEY_A, KEY_B] }, settings: { routing: { ...DEFAULT_ROUTING, backoff: { baseMs: 10, maxMs: 20 } } } });
  gw = g;
  g.mocks.openai.setHandler(byKey(() => undefined)); // both keys are good until a test says otherwise
  return { g, client: new OpenAI({ baseURL: `${g.url}/v1`, apiKey: g.key, maxRetries: 0 }) };
}
const ask = (client: OpenAI, headers: Record<string, string> = {}) =>
  client.chat.completions.create({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }, { headers }).withResponse();

it('a 429 on one key: the next key serves the same request at once, and the first rests until its retry-after', async () => {
  const { g, client } = await pooled();
  g.mocks.openai.setHandler(byKey((k) => (k === KEY_A ? json(429, { error: { message: 'rate limited', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '60' }) : undefined)));
  const first = await ask(client);
  expect(first.response.headers.get('x-gateway-route')).toBe('openai/gpt-5.4#env1=429, openai/gpt-5.4#env2=200');
  for (let i = 0; i < 4; i++) await ask(client);
  // After the first two attempts, only the key not resting was used.
  expect(g.mocks.openai.requests.slice(2).map(keyOf)).toEqual([KEY_B, KEY_B, KEY_B, KEY_B]);
  expect(g.daemon.ctx.providerKeys.states('openai').map((k) => [k.label, k.state])).toEqual([['env1', 'resting'], ['env2', 'ok']]);
});

it('a key the provider refuses (401) is taken out; the next key serves; the refused one is never sent again', async () => {
  const { g, client } = await pooled();
  g.mocks.openai.setHandler(byKey((k) => (k === KEY_A ? json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }) : undefined)));
  const first = await ask(client);
  expect(first.response.headers.get('x-gateway-route')).toBe('openai/gpt-5.4#env1=401, openai/gpt-5.4#env2=200');
  for (let i = 0; i < 3; i++) await ask(client);
  expect(g.mocks.openai.requests.map(keyOf)).toEqual([KEY_A, KEY_B, KEY_B, KEY_B, KEY_B]);
  expect(g.daemon.ctx.providerKeys.states('openai')[0]).toMatchObject({ label: 'env1', state: 'refused', status: 401 });
});

it('healthy keys share the load round-robin; under c=64 with one key resting, every request is served', async () => {
  const { g, client } = await pooled();
  await Promise.all(Array.from({ length: 8 }, () => ask(client)));
  const counts = (rs: Recorded[]) => ({ a: rs.filter((r) => keyOf(r) === KEY_A).length, b: rs.filter((r) => keyOf(r) === KEY_B).length });
  expect(counts(g.mocks.openai.requests)).toEqual({ a: 4, b: 4 });
  g.mocks.openai.setHandler(byKey((k) => (k === KEY_A ? json(429, { error: { message: 'slow down', type: 'tokens', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '30' }) : undefined)));
  const before = g.mocks.openai.requests.length;
  const results = await Promise.all(Array.from({ length: 64 }, () => ask(client).then((r) => r.data.choices[0]!.message.content)));
  expect(results.every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
  // Key A is asked only by the requests already on their way when it was rate-limited.
  const after = g.mocks.openai.requests.slice(before);
  expect(counts(after).b).toBe(64);
});

it('a session keeps its key while it is healthy, so the provider\'s cache for it stays warm', async () => {
  const { g, client } = await pooled();
  await ask(client, { 'x-gateway-session': 's1' });
  for (let i = 0; i < 3; i++) await ask(client, { 'x-gateway-session': 's1' });
  const keys = g.mocks.openai.requests.map(keyOf);
  expect(new Set(keys).size).toBe(1);
});
