// POST /v1/messages with models that are not Anthropic's: the official Anthropic SDK as the client,
// the gateway translating through the IR to each provider's own protocol (mock providers on
// loopback that answer tool calls in their own wire format). Text, streams, a tool round trip
// streamed and not, calls Gemini gave no id, Claude Code's defaults, provider errors and a stream
// cut short.
import Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// These tests are about how one provider answer reaches the client: no retries (test/routing has those).
import { NO_RETRIES } from '../helpers/routing.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { MockHandler } from '../helpers/mock-provider.js';
import { FINAL_TEXT, geminiScript, openaiScript } from '../helpers/scripted-providers.js';

let gw: TestGateway;
let client: Anthropic;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { routing: NO_RETRIES } });
  gw.mocks.openai.setHandler(openaiScript);
  gw.mocks.gemini.setHandler(geminiScript);
  client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const weather: Anthropic.Tool = { name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

const CASES = [
  { provider: 'openai', model: 'openai/gpt-5.4', shown: 'openai/gpt-5.4', usage: { input_tokens: 25, output_tokens: 9 } },
  // Gemini counts its 10 cached tokens inside promptTokenCount; Anthropic's input_tokens leaves them out.
  { provider: 'gemini', model: 'gemini/gemini-3.5-flash', shown: 'gemini/gemini-3.5-flash', usage: { input_tokens: 20, output_tokens: 12 } },
] as const;

const upstream = (p: 'openai' | 'gemini') => gw.mocks[p].requests.at(-1)!;
const upstreamBody = (p: 'openai' | 'gemini') => JSON.parse(upstream(p).body.toString()) as Record<string, any>;

describe.each(CASES)('Messages door → $provider', ({ provider, model, shown, usage }) => {
  it('a plain answer, under the provider/<id> name, with usage', async () => {
    const msg = await client.messages.create({ model, max_tokens: 256, system: 'Be brief.', messages: [{ role: 'user', content: 'Weather?' }] });
    expect(msg.type).toBe('message');
    expect(msg.model).toBe(shown);
    expect(msg.content).toEqual([{ type: 'text', text: FINAL_TEXT }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage).toMatchObject(usage);
    expect(upstream(provider).body.toString()).not.toContain(gw.key);
  });

  it('a stream the SDK assembles into the same answer', async () => {
    const stream = client.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Weather?' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const msg = await stream.finalMessage();
    expect(texts.join('')).toBe(FINAL_TEXT);
    expect(texts.length).toBeGreaterThan(1);
    expect(msg.model).toBe(shown);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage.output_tokens).toBe(usage.output_tokens);
  });

  it.each([false, true])('a tool round trip (stream: %s): the call\'s id comes back to the provider', async (stream) => {
    const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
    const first = stream
      ? await client.messages.stream({ model, max_tokens: 256, tools: [weather], messages: [ask] }).finalMessage()
      : await client.messages.create({ model, max_tokens: 256, tools: [weather], messages: [ask] });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(call).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    expect(call.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    const second = await client.messages.create({
      model, max_tokens: 256, tools: [weather],
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18°C, sunny' }] }],
    });
    expect(second.content).toEqual([{ type: 'text', text: FINAL_TEXT }]);
    const sent = upstreamBody(provider);
    if (provider === 'openai') {
      expect(sent.messages.at(-2).tool_calls[0].id).toBe('call_7Qa');
      expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_7Qa', content: '18°C, sunny' });
    } else {
      const modelTurn = sent.contents.at(-2);
      // Gemini gets its own call id and thought signature back, and the result under the tool's name.
      expect(modelTurn.parts.find((p: any) => p.functionCall)).toMatchObject({ functionCall: { id: 'fc_91', name: 'get_weather' }, thoughtSignature: expect.any(String) });
      expect(sent.contents.at(-1).parts[0].functionResponse).toMatchObject({ id: 'fc_91', name: 'get_weather' });
    }
  });

  it('an image in the user turn reaches the provider in its own form', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    await client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }] });
    const sent = upstreamBody(provider);
    if (provider === 'openai') expect(sent.messages.at(-1).content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }]);
    else expect(sent.contents.at(-1).parts).toEqual([{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: png } }]);
  });

  it('takes what Claude Code sends (thinking, effort, context_management, cache_control, 32000 tokens, a system message after the user)', async () => {
    const cc = JSON.parse(readFileSync(new URL('../fixtures/protocols/anthropic-client/claude-code.request.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const r = await fetch(`${gw.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,effort-2025-11-24,context-management-2025-06-27' },
      body: JSON.stringify({ ...cc, model }),
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('event: message_stop');
    const sent = upstreamBody(provider);
    if (provider === 'openai') {
      expect(sent.max_completion_tokens).toBe(32000);
      expect(sent.reasoning_effort).toBe('high');
      expect(sent.messages[0].role).toBe('system');
      expect(sent.tools.map((t: any) => t.function.name)).toEqual(['Agent', 'Bash', 'DeferredToolPlaceholder']);
    } else {
      expect(sent.generationConfig.maxOutputTokens).toBe(32000);
      expect(sent.systemInstruction.parts.length).toBeGreaterThan(0);
    }
  });
});

