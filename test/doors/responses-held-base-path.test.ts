// An answer kept by a provider the user added (a Responses API behind a base URL with a path, e.g.
// …/inference/v1): read and deleted back through the door at that provider's own path, the base
// path written once, with its own key — as for OpenAI's answers in responses-fast-path.test.ts.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { configuredProviders } from '../../src/providers/configured.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

let gw: TestGateway;
let inf: MockProvider;
let client: OpenAI;

beforeAll(async () => {
  inf = await startMockProvider('openai', { mount: '/inference', key: 'sk-inf-key-0123456789' });
  const { providers, problems } = configuredProviders({ inf: { protocol: 'openai-responses', baseUrl: `${inf.origin}/inference/v1` } });
  expect(problems).toEqual([]);
  gw = await startTestGateway({ secrets: staticSecrets({ inf: inf.key }), settings: { providers, aliases: {} } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); await inf?.close(); });

it('reads and deletes a kept answer at the provider\'s own path, its base path written once', async () => {
  let kept = true;
  inf.setHandler((r) => {
    if (!r.url.startsWith('/v1/responses/resp_mock')) return undefined;
    const reply = (status: number, body: unknown) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!kept) return reply(404, { error: { message: "Response with id 'resp_mock' not found.", type: 'invalid_request_error', param: null, code: null } });
    if (r.method === 'DELETE') { kept = false; return reply(200, { id: 'resp_mock', object: 'response', deleted: true }); }
    return reply(200, { id: 'resp_mock', object: 'response', status: 'completed', model: 'm-1', output: [{ type: 'message', id: 'msg_out', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'kept by inf', annotations: [] }] }] });
  });
  const made = await client.responses.create({ model: 'inf/m-1', input: 'keep me' });
  expect(made.id).toBe('resp_mock');
  expect(inf.requests.at(-1)!.url).toBe('/inference/v1/responses');
  await expect.poll(async () => (await client.responses.retrieve('resp_mock').catch(() => undefined))?.output_text).toBe('kept by inf');
  const sent = inf.requests.at(-1)!;
  expect(`${sent.method} ${sent.url}`).toBe('GET /inference/v1/responses/resp_mock');
  expect(sent.headers.authorization).toBe(`Bearer ${inf.key}`);
  await client.responses.delete('resp_mock');
  expect(`${inf.requests.at(-1)!.method} ${inf.requests.at(-1)!.url}`).toBe('DELETE /inference/v1/responses/resp_mock');
  expect(kept).toBe(false);
});
