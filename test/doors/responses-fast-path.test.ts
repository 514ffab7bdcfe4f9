// POST /v1/responses for OpenAI's models: the body goes to OpenAI's /v1/responses as it came (only
// the model and the key changed), built-in tools, OpenAI's own previous_response_id and fields we
// do not know included; the answer comes back byte for byte. A conversation the gateway stored
// (from another provider's model) that moves to OpenAI is sent whole instead of by id.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, FINAL_TEXT } from '../helpers/scripted-providers.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import type { GatewayEvent } from '../../src/daemon/events.js';

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
