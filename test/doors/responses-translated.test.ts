// POST /v1/responses with models that are not OpenAI's: the official OpenAI SDK as the client, the
// gateway translating through the IR to Anthropic's and Gemini's own protocols (mock providers on
// loopback answering tool calls in their wire formats). Plain and item input, streams the SDK
// assembles, tool round trips stateless (items resent) and chained (previous_response_id), the
// stored answers (retrieve, delete, input_items), store: false, and the errors.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// These tests are about how one provider answer reaches the client: no retries (test/routing has those).
import { NO_RETRIES } from '../helpers/routing.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, FINAL_TEXT, GEMINI_SIGNATURE, geminiScript } from '../helpers/scripted-providers.js';

let gw: TestGateway;
let client: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { routing: NO_RETRIES } });
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

describe('Responses door: reasoning state round-trips through a stateless client', () => {
  it('Claude\'s thinking signature travels in encrypted_content and reaches Anthropic again', async () => {
    const SIG = 'EqQBCkYIBxgCKkB' + 'x'.repeat(120);
    gw.mocks.anthropic.setHandler((r) => {
      const b = JSON.parse(r.body.toString()) as Record<string, any>;
      const last = b.messages.at(-1);
      const done = Array.isArray(last.content) && last.content.some((c: any) => c.type === 'tool_result');
      const content = done
        ? [{ type: 'text', text: FINAL_TEXT }]
        : [{ type: 'thinking', thinking: 'The user wants Paris weather.', signature: SIG }, { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Paris' } }];
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'msg_t', type: 'message', role: 'assistant', model: b.model, content, stop_reason: done ? 'end_turn' : 'tool_use', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }) };
    });
    try {
      const model = 'anthropic/claude-sonnet-4-5';
      const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await client.responses.create({ model, input, tools: [weather], store: false, include: ['reasoning.encrypted_content'], reasoning: { effort: 'medium', summary: 'auto' } });
      const reasoning = first.output.find((o) => o.type === 'reasoning') as OpenAI.Responses.ResponseReasoningItem;
      expect(reasoning.summary[0]?.text).toBe('The user wants Paris weather.');
      expect(reasoning.encrypted_content).toBeTruthy();
      expect(reasoning.encrypted_content).not.toContain(SIG); // opaque to the client
      const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      await client.responses.create({
        model, tools: [weather], store: false,
        input: [...input, ...first.output as OpenAI.Responses.ResponseInputItem[], { type: 'function_call_output', call_id: call.call_id, output: [{ type: 'input_text', text: '18°C' }] }],
      });
      const sent = upstreamBody('anthropic');
      const assistant = sent.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'The user wants Paris weather.', signature: SIG });
      expect(assistant.content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_01B' });
      expect(sent.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01B' });
    } finally { gw.mocks.anthropic.setHandler(anthropicScript); }
  });

  it('Gemini\'s thought signature on a call comes back to Gemini with the call', async () => {
    const model = 'gemini/gemini-3.5-flash';
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.responses.stream({ model, input, tools: [weather], store: false }).finalResponse();
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    await client.responses.create({
      model, tools: [weather], store: false,
      input: [...input, ...first.output as OpenAI.Responses.ResponseInputItem[], { type: 'function_call_output', call_id: call.call_id, output: '18°C' }],
    });
    const sent = upstreamBody('gemini');
    const modelTurn = sent.contents.find((c: any) => c.role === 'model');
    expect(modelTurn.parts[0].functionCall).toMatchObject({ id: 'fc_91', name: 'get_weather' });
    expect(modelTurn.parts[0].thoughtSignature).toBe(GEMINI_SIGNATURE);
    expect(sent.contents.at(-1).parts[0].functionResponse).toMatchObject({ id: 'fc_91', name: 'get_weather' });
  });
});

describe('Responses door: what the request cannot have, and failures in OpenAI\'s shape', () => {
  it('a tool only OpenAI runs is refused naming it; nothing goes upstream', async () => {
    const before = gw.mocks.anthropic.requests.length;
    const err = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'tools[0].type' });
    expect((err as Error).message).toMatch(/file_search.*Anthropic/);
    expect(gw.mocks.anthropic.requests.length).toBe(before);
  });

  it('web search is left out unless the request forces it', async () => {
    const ok = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hi', tools: [{ type: 'web_search' }, weather] });
    expect(ok.status).toBe('completed');
    expect(upstreamBody('anthropic').tools.map((t: any) => t.name)).toEqual(['get_weather']);
    const err = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } as never }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'tools[0].type' });
  });

  it('a wrong key is a 401 and an unknown model a 400, in OpenAI\'s shape', async () => {
    const bad = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-proxy-wrong', maxRetries: 0 });
    await expect(bad.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hi' })).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
    await expect(client.responses.create({ model: 'nosuch/model', input: 'hi' })).rejects.toMatchObject({ status: 400, param: 'model' });
  });

  it('a provider 429 keeps its retry-after', async () => {
    gw.mocks.anthropic.setHandler(() => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' }, body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } }) }));
    try {
      const r = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', input: 'hi' }) });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('7');
      expect(await r.json()).toMatchObject({ error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Number of requests has exceeded your rate limit' } });
    } finally { gw.mocks.anthropic.setHandler(anthropicScript); }
  });

  it('a provider that breaks off mid-stream gives response.failed, never response.completed', async () => {
    gw.mocks.anthropic.setHandler((r) => {
      const b = JSON.parse(r.body.toString()) as Record<string, any>;
      const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...(data as object) })}\n\n`;
      return { headers: { 'content-type': 'text/event-stream' }, chunks: [
        ev('message_start', { message: { id: 'msg_c', type: 'message', role: 'assistant', model: b.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Par' } }),
      ] };
    });
    try {
      const raw = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', input: 'hi', stream: true }) });
      const text = await raw.text();
      expect(text).toContain('event: response.failed');
      expect(text).not.toContain('response.completed');
      // The SDK gives the failed response (as it does for OpenAI's own), with the error in it.
      const final = await client.responses.stream({ model: 'anthropic/claude-sonnet-4-5', input: 'hi' }).finalResponse();
      expect(final.status).toBe('failed');
      expect(final.error?.code).toBe('upstream_stream_ended'); // closed without message_stop
      expect(final.error?.message).toMatch(/ended|broke off/);
    } finally { gw.mocks.anthropic.setHandler(anthropicScript); }
  });
});
