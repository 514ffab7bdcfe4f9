// The unified endpoint end to end: the official `openai` SDK (and the Vercel AI SDK) as clients,
// the real daemon, and mock providers answering in each provider's wire format.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText, tool, jsonSchema, stepCountIs } from 'ai';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, FINAL_TEXT, GEMINI_SIGNATURE, geminiScript, openaiScript } from '../helpers/scripted-providers.js';

let gw: TestGateway;
let client: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { bodyLimitBytes: 32 * 1024 * 1024, aliases: { fast: 'gemini/gemini-3.5-flash' } } });
  gw.mocks.anthropic.setHandler(anthropicScript);
  gw.mocks.gemini.setHandler(geminiScript);
  gw.mocks.openai.setHandler(openaiScript);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
};

const CASES = [
  { provider: 'anthropic', model: 'anthropic/claude-opus-5', shown: 'anthropic/claude-opus-5' },
  { provider: 'gemini', model: 'gemini/gemini-3.5-flash', shown: 'gemini/gemini-3.5-flash' },
  { provider: 'openai', model: 'openai/gpt-5.4', shown: 'gpt-5.4' },
] as const;

const lastUpstream = (p: 'anthropic' | 'gemini' | 'openai') => JSON.parse(gw.mocks[p].requests.at(-1)!.body.toString()) as Record<string, any>;

describe.each(CASES)('$provider through /v1/chat/completions', ({ provider, model, shown }) => {
  it('plain completion: text, model naming rule, usage', async () => {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }] });
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe(shown);
    expect(r.choices[0]!.message.content).toBe(FINAL_TEXT);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
    // The provider got its own id, the routing prefix stripped: in the path for Gemini, else the body.
    if (provider === 'gemini') expect(gw.mocks.gemini.requests.at(-1)!.url).toMatch(/^\/v1beta\/models\/gemini-3\.5-flash:generateContent(\?|$)/);
    else expect(lastUpstream(provider).model).toBe(model.slice(model.indexOf('/') + 1));
    if (provider === 'anthropic') {
      expect(r.usage!.prompt_tokens).toBe(125); // input + cache writes + cache reads
      expect(r.usage!.prompt_tokens_details?.cached_tokens).toBe(100);
      expect(lastUpstream('anthropic').max_tokens).toBeGreaterThan(0); // supplied by the gateway
      expect(lastUpstream('anthropic').model).toBe('claude-opus-5');
    }
    if (provider === 'gemini') {
      expect(r.usage!.completion_tokens).toBe(12); // candidates + thoughts
      expect(r.usage!.completion_tokens_details?.reasoning_tokens).toBe(4);
      expect(gw.mocks.gemini.requests.at(-1)!.url).toBe('/v1beta/models/gemini-3.5-flash:generateContent');
    }
    if (provider === 'openai') expect(lastUpstream('openai').model).toBe('gpt-5.4');
  });

  it('streamed text arrives as chunks with one id, role first, finish last, [DONE]', async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }], stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(2);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === shown)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(FINAL_TEXT);
    const finishes = chunks.map((c) => c.choices[0]?.finish_reason ?? null);
    expect(finishes.slice(0, -1).every((f) => f === null)).toBe(true);
    expect(finishes.at(-1)).toBe('stop');
    expect(chunks.some((c) => c.usage)).toBe(false); // not asked for
  });

  it('include_usage adds one final usage chunk with empty choices', async () => {
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }], stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.choices.length === 1)).toBe(true);
  });

  it('tool call round trip, streamed, reassembled by the SDK helpers', async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'developer', content: 'Use tools.' },
      { role: 'user', content: 'Weather in Paris?' },
    ];
    const runner = client.chat.completions.stream({ model, messages, tools: [weatherTool], tool_choice: 'auto' });
    const first = await runner.finalChatCompletion();
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.tool_calls).toHaveLength(1);
    const call = msg.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('unreachable');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    expect(call.id).toBeTruthy();

    messages.push({ role: 'assistant', content: msg.content ?? null, tool_calls: msg.tool_calls });
    messages.push({ role: 'tool', tool_call_id: call.id, content: '{"temp_c":18}' });
    const second = await client.chat.completions.create({ model, messages, tools: [weatherTool] });
    expect(second.choices[0]!.message.content).toBe(FINAL_TEXT);

    const up = lastUpstream(provider);
    if (provider === 'anthropic') {
      expect(call.id).toBe('toolu_01A');
      expect(up.system.map((b: any) => b.text)).toEqual(['You are terse.', 'Use tools.']);
      const assistant = up.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.content.some((b: any) => b.type === 'tool_use' && b.id === 'toolu_01A' && b.input.city === 'Paris')).toBe(true);
      const lastUser = up.messages.at(-1);
      expect(lastUser.role).toBe('user');
      expect(lastUser.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01A' });
      expect(up.tools[0]).toMatchObject({ name: 'get_weather', input_schema: { type: 'object' } });
    }
    if (provider === 'gemini') {
      expect(up.systemInstruction.parts.map((p: any) => p.text)).toEqual(['You are terse.', 'Use tools.']);
      const model = up.contents.find((c: any) => c.role === 'model');
      const fc = model.parts.find((p: any) => p.functionCall);
      expect(fc.functionCall).toMatchObject({ id: 'fc_91', name: 'get_weather', args: { city: 'Paris' } });
      expect(fc.thoughtSignature).toBe(GEMINI_SIGNATURE); // survives the OpenAI round trip
      const fr = up.contents.at(-1).parts.find((p: any) => p.functionResponse);
      expect(fr.functionResponse).toMatchObject({ id: 'fc_91', name: 'get_weather' });
    }
    if (provider === 'openai') {
      expect(up.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_7Qa' });
    }
  });

  it('image parts: data URL and https URL', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ] }] });
    const up = lastUpstream(provider);
    if (provider === 'anthropic') {
      const parts = up.messages[0].content;
      expect(parts[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } });
      expect(parts[2]).toEqual({ type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } });
    }
    if (provider === 'gemini') {
      const parts = up.contents[0].parts;
      expect(parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: png } });
      expect(parts[2]).toEqual({ fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } });
    }
    if (provider === 'openai') expect(up.messages[0].content[1].image_url.url).toContain('data:image/png');
  });

  it('the Vercel AI SDK (openai-compatible) works unchanged, with tools and streaming', async () => {
    const gateway = createOpenAICompatible({ name: 'gateway', baseURL: `${gw.url}/v1`, apiKey: gw.key, includeUsage: true });
    const plain = await generateText({ model: gateway(model), prompt: 'Weather?' });
    expect(plain.text).toBe(FINAL_TEXT);
    expect(plain.usage.inputTokens).toBeGreaterThan(0);
    const withTools = await generateText({
      model: gateway(model), prompt: 'Weather in Paris?', stopWhen: stepCountIs(3),
      tools: { get_weather: tool({ description: 'Current weather', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => ({ city, temp_c: 18 }) }) },
    });
    expect(withTools.steps[0]!.toolCalls[0]!.input).toEqual({ city: 'Paris' });
    expect(withTools.text).toBe(FINAL_TEXT);
    const s = streamText({ model: gateway(model), prompt: 'Weather?' });
    let text = '';
    for await (const t of s.textStream) text += t;
    expect(text).toBe(FINAL_TEXT);
  });
});

