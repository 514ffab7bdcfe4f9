// POST /v1/responses with models that are not OpenAI's: the official OpenAI SDK as the client, the
// gateway translating through the IR to Anthropic's and Gemini's own protocols (mock providers on
// loopback answering tool calls in their wire formats). Plain and item input, streams the SDK
// assembles, tool round trips stateless (items resent) and chained (previous_response_id), the
// stored answers (retrieve, delete, input_items), store: false, and the errors.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, FINAL_TEXT, geminiScript } from '../helpers/scripted-providers.js';

let gw: TestGateway;
let client: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway();
  gw.mocks.anthropic.setHandler(anthropicScript);
  gw.mocks.gemini.setHandler(geminiScript);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const weather: OpenAI.Responses.FunctionTool = {
  type: 'function', name: 'get_weather', description: 'Current weather', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const CASES = [
  { provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', usage: { input_tokens: 125, output_tokens: 9 } },
  { provider: 'gemini', model: 'gemini/gemini-3.5-flash', usage: { input_tokens: 30, output_tokens: 12 } },
] as const;

const upstreamBody = (p: 'anthropic' | 'gemini') => JSON.parse(gw.mocks[p].requests.at(-1)!.body.toString()) as Record<string, any>;

describe.each(CASES)('Responses door → $provider', ({ provider, model, usage }) => {
  it('a plain answer from string input, with usage and the request echoed', async () => {
    const r = await client.responses.create({ model, input: 'Weather?', instructions: 'Be brief.' });
    expect(r.object).toBe('response');
    expect(r.id).toMatch(/^resp_/);
    expect(r.status).toBe('completed');
    expect(r.model.startsWith(`${provider}/`)).toBe(true);
    expect(r.output_text).toBe(FINAL_TEXT);
    expect(r.instructions).toBe('Be brief.');
    expect(r.usage).toMatchObject({ ...usage, total_tokens: usage.input_tokens + usage.output_tokens });
    expect(JSON.stringify(upstreamBody(provider))).toContain('Be brief.');
    expect(gw.mocks[provider].requests.at(-1)!.body.toString()).not.toContain(gw.key);
  });

  it('a stream of typed events in order, assembled by the SDK into the same answer', async () => {
    const stream = client.responses.stream({ model, input: [{ role: 'user', content: 'Weather?' }] });
    const types: string[] = [];
    const seqs: number[] = [];
    const deltas: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') deltas.push(ev.delta);
    }
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(FINAL_TEXT);
    expect(deltas.join('')).toBe(FINAL_TEXT);
    expect(deltas.length).toBeGreaterThan(1);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(final.usage?.output_tokens).toBe(usage.output_tokens);
  });

  it.each([false, true])('a stateless tool round trip, items resent (stream: %s)', async (stream) => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = stream
      ? await client.responses.stream({ model, input, tools: [weather], store: false }).finalResponse()
      : await client.responses.create({ model, input, tools: [weather], store: false });
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
    expect(JSON.parse((call as OpenAI.Responses.ResponseFunctionToolCall).arguments)).toEqual({ city: 'Paris' });
    const second = await client.responses.create({
      model, tools: [weather], store: false,
      input: [...input, ...first.output as OpenAI.Responses.ResponseInputItem[], { type: 'function_call_output', call_id: (call as OpenAI.Responses.ResponseFunctionToolCall).call_id, output: '18°C, sunny' }],
    });
    expect(second.output_text).toBe(FINAL_TEXT);
    expect(JSON.stringify(upstreamBody(provider))).toContain('18°C, sunny');
    // store: false keeps nothing: its id cannot be fetched or chained.
    await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.create({ model, previous_response_id: first.id, input: 'Again?' }))
      .rejects.toMatchObject({ status: 400, code: 'previous_response_not_found', param: 'previous_response_id' });
  });

  it('a chained tool round trip: previous_response_id gives the provider the whole conversation', async () => {
    const first = await client.responses.create({ model, input: 'Weather in Paris?', tools: [weather] });
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await client.responses.create({
      model, tools: [weather], previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '18°C, sunny' }],
    });
    expect(second.output_text).toBe(FINAL_TEXT);
    expect(second.previous_response_id).toBe(first.id);
    const sent = JSON.stringify(upstreamBody(provider));
    expect(sent).toContain('Weather in Paris?');
    expect(sent).toContain('18°C, sunny');
    expect(sent).toContain('get_weather');

    const got = await client.responses.retrieve(second.id);
    expect(got.output_text).toBe(FINAL_TEXT);
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data).toHaveLength(1);
    expect(items.data[0]).toMatchObject({ type: 'function_call_output', call_id: call.call_id });
    const deleted = await client.responses.delete(second.id);
    expect(deleted).toMatchObject({ id: second.id, object: 'response', deleted: true });
    await expect(client.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404 });
  });
});
