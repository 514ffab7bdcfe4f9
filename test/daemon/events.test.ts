// Request-lifecycle events: what the monitor, dashboard and usage accounting are built on.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { SseParser } from '../../src/daemon/http/sse.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
const events: GatewayEvent[] = [];
beforeAll(async () => {
  gw = await startTestGateway();
  gw.daemon.ctx.bus.subscribe((e) => events.push(e));
});
afterAll(async () => { await gw?.close(); });

function lifecycle(id: string) { return events.filter((e) => e.id === id).map((e) => e.type); }
const lastStarted = () => [...events].reverse().find((e) => e.type === 'started')!;
const finishedOf = (id: string) => events.find((e) => e.id === id && (e.type === 'finished' || e.type === 'failed'))!;

describe('events', () => {
  it('a native Anthropic stream: started → first byte → finished, with usage read from the stream', async () => {
    const r = await fetch(`${gw.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key, accept: 'text/event-stream' }, body: '{"model":"claude-opus-5","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}' });
    await r.text();
    await new Promise((res) => setImmediate(res));
    const s = lastStarted();
    expect(s).toMatchObject({ type: 'started', mode: 'native', provider: 'anthropic', path: '/v1/messages', keyName: 'test', stream: true });
    expect(lifecycle(s.id)).toEqual(expect.arrayContaining(['started', 'first_byte', 'finished']));
    const f = finishedOf(s.id);
    expect(f).toMatchObject({ type: 'finished', status: 200, model: 'claude-opus-5', usage: { inputTokens: 12, outputTokens: 5 } });
  });

  it('a unified Gemini request reports its translated usage; a native OpenAI JSON reply too', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    await client.chat.completions.create({ model: 'gemini/gemini-3.5-flash', messages: [{ role: 'user', content: 'x' }] });
    const s = lastStarted();
    expect(s).toMatchObject({ mode: 'unified', provider: 'gemini', model: 'gemini-3.5-flash' });
    expect(finishedOf(s.id)).toMatchObject({ status: 200, usage: { inputTokens: 12, outputTokens: 5 } });
    const native = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.key });
    await native.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'x' }] });
    expect(finishedOf(lastStarted().id)).toMatchObject({ status: 200, usage: { inputTokens: 12, outputTokens: 5 } });
  });

  it('streamed unified requests finish as successes with usage, even when the SDK hangs up after [DONE]', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key });
    for (const model of ['anthropic/claude-opus-5', 'gemini/gemini-3.5-flash', 'openai/gpt-5.4']) {
      const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'x' }] });
      for await (const _ of stream) { /* drain */ }
      const id = lastStarted().id;
      const deadline = Date.now() + 2000;
      while (!finishedOf(id) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
      expect(finishedOf(id), model).toMatchObject({ type: 'finished', status: 200, usage: { inputTokens: 12 } });
    }
  });

  it('an upstream error is a failed event; events never carry keys or bodies', async () => {
    gw.mocks.openai.setHandler(() => ({ status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"boom","type":"server_error","param":null,"code":null}}' }));
    const r = await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: '{"secret-body":"do-not-log"}' });
    gw.mocks.openai.setHandler(undefined);
    expect(r.status).toBe(500);
    await r.text();
    expect(finishedOf(lastStarted().id)).toMatchObject({ type: 'failed', status: 500 });
    const text = JSON.stringify(events);
    expect(text).not.toContain(gw.key);
    expect(text).not.toContain(gw.mocks.openai.key);
    expect(text).not.toContain('do-not-log');
    // Headers are masked, in memory and in JSON alike.
    const started = lastStarted() as Extract<GatewayEvent, { type: 'started' }>;
    expect(started.headers?.authorization).toBe(`Bearer …${gw.key.slice(-4)}`);
    expect((JSON.parse(JSON.stringify(started)) as { headers: Record<string, string> }).headers.authorization).toBe(`Bearer …${gw.key.slice(-4)}`);
  });

  it('requests refused before reaching a provider still show up: started + failed with the reason', async () => {
    const post = (path: string, headers: Record<string, string>, body: string) => fetch(`${gw.url}${path}`, { method: 'POST', headers, body }).then((r) => r.text());
    await post('/anthropic/v1/messages', { 'x-api-key': 'sk-proxy-wrong' }, '{}');
    let s = lastStarted();
    expect(s).toMatchObject({ mode: 'native', provider: 'anthropic', keyName: '(no valid key)' });
    expect(finishedOf(s.id)).toMatchObject({ type: 'failed', status: 401, code: 'invalid_api_key' });
    expect(JSON.stringify(s)).not.toContain('sk-proxy-wrong');
    await post('/v1/chat/completions', { authorization: `Bearer ${gw.key}` }, '{"model":"llama-3","messages":[{"role":"user","content":"x"}]}');
    s = lastStarted();
    expect(s).toMatchObject({ mode: 'unified', provider: null, keyName: 'test' });
    expect(finishedOf(s.id)).toMatchObject({ type: 'failed', status: 400, code: 'model_not_found' });
  });

  it('GET /admin/events streams the same events to a local subscriber', async () => {
    const ac = new AbortController();
    const r = await fetch(`${gw.url}/admin/events`, { headers: { authorization: `Bearer ${gw.daemon.adminToken}` }, signal: ac.signal });
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    const reader = r.body!.getReader();
    const parser = new SseParser();
    await fetch(`${gw.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: '{"model":"gpt-5.4","messages":[]}' }).then((x) => x.text());
    const seen: GatewayEvent[] = [];
    const deadline = Date.now() + 3000;
    while (!seen.some((e) => e.type === 'finished') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const ev of parser.push(value)) seen.push(JSON.parse(ev.data) as GatewayEvent);
    }
    ac.abort();
    expect(seen.map((e) => e.type)).toEqual(expect.arrayContaining(['started', 'finished']));
  });
});
