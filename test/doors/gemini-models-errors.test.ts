// The Gemini door's model list and its failures, as Google's clients read them: models.list and
// models.get in Google's shape (every routed model of every provider with a key, in pages), and
// errors in Google's error JSON: a wrong or missing proxy key (401 UNAUTHENTICATED, nothing sent
// upstream), an unknown model (404 NOT_FOUND), a refused field, a provider's 429 (retry-after kept,
// a RetryInfo with the same delay), a provider stream that breaks off (an error, never a clean end).
import { ApiError, GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// These tests are about how one provider answer reaches the client: no retries (test/routing has those).
import { NO_RETRIES } from '../helpers/routing.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, openaiScript } from '../helpers/scripted-providers.js';
import type { MockHandler } from '../helpers/mock-provider.js';

let gw: TestGateway;
let ai: GoogleGenAI;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { aliases: { house: 'anthropic/claude-sonnet-4-5' }, routing: NO_RETRIES } });
  gw.mocks.anthropic.setHandler(anthropicScript);
  gw.mocks.openai.setHandler(openaiScript);
  ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
});
afterAll(async () => { await gw?.close(); });

const upstreamCount = () => gw.mocks.anthropic.requests.length + gw.mocks.openai.requests.length + gw.mocks.gemini.requests.length;
const post = (path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': gw.key }) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const hi = { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] };

/** Runs `fn` with the provider's mock answering `handler`, then restores its script. */
async function withHandler(p: 'anthropic' | 'openai', handler: MockHandler, fn: () => Promise<void>): Promise<void> {
  gw.mocks[p].setHandler(handler);
  try { await fn(); } finally { gw.mocks[p].setHandler(p === 'anthropic' ? anthropicScript : openaiScript); }
}

describe('Gemini door: models', () => {
  it('models.list: every routed model in Google\'s shape, Gemini\'s under their own ids, aliases too', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list()) {
      names.push(m.name!);
      expect(m.supportedActions).toEqual(['generateContent', 'countTokens']);
    }
    expect(names.sort()).toEqual(['models/anthropic/claude-opus-5', 'models/gemini-3.5-flash', 'models/house', 'models/openai/gpt-5.4']);
  });

  it('pages as Google does: pageSize, then nextPageToken until the end', async () => {
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 10; page++) {
      const r = await fetch(`${gw.url}/v1beta/models?pageSize=3${token ? `&pageToken=${token}` : ''}&key=${gw.key}`);
      expect(r.status).toBe(200);
      const body = (await r.json()) as { models: Array<{ name: string }>; nextPageToken?: string };
      expect(body.models.length).toBeLessThanOrEqual(3);
      seen.push(...body.models.map((m) => m.name));
      if (!body.nextPageToken) break;
      token = body.nextPageToken;
    }
    expect(seen).toHaveLength(4);
    expect(new Set(seen).size).toBe(4);
  });

  it('models.get by any name a request takes; an unknown one is Google\'s 404', async () => {
    expect(await ai.models.get({ model: 'anthropic/claude-opus-5' })).toMatchObject({ name: 'models/anthropic/claude-opus-5', displayName: 'anthropic/claude-opus-5' });
    expect(await ai.models.get({ model: 'gemini-3.5-flash' })).toMatchObject({ name: 'models/gemini-3.5-flash', outputTokenLimit: 65_536 });
    const r = await fetch(`${gw.url}/v1beta/models/openai%2Fgpt-5.4`, { headers: { 'x-goog-api-key': gw.key } });
    expect(await r.json()).toMatchObject({ name: 'models/openai/gpt-5.4', outputTokenLimit: 128_000 });
    const err = await ai.models.get({ model: 'nosuch-model' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(404);
    expect(JSON.parse((err as ApiError).message)).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });

  it('/v1/models keeps OpenAI\'s shape for OpenAI clients and gives Google\'s to Google\'s', async () => {
    const openai = await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } })).json() as { object: string };
    expect(openai.object).toBe('list');
    const google = await (await fetch(`${gw.url}/v1/models`, { headers: { 'x-goog-api-key': gw.key } })).json() as { models: unknown[] };
    expect(google.models).toHaveLength(4);
  });
});