describe('Messages door: failures in Anthropic\'s shape', () => {
  it('a provider 429 is a rate_limit_error with its retry-after kept', async () => {
    gw.mocks.openai.setHandler(() => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '9' }, body: JSON.stringify({ error: { message: 'Rate limit reached for gpt-5.4', type: 'requests', param: null, code: 'rate_limit_exceeded' } }) }));
    try {
      const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key }, body: JSON.stringify({ model: 'gpt-5.4', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('9');
      expect(await r.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached for gpt-5.4' } });
    } finally { gw.mocks.openai.setHandler(openaiScript); }
  });

  it('a field only Anthropic can honour is refused naming the field and the provider, nothing sent upstream', async () => {
    const before = gw.mocks.openai.requests.length;
    const err = await client.messages.create({ model: 'openai/gpt-5.4', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search_20250305', name: 'web_search' } as never] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toMatch(/tools\[0\]\.type.*OpenAI/);
    expect(gw.mocks.openai.requests.length).toBe(before);
  });
});

describe('Messages door: a provider that breaks off its stream', () => {
  let cutter: Server;
  let cgw: TestGateway;
  beforeAll(async () => {
    cutter = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5.4', choices: [{ index: 0, delta: { role: 'assistant', content: 'Par' }, finish_reason: null }] })}\n\n`);
        setTimeout(() => res.socket?.destroy(), 50);
      });
    });
    await new Promise<void>((resolve) => cutter.listen(0, '127.0.0.1', () => resolve()));
    cgw = await startTestGateway({ origins: { openai: `http://127.0.0.1:${(cutter.address() as AddressInfo).port}` } });
  });
  afterAll(async () => { await cgw?.close(); cutter?.closeAllConnections(); cutter?.close(); });

  it('ends in an error event the SDK raises, never in message_stop', async () => {
    const c = new Anthropic({ baseURL: cgw.url, apiKey: cgw.key, maxRetries: 0 });
    const raw = await fetch(`${cgw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': cgw.key }, body: JSON.stringify({ model: 'gpt-5.4', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    const text = await raw.text();
    expect(text).toContain('event: error');
    expect(text).not.toContain('message_stop');
    const err = await c.messages.stream({ model: 'gpt-5.4', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toMatch(/broke off|stream/);
  });
});

describe('Messages door → Gemini calls without ids (as gemini-2.5-flash answers)', () => {
  const clock: Anthropic.Tool = { name: 'get_time', description: 'Local time', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
  const calls = [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }, { functionCall: { name: 'get_time', args: { city: 'Oslo' } } }];
  /** Two calls without ids for a request that offers tools; text once the results are in. */
  const twoCalls: MockHandler = (r) => {
    const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
    if (!m) return undefined;
    const b = JSON.parse(r.body.toString()) as Record<string, any>;
    const answered = b.contents.at(-1).parts.some((p: any) => p.functionResponse);
    const answer = { candidates: [{ content: { role: 'model', parts: answered ? [{ text: FINAL_TEXT }] : calls }, finishReason: 'STOP', index: 0 }], modelVersion: 'gemini-2.5-flash' };
    return m[2] === 'generateContent'
      ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) }
      : { headers: { 'content-type': 'text/event-stream' }, chunks: [`data: ${JSON.stringify(answer)}\r\n\r\n`] };
  };
  beforeAll(() => { gw.mocks.gemini.setHandler(twoCalls); });
  afterAll(() => { gw.mocks.gemini.setHandler(geminiScript); });

  it.each([false, true])('each call gets its own id, and each result goes back to its own call (stream: %s)', async (stream) => {
    const model = 'gemini/gemini-2.5-flash';
    const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather and time in Oslo?' };
    const first = stream
      ? await client.messages.stream({ model, max_tokens: 256, tools: [weather, clock], messages: [ask] }).finalMessage()
      : await client.messages.create({ model, max_tokens: 256, tools: [weather, clock], messages: [ask] });
    const uses = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => u.name)).toEqual(['get_weather', 'get_time']);
    expect(new Set(uses.map((u) => u.id)).size).toBe(2);
    for (const u of uses) expect(u.id).toMatch(/^[a-zA-Z0-9_-]+$/);

    // Answered in the other order, as a client whose second tool finished first may.
    const results: Anthropic.ToolResultBlockParam[] = uses.map((u): Anthropic.ToolResultBlockParam => ({ type: 'tool_result', tool_use_id: u.id, content: u.name === 'get_weather' ? '{"temp_c":3}' : '{"time":"14:05"}' })).reverse();
    const second = await client.messages.create({ model, max_tokens: 256, tools: [weather, clock], messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: results }] });
    expect(second.content).toEqual([{ type: 'text', text: FINAL_TEXT }]);
    const sent = upstreamBody('gemini');
    expect(sent.contents.at(-2)).toEqual({ role: 'model', parts: calls });
    expect(sent.contents.at(-1)).toEqual({ role: 'user', parts: [
      { functionResponse: { name: 'get_weather', response: { output: { temp_c: 3 } } } },
      { functionResponse: { name: 'get_time', response: { output: { time: '14:05' } } } },
    ] });
  });
});