describe('routing', () => {
  it('plain well-known names and aliases pick their provider', async () => {
    for (const [name, provider] of [['claude-opus-5', 'anthropic'], ['gemini-3.5-flash', 'gemini'], ['gpt-5.4', 'openai'], ['o3', 'openai'], ['fast', 'gemini'], ['google/gemini-3.5-flash', 'gemini']] as const) {
      const before = gw.mocks[provider].requests.length;
      await client.chat.completions.create({ model: name, messages: [{ role: 'user', content: 'x' }] });
      expect(gw.mocks[provider].requests.length, name).toBe(before + 1);
    }
  });

  it('an unknown model is a 400 model_not_found that lists the accepted forms', async () => {
    const err = await client.chat.completions.create({ model: 'llama-3-70b', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('model_not_found');
    expect(err.message).toMatch(/anthropic\/<model>/);
  });

  it('GET /v1/models lists aliases and each provider\'s models with prefixes', async () => {
    const list = await client.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['fast', 'anthropic/claude-opus-5', 'openai/gpt-5.4', 'gemini/gemini-3.5-flash']));
    expect(ids).not.toContain('gemini/text-embedding-004');
  });
});

describe('bad input never reaches a provider', () => {
  const bad: Array<[string, unknown, RegExp]> = [
    ['malformed JSON', '{"model": "gpt-5.4", messages: [}', /not valid JSON/],
    ['missing model', { messages: [{ role: 'user', content: 'x' }] }, /model: is required/],
    ['missing messages', { model: 'anthropic/claude-opus-5' }, /messages: is required/],
    ['empty messages', { model: 'anthropic/claude-opus-5', messages: [] }, /at least one message/],
    ['unknown role', { model: 'anthropic/claude-opus-5', messages: [{ role: 'robot', content: 'x' }] }, /messages\[0\]\.role/],
    ['wrong type', { model: 'anthropic/claude-opus-5', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' }, /temperature: must be a number/],
    ['content not string', { model: 'gemini/gemini-3.5-flash', messages: [{ role: 'user', content: 42 }] }, /messages\[0\]\.content/],
    ['bad tool_choice', { model: 'gemini/gemini-3.5-flash', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } }, /tool_choice\.function\.name/],
  ];
  for (const [name, body, message] of bad) {
    it(`${name} → 400 naming the field`, async () => {
      const before = gw.mocks.anthropic.requests.length + gw.mocks.gemini.requests.length + gw.mocks.openai.requests.length;
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      expect(r.status).toBe(400);
      const e = (await r.json()) as { error: { message: string; type: string } };
      expect(e.error.type).toBe('invalid_request_error');
      expect(e.error.message).toMatch(message);
      expect(gw.mocks.anthropic.requests.length + gw.mocks.gemini.requests.length + gw.mocks.openai.requests.length).toBe(before);
    });
  }
});