describe('Gemini door: errors in Google\'s shape', () => {
  it('a wrong or missing proxy key: 401 UNAUTHENTICATED, and nothing goes upstream', async () => {
    const before = upstreamCount();
    const bad = new GoogleGenAI({ apiKey: 'sk-proxy-wrong-key-0123456789abcdef', httpOptions: { baseUrl: gw.url } });
    for (const model of ['anthropic/claude-sonnet-4-5', 'openai/gpt-5.4', 'gemini-3.5-flash']) {
      const err = await bad.models.generateContent({ model, contents: 'Hi' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(401);
      expect(JSON.parse((err as ApiError).message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    }
    const refused: Array<Record<string, string>> = [{}, { authorization: 'Bearer sk-proxy-nope' }];
    for (const headers of refused) {
      const r = await post('/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse', hi, headers);
      expect(r.status).toBe(401);
      const body = (await r.json()) as { error: { code: number; status: string; message: string } };
      expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      expect(body.error.message).toMatch(/proxy key/);
    }
    const r = await post(`/v1beta/models/gemini-3.5-flash:countTokens?key=sk-proxy-nope`, hi, {});
    expect(r.status).toBe(401);
    expect(upstreamCount()).toBe(before);
  });

  it('a key passed as ?key= or Bearer is taken, as x-goog-api-key is', async () => {
    expect((await post(`/v1beta/models/openai/gpt-5.4:generateContent?key=${gw.key}`, hi, {})).status).toBe(200);
    expect((await post('/v1beta/models/openai/gpt-5.4:generateContent', hi, { authorization: `Bearer ${gw.key}` })).status).toBe(200);
    expect(gw.mocks.openai.requests.at(-1)!.url).toBe('/v1/chat/completions');
  });

  it('an unknown model is Google\'s 404 NOT_FOUND', async () => {
    for (const model of ['nosuch/model', 'mystery-model']) {
      const err = await ai.models.generateContent({ model, contents: 'Hi' }).catch((e: unknown) => e);
      expect((err as ApiError).status).toBe(404);
      const body = JSON.parse((err as ApiError).message) as { error: { status: string; message: string } };
      expect(body.error.status).toBe('NOT_FOUND');
      expect(body.error.message).toContain(`models/${model}`);
    }
  });

  it('a field the target cannot honour is a 400 naming it, and nothing goes upstream', async () => {
    const before = upstreamCount();
    const err = await ai.models.generateContent({ model: 'anthropic/claude-sonnet-4-5', contents: 'Hi', config: { tools: [{ googleSearch: {} }] } }).catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(400);
    expect(JSON.parse((err as ApiError).message)).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('tools[0].googleSearch') } });
    expect(upstreamCount()).toBe(before);
    const get = await fetch(`${gw.url}/v1beta/models/anthropic/claude-sonnet-4-5:generateContent`, { headers: { 'x-goog-api-key': gw.key } });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: { code: 405 } });
  });

  it.each(['anthropic', 'openai'] as const)('a %s 429: RESOURCE_EXHAUSTED, retry-after kept, RetryInfo with the same delay', async (p) => {
    const body = p === 'anthropic'
      ? { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } }
      : { error: { message: 'Rate limit reached for gpt-5.4', type: 'requests', param: null, code: 'rate_limit_exceeded' } };
    await withHandler(p, () => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' }, body: JSON.stringify(body) }), async () => {
      const model = p === 'anthropic' ? 'anthropic/claude-sonnet-4-5' : 'openai/gpt-5.4';
      const r = await post(`/v1beta/models/${model}:generateContent`, hi);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('7');
      expect(await r.json()).toEqual({ error: { code: 429, message: expect.stringMatching(/rate limit/i), status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] } });
      const err = await ai.models.generateContentStream({ model, contents: 'Hi' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(429);
    });
  });

  it('a provider stream that breaks off ends in an error: the SDK throws, the SSE ends with an error frame, the array with an error element', async () => {
    const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    const cut: MockHandler = () => ({ headers: { 'content-type': 'text/event-stream' }, chunks: [
      ev('message_start', { message: { id: 'msg_c', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Par' } }),
    ] });
    await withHandler('anthropic', cut, async () => {
      const model = 'anthropic/claude-sonnet-4-5';
      const read = async () => { const texts = []; for await (const c of await ai.models.generateContentStream({ model, contents: 'Hi' })) texts.push(c.text); return texts; };
      const err = await read().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBeGreaterThanOrEqual(500);

      const sse = await (await post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, hi)).text();
      const frames = sse.split('\r\n\r\n').filter(Boolean).map((f) => JSON.parse(f.slice('data: '.length)) as Record<string, any>);
      expect(frames[0]!.candidates[0].content.parts[0].text).toBe('Par');
      expect(frames.at(-1)!.error).toMatchObject({ status: expect.any(String) });
      expect(frames.some((f) => f.candidates?.[0]?.finishReason)).toBe(false);

      const array = JSON.parse(await (await post(`/v1beta/models/${model}:streamGenerateContent`, hi)).text()) as Array<Record<string, any>>;
      expect(array.at(-1)!.error).toBeDefined();
      expect(array.some((f) => f.candidates?.[0]?.finishReason)).toBe(false);
    });
  });
});
