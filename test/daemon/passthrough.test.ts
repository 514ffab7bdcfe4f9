// Native pass-through, end to end: real daemon, mock providers on loopback, official SDKs as clients.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { relayActivity, startPumpingProvider } from '../helpers/pumping-provider.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const allRequests = () => [...gw.mocks.anthropic.requests, ...gw.mocks.openai.requests, ...gw.mocks.gemini.requests];

function expectNoProxyKeyUpstream(): void {
  for (const r of allRequests()) {
    expect(JSON.stringify(r.headers)).not.toContain('sk-proxy-');
    expect(r.url).not.toContain('sk-proxy-');
  }
}

describe('official SDKs through the native endpoints', () => {
  it('openai SDK: plain and streamed, key swapped', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.key });
    const before = gw.mocks.openai.requests.length;
    const done = await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] });
    expect(done.choices[0]!.message.content).toBe(MOCK_TEXT);
    const stream = await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe(MOCK_TEXT);
    const seen = gw.mocks.openai.requests.slice(before);
    expect(seen).toHaveLength(2);
    for (const r of seen) {
      expect(r.headers.authorization).toBe(`Bearer ${gw.mocks.openai.key}`);
      expect(r.url).toBe('/v1/chat/completions');
    }
    expectNoProxyKeyUpstream();
  });

  it('anthropic SDK: plain and streamed, version header set when missing', async () => {
    const client = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: gw.key });
    const before = gw.mocks.anthropic.requests.length;
    const msg = await client.messages.create({ model: 'claude-opus-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
    const stream = client.messages.stream({ model: 'claude-opus-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const ev of stream) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    expect(text).toBe(MOCK_TEXT);
    for (const r of gw.mocks.anthropic.requests.slice(before)) {
      expect(r.headers['x-api-key']).toBe(gw.mocks.anthropic.key);
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['anthropic-version']).toBeTruthy();
    }
    expectNoProxyKeyUpstream();
  });

  it('@google/genai: generateContent and streamGenerateContent (alt=sse kept)', async () => {
    const ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: `${gw.url}/gemini` } });
    const before = gw.mocks.gemini.requests.length;
    const res = await ai.models.generateContent({ model: 'gemini-3.5-flash', contents: 'hi' });
    expect(res.text).toBe(MOCK_TEXT);
    let text = '';
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-3.5-flash', contents: 'hi' })) text += c.text ?? '';
    expect(text).toBe(MOCK_TEXT);
    const seen = gw.mocks.gemini.requests.slice(before);
    // The SDK picks the API version; the gateway forwards whichever it is.
    expect(seen.map((r) => r.url.replace(/^\/v1(beta)?\//, '/VERSION/'))).toEqual([
      '/VERSION/models/gemini-3.5-flash:generateContent',
      '/VERSION/models/gemini-3.5-flash:streamGenerateContent?alt=sse',
    ]);
    for (const r of seen) expect(r.headers['x-goog-api-key']).toBe(gw.mocks.gemini.key);
    expectNoProxyKeyUpstream();
  });
});

