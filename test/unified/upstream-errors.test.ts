// Provider errors on the unified endpoint: status kept, body re-expressed as an OpenAI error that
// keeps the provider's message; mid-stream errors become one error event, then the stream ends.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// These tests are about how one provider answer reaches the client: no retries (test/routing has those).
import { NO_RETRIES } from '../helpers/routing.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { MockReply } from '../helpers/mock-provider.js';

let gw: TestGateway;
let client: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { routing: NO_RETRIES } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const json = (status: number, body: unknown, headers: Record<string, string> = {}): MockReply => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const ant = (status: number, type: string, message: string) => json(status, { type: 'error', error: { type, message }, request_id: 'req_1' });
const goo = (status: number, s: string, message: string, reason?: string) => json(status, { error: { code: status, message, status: s, ...(reason ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }] } : {}) } });

const CASES: Array<{ name: string; provider: 'anthropic' | 'gemini' | 'openai'; model: string; reply: MockReply; status: number; message: RegExp; retryAfter?: string }> = [
  { name: 'Anthropic 400', provider: 'anthropic', model: 'claude-opus-5', reply: ant(400, 'invalid_request_error', 'messages: roles must alternate'), status: 400, message: /roles must alternate/ },
  { name: 'Anthropic 401 (stored key rejected)', provider: 'anthropic', model: 'claude-opus-5', reply: ant(401, 'authentication_error', 'invalid x-api-key'), status: 401, message: /gateway providers set anthropic/ },
  { name: 'Anthropic 429 with retry-after', provider: 'anthropic', model: 'claude-opus-5', reply: { ...ant(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit'), headers: { 'content-type': 'application/json', 'retry-after': '12' } }, status: 429, message: /exceeded your rate limit/, retryAfter: '12' },
  { name: 'Anthropic 529 → 503', provider: 'anthropic', model: 'claude-opus-5', reply: ant(529, 'overloaded_error', 'Overloaded'), status: 503, message: /Overloaded/ },
  { name: 'Gemini 400 API_KEY_INVALID → 401', provider: 'gemini', model: 'gemini-3.5-flash', reply: goo(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'), status: 401, message: /gateway providers set gemini/ },
  { name: 'Gemini 429', provider: 'gemini', model: 'gemini-3.5-flash', reply: goo(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for metric'), status: 429, message: /Quota exceeded/ },
  { name: 'Gemini 503', provider: 'gemini', model: 'gemini-3.5-flash', reply: goo(503, 'UNAVAILABLE', 'The model is overloaded.'), status: 503, message: /overloaded/ },
  { name: 'OpenAI 401 (stored key rejected)', provider: 'openai', model: 'gpt-5.4', reply: json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }), status: 401, message: /gateway providers set openai/ },
  { name: 'OpenAI 404 model', provider: 'openai', model: 'gpt-5.4', reply: json(404, { error: { message: 'The model `gpt-9` does not exist', type: 'invalid_request_error', param: null, code: 'model_not_found' } }), status: 404, message: /does not exist/ },
];

describe('upstream error statuses', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      gw.mocks[c.provider].setHandler(() => c.reply);
      try {
        const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify({ model: c.model, messages: [{ role: 'user', content: 'x' }] }) });
        expect(r.status).toBe(c.status);
        if (c.retryAfter) expect(r.headers.get('retry-after')).toBe(c.retryAfter);
        const body = (await r.json()) as { error: Record<string, unknown> };
        expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
        expect(body.error.message).toMatch(c.message);
      } finally { gw.mocks[c.provider].setHandler(undefined); }
    });
  }
});

