// Providers the user added (config.json descriptors), reached through a door of another protocol:
// an OpenAI-compatible and an Anthropic-compatible one through the Gemini door (@google/genai),
// the Anthropic-compatible one through the Responses door (openai SDK) and the OpenAI-compatible
// one through the Messages door (@anthropic-ai/sdk), each streamed and not. Asserted on both ends:
// what the SDK hands its caller, and what each mock (behind a base URL with a path) received —
// its own protocol, the model id after the provider's name, its own key, never the proxy key.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredProviders } from '../../src/providers/configured.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MOCK_TEXT, startMockProvider, type MockProvider, type Recorded } from '../helpers/mock-provider.js';

let gw: TestGateway;
let box: MockProvider; // OpenAI Chat, base URL …/v1 (vLLM-, LiteLLM-like)
let anth: MockProvider; // Anthropic Messages, base URL …/anthropic (DeepSeek-, Z.ai-like)
let ai: GoogleGenAI;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  [box, anth] = await Promise.all([
    startMockProvider('openai', { key: 'sk-box-key-0123456789' }),
    startMockProvider('anthropic', { mount: '/anthropic', key: 'sk-anth-like-key-0123456789' }),
  ]);
  const { providers, problems } = configuredProviders({
    box: { protocol: 'openai-chat', baseUrl: `${box.origin}/v1` },
    'claude-like': { protocol: 'anthropic', baseUrl: `${anth.origin}/anthropic` },
  });
  expect(problems).toEqual([]);
  gw = await startTestGateway({ secrets: staticSecrets({ box: box.key, 'claude-like': anth.key }), settings: { providers } });
  ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([box?.close(), anth?.close()]);
});

const last = (m: MockProvider): Recorded => m.requests.at(-1)!;
const bodyOf = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;

/** What an added provider of each protocol must have received for one request. */
const UPSTREAMS = {
  box: {
    mock: () => box, url: '/v1/chat/completions',
    keyed: (r: Recorded) => r.headers.authorization === `Bearer ${box.key}` && r.headers['x-api-key'] === undefined,
    system: (b: Record<string, any>) => (b.messages[0].role === 'system' ? b.messages[0].content : undefined),
    userText: (b: Record<string, any>) => b.messages.filter((m: any) => m.role === 'user').map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text).join(''))).join(' '),
  },
  'claude-like': {
    mock: () => anth, url: '/anthropic/v1/messages',
    keyed: (r: Recorded) => r.headers['x-api-key'] === anth.key && r.headers.authorization === undefined,
    system: (b: Record<string, any>) => (typeof b.system === 'string' ? b.system : (b.system ?? []).map((s: any) => s.text).join('\n')),
    userText: (b: Record<string, any>) => b.messages.filter((m: any) => m.role === 'user').map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text).join(''))).join(' '),
  },
} as const;

/** The last request the added provider got: its own protocol and path, its own key, the model after its name. */
function expectUpstream(name: keyof typeof UPSTREAMS, model: string, stream: boolean): Record<string, any> {
  const u = UPSTREAMS[name];
  const r = last(u.mock());
  expect(r.method).toBe('POST');
  expect(r.url).toBe(u.url);
  expect(u.keyed(r), JSON.stringify(r.headers)).toBe(true);
  expect(JSON.stringify(r.headers) + r.url + r.body.toString('utf8')).not.toContain(gw.key);
  const b = bodyOf(r);
  expect(b.model).toBe(model);
  expect(b.stream === true).toBe(stream);
  return b;
}