describe('byte-for-byte pass-through', () => {
  it('sends the request body unchanged and returns the provider body unchanged', async () => {
    const body = '{ "model" : "gpt-5.4",\n  "messages":[{"role":"user","content":"h\\u00e9llo – 日本"}], "zzz": 1.50 }';
    const upstreamBody = '{"id":"x",  "weird" :[1,2 ,3], "text":"日本"}\n';
    gw.mocks.openai.setHandler(() => ({ status: 200, headers: { 'content-type': 'application/json', 'x-request-id': 'req_123' }, body: upstreamBody }));
    try {
      const r = await fetch(`${gw.url}/openai/v1/chat/completions?foo=bar&x=%2F`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'openai-organization': 'org-1' }, body });
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(upstreamBody);
      expect(r.headers.get('x-request-id')).toBe('req_123');
      const rec = gw.mocks.openai.requests.at(-1)!;
      expect(rec.body.toString('utf8')).toBe(body);
      expect(rec.url).toBe('/v1/chat/completions?foo=bar&x=%2F');
      expect(rec.headers['openai-organization']).toBe('org-1');
    } finally { gw.mocks.openai.setHandler(undefined); }
  });

  it('passes upstream errors through unmodified', async () => {
    const err = '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}';
    gw.mocks.anthropic.setHandler(() => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' }, body: err }));
    try {
      const r = await fetch(`${gw.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key }, body: '{}' });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('7');
      expect(await r.text()).toBe(err);
    } finally { gw.mocks.anthropic.setHandler(undefined); }
  });

  it('keeps a client anthropic-version and anthropic-beta, and the query string', async () => {
    await fetch(`${gw.url}/anthropic/v1/messages?beta=true`, {
      method: 'POST', headers: { 'x-api-key': gw.key, 'anthropic-version': '2026-10-21', 'anthropic-beta': 'a-2025-01-01,b-2026-02-02' },
      body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    });
    const rec = gw.mocks.anthropic.requests.at(-1)!;
    expect(rec.url).toBe('/v1/messages?beta=true');
    expect(rec.headers['anthropic-version']).toBe('2026-10-21');
    expect(rec.headers['anthropic-beta']).toBe('a-2025-01-01,b-2026-02-02');
    await fetch(`${gw.url}/anthropic/v1/messages/count_tokens`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: '{}' });
    const rec2 = gw.mocks.anthropic.requests.at(-1)!;
    expect(rec2.url).toBe('/v1/messages/count_tokens');
    expect(rec2.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('takes the Gemini key from ?key= and strips it, keeping the rest of the query', async () => {
    const r = await fetch(`${gw.url}/gemini/v1beta/models/gemini-3.5-flash:streamGenerateContent?key=${gw.key}&alt=sse`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"contents":[{"parts":[{"text":"hi"}]}]}',
    });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(text).toContain('\r\n\r\n');
    expect(text).not.toContain('[DONE]');
    expect(gw.mocks.gemini.requests.at(-1)!.url).toBe('/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse');
  });

  it('carries a 20 MB body through unchanged', async () => {
    const big = Buffer.alloc(20 * 1024 * 1024, 'a');
    big.write('{"model":"gpt-5.4","pad":"', 0);
    big.write('"}', big.length - 2);
    gw.mocks.openai.setHandler(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }));
    try {
      const r = await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: big });
      expect(r.status).toBe(200);
      expect(gw.mocks.openai.requests.at(-1)!.body.equals(big)).toBe(true);
    } finally { gw.mocks.openai.setHandler(undefined); }
  });
});

describe('streaming', () => {
  it('forwards each upstream chunk as it arrives (no buffering)', async () => {
    // The provider holds the rest of its stream back until the client has the first chunk: a
    // gateway that buffered would deliver nothing, and the read below would time out.
    let clientHasFirst!: () => void;
    const firstSeen = new Promise<void>((resolve) => { clientHasFirst = resolve; });
    gw.mocks.openai.setHandler(() => ({
      headers: { 'content-type': 'text/event-stream' }, chunks: ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: [DONE]\n\n'],
      beforeChunk: (i) => (i === 1 ? firstSeen : undefined),
    }));
    try {
      const r = await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: '{"stream":true}' });
      const reader = r.body!.getReader();
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the first chunk never arrived while the provider held the rest back')), 10_000));
      const first = await Promise.race([reader.read(), timeout]);
      expect(new TextDecoder().decode(first.value)).toBe('data: {"n":1}\n\n');
      clientHasFirst();
      let rest = '';
      for (let c = await reader.read(); !c.done; c = await reader.read()) rest += new TextDecoder().decode(c.value);
      expect(rest).toBe('data: {"n":2}\n\ndata: [DONE]\n\n');
    } finally { gw.mocks.openai.setHandler(undefined); }
  });

  it('aborts the upstream request when the client disconnects mid-stream', async () => {
    const chunks = Array.from({ length: 50 }, (_, i) => `event: ping\ndata: {"type":"ping","i":${i}}\n\n`);
    gw.mocks.anthropic.setHandler(() => ({ headers: { 'content-type': 'text/event-stream' }, chunks, delayMs: 100 }));
    try {
      const before = gw.mocks.anthropic.requests.length;
      const ac = new AbortController();
      const r = await fetch(`${gw.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key }, body: '{"stream":true}', signal: ac.signal });
      const reader = r.body!.getReader();
      await reader.read();
      ac.abort();
      const rec = gw.mocks.anthropic.requests[before]!;
      const deadline = Date.now() + 2000;
      while (!rec.aborted && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
      expect(rec.aborted).toBe(true); // long before the 5 s the full stream would take
    } finally { gw.mocks.anthropic.setHandler(undefined); }
  });

  it('serves 100 concurrent streams, each receiving exactly its own bytes', async () => {
    gw.mocks.openai.setHandler((req) => {
      const id = (JSON.parse(req.body.toString()) as { id: string }).id;
      return { headers: { 'content-type': 'text/event-stream' }, chunks: Array.from({ length: 10 }, (_, i) => `data: {"id":"${id}","i":${i}}\n\n`), delayMs: 5 };
    });
    try {
      const results = await Promise.all(Array.from({ length: 100 }, async (_, n) => {
        const id = `stream-${n}`;
        const r = await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: JSON.stringify({ id, stream: true }) });
        return { id, text: await r.text() };
      }));
      for (const { id, text } of results) {
        expect(text).toBe(Array.from({ length: 10 }, (_, i) => `data: {"id":"${id}","i":${i}}\n\n`).join(''));
      }
    } finally { gw.mocks.openai.setHandler(undefined); }
  });
});