describe('mid-stream errors', () => {
  it('an Anthropic error event becomes one OpenAI error event and the SDK raises it', async () => {
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...(data as object) })}\n\n`;
    gw.mocks.anthropic.setHandler(() => ({ headers: { 'content-type': 'text/event-stream' }, chunks: [
      ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-opus-5', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Par' } }),
      ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ] }));
    try {
      const raw = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify({ model: 'claude-opus-5', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
      const text = await raw.text();
      const events = text.split('\n\n').filter(Boolean);
      expect(events.at(-1)).toMatch(/^data: \{"error":\{.*Overloaded/);
      expect(text).not.toContain('[DONE]');
      const stream = await client.chat.completions.create({ model: 'claude-opus-5', stream: true, messages: [{ role: 'user', content: 'x' }] });
      let got = '';
      await expect((async () => { for await (const c of stream) got += c.choices[0]?.delta.content ?? ''; })()).rejects.toThrow(/Overloaded/);
      expect(got).toBe('Par');
    } finally { gw.mocks.anthropic.setHandler(undefined); }
  });

  it('a Gemini error chunk mid-stream ends the stream with one error event', async () => {
    gw.mocks.gemini.setHandler(() => ({ headers: { 'content-type': 'text/event-stream' }, chunks: [
      `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 }], modelVersion: 'gemini-3.5-flash', responseId: 'r1' })}\r\n\r\n`,
      `data: ${JSON.stringify({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } })}\r\n\r\n`,
    ] }));
    try {
      const raw = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify({ model: 'gemini-3.5-flash', stream: true, messages: [{ role: 'user', content: 'x' }] }) });
      const events = (await raw.text()).split('\n\n').filter(Boolean);
      expect(events.at(-1)).toMatch(/^data: \{"error":\{.*Internal error encountered/);
      expect(events.filter((e) => e.includes('"error"'))).toHaveLength(1);
    } finally { gw.mocks.gemini.setHandler(undefined); }
  });

  it('a client that disconnects mid-stream aborts the upstream request (unified)', async () => {
    const chunks = Array.from({ length: 60 }, (_, i) => `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: `w${i} ` }] }, index: 0 }], responseId: 'r1' })}\r\n\r\n`);
    gw.mocks.gemini.setHandler(() => ({ headers: { 'content-type': 'text/event-stream' }, chunks, delayMs: 50 }));
    try {
      const before = gw.mocks.gemini.requests.length;
      const ac = new AbortController();
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify({ model: 'gemini-3.5-flash', stream: true, messages: [{ role: 'user', content: 'x' }] }), signal: ac.signal });
      await r.body!.getReader().read();
      ac.abort();
      const rec = gw.mocks.gemini.requests[before]!;
      const deadline = Date.now() + 2000;
      while (!rec.aborted && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
      expect(rec.aborted).toBe(true);
    } finally { gw.mocks.gemini.setHandler(undefined); }
  });
});

describe('client disconnect on a whole answer', () => {
  // Each reply calls `reached` once the gateway is in the state the case names; the client
  // disconnects then. `release` lets a held-back body finish (after the test).
  const cases: Array<{ name: string; reply: (reached: () => void, release: Promise<void>) => MockReply }> = [
    // The mock has the request and will never answer: the gateway is waiting for the headers.
    { name: 'before the provider answers', reply: (reached) => { reached(); return { hang: true }; } },
    // Headers and the first half of the body are written; the rest waits until the client is gone.
    { name: 'while its body is being read', reply: (reached, release) => ({
      headers: { 'content-type': 'application/json' }, chunks: ['{"id":"r1",', '"object":"x"}'],
      beforeChunk: (i) => { if (i === 1) { reached(); return release; } },
    }) },
  ];
  for (const c of cases) {
    it(`${c.name}: aborts the upstream request and is recorded as 499`, async () => {
      const failed: Array<{ status: number }> = [];
      const off = gw.daemon.ctx.bus.subscribe((e) => { if (e.type === 'failed') failed.push(e); });
      let reached!: () => void;
      const inState = new Promise<void>((resolve) => { reached = resolve; });
      let release!: () => void;
      const released = new Promise<void>((resolve) => { release = resolve; });
      gw.mocks.openai.setHandler(() => c.reply(reached, released));
      try {
        const before = gw.mocks.openai.requests.length;
        const ac = new AbortController();
        const r = fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'x' }] }), signal: ac.signal });
        await inState;
        ac.abort();
        await r.catch(() => {});
        const rec = gw.mocks.openai.requests[before]!;
        await expect.poll(() => rec.aborted && failed.length > 0, { timeout: 3_000, interval: 20 }).toBe(true);
        expect(failed.map((e) => e.status)).toEqual([499]);
      } finally { release(); gw.mocks.openai.setHandler(undefined); off(); }
    });
  }
});
