// The Gemini door at the root with models that are not Gemini's: the real @google/genai as the
// client (its base URL the gateway's root, the proxy key as its API key), the gateway translating
// through the IR to Anthropic's and OpenAI's own protocols (mock providers on loopback answering
// tool calls in their wire formats). Answers, SSE streams the SDK assembles, the JSON-array
// stream, system instructions, a function-call round trip whose ids come back, countTokens, JSON
// mode, both forms of a model id with a slash, bare names and aliases.
import { GoogleGenAI, type Content, type FunctionDeclaration } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, FINAL_TEXT, openaiScript } from '../helpers/scripted-providers.js';

let gw: TestGateway;
let ai: GoogleGenAI;
const events: GatewayEvent[] = [];
beforeAll(async () => {
  gw = await startTestGateway({ settings: { aliases: { house: 'anthropic/claude-sonnet-4-5' } } });
  gw.mocks.anthropic.setHandler(anthropicScript);
  gw.mocks.openai.setHandler(openaiScript);
  gw.daemon.ctx.bus.subscribe((e) => events.push(e));
  ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
});
afterAll(async () => { await gw?.close(); });

const weather: FunctionDeclaration = {
  name: 'get_weather', description: 'Current weather',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const CASES = [
  { provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', callId: 'toolu_01A', usage: { promptTokenCount: 125, cachedContentTokenCount: 100, candidatesTokenCount: 9, totalTokenCount: 134 } },
  { provider: 'openai', model: 'openai/gpt-5.4', callId: 'call_7Qa', usage: { promptTokenCount: 25, candidatesTokenCount: 9, totalTokenCount: 34 } },
] as const;

const upstream = (p: 'anthropic' | 'openai') => gw.mocks[p].requests.at(-1)!;
const upstreamBody = (p: 'anthropic' | 'openai') => JSON.parse(upstream(p).body.toString()) as Record<string, any>;
/** The system prompt as each provider received it. */
const systemSent = (p: 'anthropic' | 'openai'): string => {
  const b = upstreamBody(p);
  return p === 'anthropic' ? (b.system as Array<{ text: string }>).map((s) => s.text).join('\n') : b.messages[0].role === 'system' ? b.messages[0].content : '';
};
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'x-goog-api-key': gw.key, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe.each(CASES)('Gemini door → $provider ($model)', ({ provider, model, callId, usage }) => {
  it('generateContent: the answer as Google shapes it, with usage, and a system instruction without a role', async () => {
    const r = await ai.models.generateContent({ model, contents: 'Weather?', config: { systemInstruction: 'Be brief.' } });
    expect(r.text).toBe(FINAL_TEXT);
    expect(r.candidates![0]!.finishReason).toBe('STOP');
    expect(r.candidates![0]!.content!.role).toBe('model');
    expect(r.modelVersion).toBe(model);
    expect(r.responseId).toBeTruthy();
    expect(r.usageMetadata).toEqual(usage);
    expect(systemSent(provider)).toBe('Be brief.');
    const sent = upstream(provider);
    expect(sent.url).toBe(provider === 'anthropic' ? '/v1/messages' : '/v1/chat/completions');
    expect(JSON.stringify(sent.headers) + sent.body.toString()).not.toContain(gw.key);
  });

  it('a system instruction with role "user", as clients send it', async () => {
    const r = await ai.models.generateContent({ model, contents: [{ role: 'user', parts: [{ text: 'Weather?' }] }], config: { systemInstruction: { role: 'user', parts: [{ text: 'Answer in French.' }, { text: 'Be brief.' }] } } });
    expect(r.text).toBe(FINAL_TEXT);
    expect(systemSent(provider)).toMatch(/^Answer in French\.\s+Be brief\.$/);
    const b = upstreamBody(provider);
    const turns = provider === 'anthropic' ? b.messages : b.messages.filter((m: any) => m.role !== 'system');
    expect(turns).toHaveLength(1);
    expect(turns[0].role).toBe('user');
  });

  it('generateContentStream: SSE chunks the SDK reads, the finish and usage on the last', async () => {
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'Weather?' })) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe(FINAL_TEXT);
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe('STOP');
    expect(chunks.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: usage.promptTokenCount, candidatesTokenCount: usage.candidatesTokenCount });
    expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
    expect(upstreamBody(provider).stream).toBe(true);
  });

  it.each([false, true])('a function-call round trip: the call whole with the provider\'s id, its response paired by that id (stream: %s)', async (stream) => {
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const config = { tools: [{ functionDeclarations: [weather] }] };
    let turn: Content;
    if (stream) {
      const parts = [];
      let finish;
      for await (const c of await ai.models.generateContentStream({ model, contents, config })) {
        parts.push(...(c.candidates?.[0]?.content?.parts ?? []));
        finish = c.candidates?.[0]?.finishReason ?? finish;
      }
      expect(finish).toBe('STOP');
      turn = { role: 'model', parts };
    } else {
      const first = await ai.models.generateContent({ model, contents, config });
      expect(first.candidates![0]!.finishReason).toBe('STOP'); // a tool call ends with STOP, as Gemini's do
      turn = first.candidates![0]!.content!;
    }
    const calls = turn.parts!.filter((p) => p.functionCall).map((p) => p.functionCall);
    expect(calls).toEqual([{ id: callId, name: 'get_weather', args: { city: 'Paris' } }]);

    const second = await ai.models.generateContent({
      model, config,
      contents: [...contents, turn, { role: 'user', parts: [{ functionResponse: { id: callId, name: 'get_weather', response: { output: '18°C, sunny' } } }] }],
    });
    expect(second.text).toBe(FINAL_TEXT);
    const b = upstreamBody(provider);
    if (provider === 'anthropic') {
      expect(b.messages[1].content.find((c: any) => c.type === 'tool_use')).toMatchObject({ id: callId, name: 'get_weather', input: { city: 'Paris' } });
      expect(b.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: callId });
      expect(JSON.stringify(b.messages[2].content[0].content)).toContain('18°C, sunny');
    } else {
      expect(b.messages[1].tool_calls[0]).toMatchObject({ id: callId, function: { name: 'get_weather' } });
      expect(b.messages[2]).toMatchObject({ role: 'tool', tool_call_id: callId });
      expect(b.messages[2].content).toContain('18°C, sunny');
    }
  });

  it('countTokens: the documented estimate, marked as one, and nothing sent upstream', async () => {
    const before = gw.mocks[provider].requests.length;
    const text = 'How many tokens is this sentence, roughly?';
    const r = await ai.models.countTokens({ model, contents: text });
    expect(r.totalTokens).toBe(Math.ceil(text.length / 4));
    expect(r.sdkHttpResponse?.headers?.['x-gateway-token-count']).toBe('estimate');
    expect(gw.mocks[provider].requests.length).toBe(before);
    // The generateContentRequest form counts the system instruction and tools too.
    const raw = await post(`/v1beta/models/${model}:countTokens`, { generateContentRequest: { model: `models/${model}`, contents: [{ role: 'user', parts: [{ text }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] } } });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toEqual({ totalTokens: Math.ceil((text.length + 'Be brief.'.length) / 4) });
  });

  it('JSON mode reaches the provider as structured output', async () => {
    const schema = { type: 'object', properties: { model_choice: { type: 'string', enum: ['flash', 'pro'] } }, required: ['model_choice'] };
    await ai.models.generateContent({ model, contents: 'Route this.', config: { responseMimeType: 'application/json', responseJsonSchema: schema } });
    const b = upstreamBody(provider);
    if (provider === 'anthropic') expect(b.output_config).toEqual({ format: { type: 'json_schema', schema: { ...schema, additionalProperties: false } } });
    else expect(b.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema } });
  });

  it('without alt=sse the stream is one JSON array, written as it grows', async () => {
    const r = await post(`/v1beta/models/${model}:streamGenerateContent`, { contents: [{ parts: [{ text: 'Weather?' }] }] });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await r.text();
    expect(text.startsWith('[{')).toBe(true);
    expect(text.endsWith(']')).toBe(true);
    const chunks = JSON.parse(text) as any[];
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.candidates[0].content.parts.map((p: any) => p.text ?? '').join('')).join('')).toBe(FINAL_TEXT);
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
  });

  it('with alt=sse: data frames separated by CRLF CRLF, no [DONE]', async () => {
    const r = await post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ parts: [{ text: 'Weather?' }] }] });
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await r.text();
    const frames = text.split('\r\n\r\n');
    expect(frames.at(-1)).toBe('');
    expect(frames.slice(0, -1).every((f) => f.startsWith('data: {'))).toBe(true);
    expect(text).not.toContain('[DONE]');
  });
});

