// Cached prompt tokens counted once, in each door's own convention, whatever provider answered:
// every door (the official SDK of its protocol as the client) × every provider protocol (mock
// providers reporting cache reads, and Anthropic cache writes by TTL, as each provider writes
// them) × streamed and not. Asserted on both ends: what the SDK hands its caller (Chat and
// Responses: cache reads inside the input count; Messages: reads and writes beside input_tokens;
// Gemini: cachedContentTokenCount inside promptTokenCount), and what the gateway records.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent, TokenUsage } from '../../src/daemon/observe/events.js';
import { configuredProviders } from '../../src/providers/configured.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, startMockProvider, type MockProvider, type MockProviderId, type MockTokens } from '../helpers/mock-provider.js';
import { NO_RETRIES } from '../helpers/routing.js';

/**
 * One prompt of 1,540 tokens, 1,200 of them read from the cache; Anthropic also wrote 300 (100 for
 * 5 minutes, 200 for an hour), which OpenAI and Gemini do not report (their prompt counts them).
 * 30 tokens out, 10 of them reasoning.
 */
const ANTHROPIC_TOKENS: MockTokens = { input: 40, cacheRead: 1200, cacheWrite5m: 100, cacheWrite1h: 200, output: 30, reasoning: 10 };
const OTHER_TOKENS: MockTokens = { input: 340, cacheRead: 1200, output: 30, reasoning: 10 };

type Upstream = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';
/** A model behind each provider protocol: an OpenAI-compatible server that speaks only Chat, and OpenAI's Responses-only models. */
const MODEL: Record<Upstream, string> = {
  anthropic: 'anthropic/claude-opus-4-6',
  'openai-chat': 'box/qwen3-coder',
  'openai-responses': 'openai/gpt-5.4-codex',
  gemini: 'gemini/gemini-3.5-flash',
};
const writes = (u: Upstream): boolean => u === 'anthropic';

let gw: TestGateway;
let box: MockProvider;
const ends: Array<Extract<GatewayEvent, { type: 'finished' | 'failed' }>> = [];
let ended: (() => void) | undefined;
let chat: OpenAI;
let anthropic: Anthropic;
let ai: GoogleGenAI;

beforeAll(async () => {
  box = await startMockProvider('openai', { key: 'sk-box-key-0123456789' });
  const { providers, problems } = configuredProviders({ box: { protocol: 'openai-chat', baseUrl: `${box.origin}/v1` } });
  expect(problems).toEqual([]);
  gw = await startTestGateway({
    secrets: staticSecrets({ box: box.key, anthropic: 'real-anthropic-key-0123456789', openai: 'real-openai-key-0123456789', gemini: 'real-gemini-key-0123456789' }),
    settings: { providers, routing: NO_RETRIES },
  });
  const reports = (p: MockProviderId) => (r: Parameters<typeof defaultReply>[1]) => defaultReply(p, r, p === 'anthropic' ? ANTHROPIC_TOKENS : OTHER_TOKENS);
  for (const [name, mock] of Object.entries(gw.mocks)) mock.setHandler(reports(name as MockProviderId));
  box.setHandler(reports('openai'));
  gw.daemon.ctx.bus.subscribe((e) => { if (e.type === 'finished' || e.type === 'failed') { ends.push(e); ended?.(); } });
  chat = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
  ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
});
afterAll(async () => { await gw?.close(); await box?.close(); });

/** The usage the gateway records for the request that ends next (its end can follow the client's last byte). */
async function recorded(before: number): Promise<TokenUsage> {
  if (ends.length <= before) {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('the request was never recorded')), 5_000);
      ended = () => { clearTimeout(t); ended = undefined; resolve(); };
    });
  }
  expect(ends.length).toBe(before + 1);
  const end = ends[before]!;
  expect(end.type, JSON.stringify(end)).toBe('finished');
  return end.usage;
}

const UPSTREAMS: Upstream[] = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];
const CASES = UPSTREAMS.flatMap((upstream) => [false, true].map((stream) => ({ upstream, stream })));

/** What every door's record says: the whole prompt as input, the cache reads (and Anthropic's writes by TTL) inside it. */
function expectRecorded(u: TokenUsage, upstream: Upstream): void {
  expect(u).toMatchObject({ inputTokens: 1540, cachedTokens: 1200, outputTokens: 30, reasoningTokens: 10 });
  if (writes(upstream)) expect(u).toMatchObject({ cacheWriteTokens: 300, cacheWrite1hTokens: 200 });
  else expect(u.cacheWriteTokens ?? 0).toBe(0);
}

