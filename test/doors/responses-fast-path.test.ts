// POST /v1/responses for OpenAI's models: the body goes to OpenAI's /v1/responses as it came (only
// the model and the key changed), built-in tools, OpenAI's own previous_response_id and fields we
// do not know included; the answer comes back byte for byte. A conversation the gateway stored
// (from another provider's model) that moves to OpenAI is sent whole instead of by id.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, FINAL_TEXT } from '../helpers/scripted-providers.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';

let gw: TestGateway;
let client: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway();
  gw.mocks.anthropic.setHandler(anthropicScript);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const last = () => gw.mocks.openai.requests.at(-1)!;

describe('Responses door → OpenAI (fast path)', () => {
  it('sends the client\'s body as it came, model and key changed, and relays the answer untouched', async () => {
    const body = {
      model: 'openai/gpt-5.4', input: 'hi', store: true, previous_response_id: 'resp_openai_own_123', tools: [{ type: 'web_search' }, { type: 'code_interpreter', container: { type: 'auto' } }],
      include: ['reasoning.encrypted_content'], prompt_cache_key: 'abc', some_future_field: { x: 1 },
    };
    const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(r.status).toBe(200);
    const answer = await r.json() as Record<string, any>;
    expect(answer.id).toBe('resp_mock');
    expect(answer.output[0].content[0].text).toBe(MOCK_TEXT);
    expect(last().url).toBe('/v1/responses');
    expect(last().headers.authorization).toBe(`Bearer ${gw.mocks.openai.key}`);
    expect(JSON.parse(last().body.toString())).toEqual({ ...body, model: 'gpt-5.4' });
    expect(last().body.toString()).not.toContain(gw.key);
  });

  it('streams as OpenAI streamed, through the SDK', async () => {
    const final = await client.responses.stream({ model: 'gpt-5.4', input: 'hi' }).finalResponse();
    expect(final.output_text).toBe(MOCK_TEXT);
    expect(JSON.parse(last().body.toString()).model).toBe('gpt-5.4');
  });

  it.each([
    ['the Responses door, streamed', '/v1/responses', true],
    ['the Responses door, whole', '/v1/responses', false],
    ['the native prefix, streamed', '/openai/v1/responses', true],
  ] as const)('accounts the tokens of an answer relayed untouched: %s', async (_what, path, stream) => {
    const seen: GatewayEvent[] = [];
    const unsubscribe = gw.daemon.ctx.bus.subscribe((e) => seen.push(e));
    try {
      const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.4', input: 'hi', stream }) });
      expect(r.status).toBe(200);
      await r.text();
      await expect.poll(() => seen.some((e) => e.type === 'finished' || e.type === 'failed')).toBe(true);
      // The mock's usage: 12 input tokens, one output token per word of its answer.
      expect(seen.find((e) => e.type === 'finished')).toMatchObject({ status: 200, model: 'gpt-5.4', usage: { inputTokens: 12, outputTokens: MOCK_TEXT.split(' ').length, cachedTokens: 0, reasoningTokens: 0 } });
    } finally { unsubscribe(); }
  });

  it('an answer OpenAI keeps is read and deleted back through the door by the key that made it, and by no other', async () => {
    // OpenAI's side: it keeps resp_mock (the mock's id for every answer) until it is deleted.
    let kept = true;
    gw.mocks.openai.setHandler((r) => {
      if (!r.url.startsWith('/v1/responses/resp_mock')) return undefined;
      const reply = (status: number, body: unknown) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!kept) return reply(404, { error: { message: "Response with id 'resp_mock' not found.", type: 'invalid_request_error', param: null, code: null } });
      if (r.method === 'DELETE') { kept = false; return reply(200, { id: 'resp_mock', object: 'response', deleted: true }); }
      if (r.url.startsWith('/v1/responses/resp_mock/input_items')) return reply(200, { object: 'list', data: [{ id: 'msg_in', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'keep me' }] }], first_id: 'msg_in', last_id: 'msg_in', has_more: false });
      return reply(200, { id: 'resp_mock', object: 'response', status: 'completed', model: 'gpt-5.4', output: [{ type: 'message', id: 'msg_out', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'kept by OpenAI', annotations: [] }] }] });
    });
    try {
      const made = await client.responses.create({ model: 'openai/gpt-5.4', input: 'keep me' });
      expect(made.id).toBe('resp_mock');
      await expect.poll(async () => (await client.responses.retrieve('resp_mock').catch(() => undefined))?.output_text).toBe('kept by OpenAI');
      const sent = gw.mocks.openai.requests.at(-1)!;
      expect(`${sent.method} ${sent.url}`).toBe('GET /v1/responses/resp_mock');
      expect(sent.headers.authorization).toBe(`Bearer ${gw.mocks.openai.key}`);
      const items = await client.responses.inputItems.list('resp_mock');
      expect(items.data.map((i) => i.id)).toEqual(['msg_in']);

      // Another proxy key sees nothing, and nothing reaches OpenAI for it.
      const other = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.keys.create({ name: 'other' }).key, maxRetries: 0 });
      await gw.daemon.reload();
      const before = gw.mocks.openai.requests.length;
      await expect(other.responses.retrieve('resp_mock')).rejects.toMatchObject({ status: 404 });
      await expect(other.responses.delete('resp_mock')).rejects.toMatchObject({ status: 404 });
      expect(gw.mocks.openai.requests.length).toBe(before);

      await client.responses.delete('resp_mock');
      expect(kept).toBe(false);
      await expect(client.responses.retrieve('resp_mock')).rejects.toMatchObject({ status: 404 });
    } finally { gw.mocks.openai.setHandler(undefined); }
  });

  it('an answer OpenAI keeps cannot be continued on another provider\'s model: a 400 that says why', async () => {
    const made = await client.responses.create({ model: 'gpt-5.4', input: 'hi' });
    await expect.poll(() => gw.daemon.ctx.responses.get(made.id, gw.keys.list().find((k) => k.name === 'test')!.id)).toBeDefined();
    const err = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'and then?', previous_response_id: made.id }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'previous_response_id' });
    expect((err as Error).message).toMatch(/kept by OpenAI.*continue it on one of OpenAI's models, or send its items as input/);
    // On an OpenAI model the id goes to OpenAI as it came.
    await client.responses.create({ model: 'gpt-5.4', input: 'and then?', previous_response_id: made.id });
    expect(JSON.parse(gw.mocks.openai.requests.at(-1)!.body.toString()).previous_response_id).toBe(made.id);
  });

  it('a store: false answer from OpenAI is not recorded', async () => {
    const keyId = gw.keys.list().find((k) => k.name === 'test')!.id;
    await gw.daemon.ctx.responses.delete('resp_mock', keyId);
    await client.responses.create({ model: 'gpt-5.4', input: 'hi', store: false });
    await gw.daemon.ctx.responses.flush();
    expect(await gw.daemon.ctx.responses.get('resp_mock', keyId)).toBeUndefined();
  });

  it('a stored conversation from a Claude model continues on OpenAI, sent whole', async () => {
    const first = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Remember: Paris.' });
    expect(first.output_text).toBe(FINAL_TEXT);
    await client.responses.create({ model: 'openai/gpt-5.4', previous_response_id: first.id, input: 'Where?' });
    const sent = JSON.parse(last().body.toString()) as Record<string, any>;
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input.map((i: any) => i.role ?? i.type)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent.input)).toContain('Remember: Paris.');
    expect(JSON.stringify(sent.input)).toContain(FINAL_TEXT);
  });
});
