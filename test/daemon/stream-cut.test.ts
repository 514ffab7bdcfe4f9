// A provider that answers 200 and then drops the connection mid-stream was reached: the client's
// error event and the recorded failure say it broke off the stream (`upstream_interrupted`), not
// that it could not be reached (`upstream_unreachable`).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const sse = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const ANTHROPIC_START = [
  sse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-opus-5', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
  sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Par' } }),
].join('');
const OPENAI_START = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-5.4', choices: [{ index: 0, delta: { role: 'assistant', content: 'Par' }, finish_reason: null }] })}\n\n`;

/** Answers 200, sends the start of a stream (or of a JSON body), then destroys the connection. */
let cutter: Server;
let gw: TestGateway;
const events: GatewayEvent[] = [];

beforeAll(async () => {
  cutter = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => {
      const streamed = (JSON.parse(body) as { stream?: boolean }).stream === true;
      if (streamed) res.writeHead(200, { 'content-type': 'text/event-stream' });
      else res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write(!streamed ? '{"id":"chatcmpl-1","object":"chat.c' : req.url === '/v1/messages' ? ANTHROPIC_START : OPENAI_START);
      setTimeout(() => res.socket?.destroy(), 50);
    });
  });
  await new Promise<void>((resolve) => cutter.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(cutter.address() as AddressInfo).port}`;
  gw = await startTestGateway({ origins: { anthropic: origin, openai: origin } });
  gw.daemon.ctx.bus.subscribe((e) => events.push(e));
});
afterAll(async () => {
  await gw?.close();
  cutter?.closeAllConnections();
  cutter?.close();
});

/** The failed event of the next request to finish after `from` events (waits for it). */
async function nextFailure(from: number): Promise<Extract<GatewayEvent, { type: 'failed' }>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const f = events.slice(from).find((e) => e.type === 'failed' || e.type === 'finished');
    if (f) {
      expect(f.type).toBe('failed');
      return f as Extract<GatewayEvent, { type: 'failed' }>;
    }
    if (Date.now() > deadline) throw new Error('no request finished');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const chat = (model: string, stream: boolean) => fetch(`${gw.url}/v1/chat/completions`, {
  method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'x' }] }),
});

describe('unified endpoint', () => {
  for (const c of [{ model: 'claude-opus-5', name: 'Anthropic', via: 'translated' }, { model: 'gpt-5.4', name: 'OpenAI', via: 'relayed' }]) {
    it(`a ${c.via} ${c.name} stream cut after 200: the error event and the record say it broke off`, async () => {
      const from = events.length;
      const r = await chat(c.model, true);
      expect(r.status).toBe(200);
      const frames = (await r.text()).split('\n\n').filter(Boolean);
      expect(frames.slice(0, -1).join('')).toContain('"content":"Par"');
      const last = JSON.parse(frames.at(-1)!.replace(/^data: /, '')) as { error: Record<string, unknown> };
      expect(last.error).toMatchObject({ type: 'server_error', code: 'upstream_interrupted', message: expect.stringMatching(new RegExp(`^${c.name} broke off the stream`)) });
      expect(String(last.error.message)).not.toMatch(/cannot reach/);
      const failed = await nextFailure(from);
      expect(failed).toMatchObject({ status: 502, code: 'upstream_interrupted', message: last.error.message });
    });
  }

  it('the official SDK raises the break as an error, after the text it got', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'claude-opus-5', stream: true, messages: [{ role: 'user', content: 'x' }] });
    let got = '';
    await expect((async () => { for await (const c of stream) got += c.choices[0]?.delta.content ?? ''; })()).rejects.toThrow(/Anthropic broke off the stream/);
    expect(got).toBe('Par');
  });

  it('a whole answer cut after 200: a 502 that says the provider broke off its response', async () => {
    const from = events.length;
    const r = await chat('gpt-5.4', false);
    expect(r.status).toBe(502);
    const body = (await r.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ code: 'upstream_interrupted', message: expect.stringMatching(/^OpenAI broke off the response/) });
    expect(await nextFailure(from)).toMatchObject({ status: 502, code: 'upstream_interrupted' });
  });
});

describe('native pass-through', () => {
  it('a stream cut after 200 reaches the client as a broken connection and is recorded as broken off', async () => {
    const from = events.length;
    const r = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST', headers: { 'x-api-key': gw.key, 'content-type': 'application/json' },
      body: '{"model":"claude-opus-5","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]}',
    });
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
    const failed = await nextFailure(from);
    expect(failed).toMatchObject({ status: 502, code: 'upstream_interrupted', message: expect.stringMatching(/^Anthropic broke off the stream/) });
  });
});