describe('a slow client', () => {
  it('holds the provider back instead of buffering its answer, and loses no byte', async () => {
    // A provider that streams 64 MiB as fast as the connection takes it, and counts what it wrote.
    const TOTAL = 64 * 1024 * 1024;
    const piece = Buffer.alloc(64 * 1024, 'x');
    const upstream = await startPumpingProvider({ 'content-type': 'application/octet-stream', 'content-length': String(TOTAL) }, function* () {
      for (let n = 0; n < TOTAL; n += piece.length) yield piece;
    });
    const slow = await startTestGateway({ origins: { openai: upstream.origin } });
    const relayed = relayActivity(slow.daemon.ctx.bus);
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        request(`${slow.url}/openai/v1/files/big/content`, { headers: { authorization: `Bearer ${slow.key}` } }, resolve).on('error', reject).end();
      });
      res.pause(); // the client reads nothing until the provider is held back
      await upstream.heldBack(relayed.at);
      expect(upstream.finished).toBe(false);
      expect(upstream.written).toBeLessThan(TOTAL / 2); // socket buffers only, not the whole answer
      let received = 0;
      res.on('data', (c: Buffer) => { received += c.length; });
      res.resume();
      await new Promise((r) => res.on('end', r));
      expect(received).toBe(TOTAL);
      expect(upstream.written).toBe(TOTAL);
    } finally {
      relayed.close();
      await slow.close();
      await upstream.close();
    }
  });
});

describe('path safety', () => {
  const probes = ['/anthropic/../admin/status', '/anthropic/%2e%2e/admin/status', '/openai/v1/%2E%2E/%2E%2E/admin/status', '/gemini//v1beta/models', '/openai/v1/..%2fadmin', '/anthropic/v1\\..\\admin'];
  for (const p of probes) {
    it(`refuses ${p} without calling upstream`, async () => {
      const before = allRequests().length;
      const status = await rawRequest(`GET ${p} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.key}\r\nConnection: close\r\n\r\n`);
      expect(status).toBe(400);
      expect(allRequests().length).toBe(before);
    });
  }
  it('refuses an absolute URL in the request line', async () => {
    const before = allRequests().length;
    const status = await rawRequest(`GET http://127.0.0.1:1/admin/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.key}\r\nConnection: close\r\n\r\n`);
    expect([400, 404]).toContain(status);
    expect(allRequests().length).toBe(before);
  });
});

function rawRequest(text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(gw.url);
    const s = connect(Number(u.port), u.hostname, () => s.write(text));
    let buf = '';
    s.on('data', (d) => { buf += d.toString(); });
    s.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(buf)?.[1] ?? 0)));
    s.on('error', reject);
  });
}