describe('Gemini door: how clients name a model', () => {
  it('a slash in the id works raw (what @google/genai sends) and URL-encoded', async () => {
    const seen: string[] = [];
    const off = gw.daemon.ctx.bus.subscribe((e) => { if (e.type === 'started') seen.push(e.path); });
    await ai.models.generateContent({ model: 'anthropic/claude-sonnet-4-5', contents: 'Hi' });
    off();
    expect(seen).toEqual(['/v1/models/anthropic/claude-sonnet-4-5:generateContent']);

    for (const path of ['/v1beta/models/anthropic/claude-sonnet-4-5:generateContent', '/v1beta/models/anthropic%2Fclaude-sonnet-4-5:generateContent', '/v1/models/anthropic%2fclaude-sonnet-4-5:generateContent']) {
      const r = await post(path, { contents: [{ parts: [{ text: 'Hi' }] }] });
      expect(r.status, path).toBe(200);
      expect(((await r.json()) as any).modelVersion).toBe('anthropic/claude-sonnet-4-5');
      expect(upstreamBody('anthropic').model).toBe('claude-sonnet-4-5');
    }
  });

  it('bare names and aliases route as everywhere else; requests show in the monitor as the gemini door', async () => {
    await ai.models.generateContent({ model: 'gpt-5.4', contents: 'Hi' });
    expect(upstreamBody('openai').model).toBe('gpt-5.4');
    await ai.models.generateContent({ model: 'house', contents: 'Hi' });
    expect(upstreamBody('anthropic').model).toBe('claude-sonnet-4-5');
    const started = events.filter((e): e is Extract<GatewayEvent, { type: 'started' }> => e.type === 'started');
    expect(started.at(-1)).toMatchObject({ mode: 'gemini', provider: 'anthropic', model: 'claude-sonnet-4-5', path: '/v1/models/house:generateContent' });
  });
});