describe.each([
  { name: 'box', model: 'box/qwen3:8b', id: 'qwen3:8b' },
  { name: 'claude-like', model: 'claude-like/glm-4.6', id: 'glm-4.6' },
] as const)('the Gemini door (@google/genai) → added $name', ({ name, model, id }) => {
  it('generateContent: Google\'s answer shape, the system instruction and text sent in the provider\'s protocol', async () => {
    const r = await ai.models.generateContent({ model, contents: 'Say hello.', config: { systemInstruction: 'Be brief.', maxOutputTokens: 200 } });
    expect(r.text).toBe(MOCK_TEXT);
    expect(r.candidates![0]!.finishReason).toBe('STOP');
    expect(r.candidates![0]!.content!.role).toBe('model');
    expect(r.modelVersion).toBe(model);
    expect(r.usageMetadata).toMatchObject({ promptTokenCount: 12 });
    const b = expectUpstream(name, id, false);
    expect(UPSTREAMS[name].system(b)).toBe('Be brief.');
    expect(UPSTREAMS[name].userText(b)).toBe('Say hello.');
    expect(b.max_tokens ?? b.max_completion_tokens).toBe(200);
  });

  it('streamGenerateContent?alt=sse: chunks the SDK reads, the finish on the last', async () => {
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'Say hello.' })) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe(MOCK_TEXT);
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe('STOP');
    expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
    const b = expectUpstream(name, id, true);
    expect(UPSTREAMS[name].userText(b)).toBe('Say hello.');
  });

  it('the SSE is Google\'s on the wire: data lines, no [DONE], for the URL @google/genai builds', async () => {
    const res = await fetch(`${gw.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
      method: 'POST', headers: { 'x-goog-api-key': gw.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const events = text.split(/\r?\n\r?\n/).filter(Boolean);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(text).not.toContain('[DONE]');
    const parts = events.map((e) => JSON.parse(e.slice('data: '.length)) as { candidates: Array<{ content: { parts: Array<{ text?: string }> } }> });
    expect(parts.map((p) => p.candidates[0]!.content.parts.map((x) => x.text ?? '').join('')).join('')).toBe(MOCK_TEXT);
    expectUpstream(name, id, true);
  });
});

describe('the Responses door (openai SDK) → added Anthropic-compatible provider', () => {
  it('not streamed: a Responses answer, instructions and max_output_tokens sent as Anthropic takes them', async () => {
    const r = await openai.responses.create({ model: 'claude-like/glm-4.6', input: 'Say hello.', instructions: 'Be brief.', max_output_tokens: 300 });
    expect(r.object).toBe('response');
    expect(r.id).toMatch(/^resp_/);
    expect(r.status).toBe('completed');
    expect(r.model).toBe('claude-like/glm-4.6');
    expect(r.output_text).toBe(MOCK_TEXT);
    expect(r.usage).toMatchObject({ input_tokens: 12, output_tokens: MOCK_TEXT.split(' ').length });
    const b = expectUpstream('claude-like', 'glm-4.6', false);
    expect(UPSTREAMS['claude-like'].system(b)).toBe('Be brief.');
    expect(b.max_tokens).toBe(300);
    expect(UPSTREAMS['claude-like'].userText(b)).toBe('Say hello.');
  });

  it('streamed: typed events in order, assembled by the SDK into the answer', async () => {
    const stream = openai.responses.stream({ model: 'claude-like/glm-4.6', input: [{ role: 'user', content: 'Say hello.' }] });
    const types: string[] = [];
    const deltas: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') deltas.push(ev.delta);
    }
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(MOCK_TEXT);
    expect(final.status).toBe('completed');
    expect(deltas.join('')).toBe(MOCK_TEXT);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const b = expectUpstream('claude-like', 'glm-4.6', true);
    // Anthropic requires max_tokens: the door supplies one when the client gave none.
    expect(b.max_tokens).toBeGreaterThan(0);
  });

  it('a chained turn: previous_response_id sends the earlier exchange to the provider', async () => {
    const first = await openai.responses.create({ model: 'claude-like/glm-4.6', input: 'My name is Ada.' });
    await openai.responses.create({ model: 'claude-like/glm-4.6', input: 'What is my name?', previous_response_id: first.id });
    const b = expectUpstream('claude-like', 'glm-4.6', false);
    expect(b.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(b.messages[1])).toContain(MOCK_TEXT);
    expect(UPSTREAMS['claude-like'].userText(b)).toBe('My name is Ada. What is my name?');
  });
});

describe('the Messages door (@anthropic-ai/sdk) → added OpenAI-compatible provider', () => {
  it('not streamed: an Anthropic message, system and max_tokens sent as Chat Completions takes them', async () => {
    const msg = await anthropic.messages.create({ model: 'box/qwen3:8b', max_tokens: 300, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello.' }] });
    expect(msg.type).toBe('message');
    expect(msg.role).toBe('assistant');
    expect(msg.model).toBe('box/qwen3:8b');
    expect(msg.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage).toMatchObject({ input_tokens: 12, output_tokens: MOCK_TEXT.split(' ').length });
    const b = expectUpstream('box', 'qwen3:8b', false);
    expect(UPSTREAMS.box.system(b)).toBe('Be brief.');
    expect(b.max_tokens ?? b.max_completion_tokens).toBe(300);
    expect(UPSTREAMS.box.userText(b)).toBe('Say hello.');
  });

  it('streamed: Anthropic\'s events, assembled by the SDK, with the usage the provider reported', async () => {
    const stream = anthropic.messages.stream({ model: 'box/qwen3:8b', max_tokens: 300, messages: [{ role: 'user', content: 'Say hello.' }] });
    const texts: string[] = [];
    const types: string[] = [];
    stream.on('text', (t) => texts.push(t));
    stream.on('streamEvent', (e) => types.push(e.type));
    const msg = await stream.finalMessage();
    expect(texts.join('')).toBe(MOCK_TEXT);
    expect(texts.length).toBeGreaterThan(1);
    expect(msg.model).toBe('box/qwen3:8b');
    expect(msg.stop_reason).toBe('end_turn');
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    const b = expectUpstream('box', 'qwen3:8b', true);
    // Usage is asked for, so the Anthropic stream can carry it.
    expect(b.stream_options).toMatchObject({ include_usage: true });
    expect(msg.usage.output_tokens).toBe(MOCK_TEXT.split(' ').length);
  });
});