describe.each(CASES)('provider protocol $upstream, stream: $stream', ({ upstream, stream }) => {
  const model = MODEL[upstream];

  it('Chat door: cache reads inside prompt_tokens, in prompt_tokens_details.cached_tokens', async () => {
    const before = ends.length;
    const messages = [{ role: 'user' as const, content: 'hi' }];
    let usage: OpenAI.CompletionUsage | null | undefined;
    if (stream) {
      for await (const c of await chat.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } })) usage = c.usage ?? usage;
    } else {
      usage = (await chat.chat.completions.create({ model, messages })).usage;
    }
    expect(usage).toMatchObject({ prompt_tokens: 1540, completion_tokens: 30, total_tokens: 1570, prompt_tokens_details: { cached_tokens: 1200 }, completion_tokens_details: { reasoning_tokens: 10 } });
    const details = usage!.prompt_tokens_details as { cache_write_tokens?: number };
    expect(details.cache_write_tokens ?? 0).toBe(writes(upstream) ? 300 : 0);
    expectRecorded(await recorded(before), upstream);
  });

  it('Responses door: cache reads inside input_tokens, in input_tokens_details.cached_tokens', async () => {
    const before = ends.length;
    let usage: OpenAI.Responses.ResponseUsage | undefined;
    if (stream) {
      for await (const e of await chat.responses.create({ model, input: 'hi', stream: true })) if (e.type === 'response.completed') usage = e.response.usage;
    } else {
      usage = (await chat.responses.create({ model, input: 'hi' })).usage;
    }
    expect(usage).toMatchObject({ input_tokens: 1540, input_tokens_details: { cached_tokens: 1200 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 1570 });
    const details = usage!.input_tokens_details as { cache_write_tokens?: number };
    expect(details.cache_write_tokens ?? 0).toBe(writes(upstream) ? 300 : 0);
    expectRecorded(await recorded(before), upstream);
  });

  it('Messages door: cache reads and writes beside input_tokens, the writes by TTL', async () => {
    const before = ends.length;
    const params = { model, max_tokens: 256, messages: [{ role: 'user' as const, content: 'hi' }] };
    const msg = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
    expect(msg.usage).toMatchObject({
      input_tokens: writes(upstream) ? 40 : 340, cache_read_input_tokens: 1200,
      cache_creation_input_tokens: writes(upstream) ? 300 : 0, output_tokens: 30,
    });
    // A translated stream knows its counts only at its end (message_delta), which carries no TTL split.
    if (!stream || upstream === 'anthropic') {
      expect(msg.usage.cache_creation).toEqual(writes(upstream) ? { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 } : { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    }
    expectRecorded(await recorded(before), upstream);
  });

  it('Gemini door: cachedContentTokenCount inside promptTokenCount, thoughts apart from candidates', async () => {
    const before = ends.length;
    let usage: unknown;
    if (stream) {
      for await (const c of await ai.models.generateContentStream({ model, contents: 'hi' })) usage = c.usageMetadata ?? usage;
    } else {
      usage = (await ai.models.generateContent({ model, contents: 'hi' })).usageMetadata;
    }
    expect(usage).toEqual({ promptTokenCount: 1540, cachedContentTokenCount: 1200, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 1570 });
    expectRecorded(await recorded(before), upstream);
  });
});

describe.each(UPSTREAMS)('provider protocol %s, a Chat stream that did not ask for usage', (upstream) => {
  it('no usage reaches the client; the record still counts it', async () => {
    const before = ends.length;
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of await chat.chat.completions.create({ model: MODEL[upstream], messages: [{ role: 'user', content: 'hi' }], stream: true })) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expectRecorded(await recorded(before), upstream);
  });
});

/** The native prefixes relay the provider's own bytes; their record reads the same counts out of them. */
describe.each([false, true])('native prefixes, stream: %s', (stream) => {
  const post = async (path: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<TokenUsage> => {
    const before = ends.length;
    const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    await res.text();
    return recorded(before);
  };
  const bearer = () => ({ authorization: `Bearer ${gw.key}` });

  it('/anthropic/v1/messages', async () => {
    const u = await post('/anthropic/v1/messages', { model: 'claude-opus-4-6', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream }, { 'x-api-key': gw.key });
    expectRecorded(u, 'anthropic');
  });

  it('/openai/v1/chat/completions', async () => {
    const u = await post('/openai/v1/chat/completions', { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }, bearer());
    expectRecorded(u, 'openai-chat');
  });

  it('/openai/v1/responses', async () => {
    const u = await post('/openai/v1/responses', { model: 'gpt-5.4', input: 'hi', stream }, bearer());
    expectRecorded(u, 'openai-responses');
  });

  it('/gemini/v1beta/models/…', async () => {
    const u = await post(`/gemini/v1beta/models/gemini-3.5-flash:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`, { contents: [{ parts: [{ text: 'hi' }] }] }, { 'x-goog-api-key': gw.key });
    expectRecorded(u, 'gemini');
  });
});
