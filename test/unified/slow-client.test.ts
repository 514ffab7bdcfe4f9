// A slow client of a translated stream: the provider is held back (nothing piles up in the
// gateway), and once the client reads again every translated chunk arrives, in order.
import { request, type IncomingMessage } from 'node:http';
import { expect, it } from 'vitest';
import { SseParser } from '../../src/daemon/http/sse.js';
import { startTestGateway } from '../helpers/gateway.js';
import { relayActivity, startPumpingProvider } from '../helpers/pumping-provider.js';

it('holds an Anthropic stream back while the client does not read, and loses no chunk', async () => {
  const EVENTS = 150_000;
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  function* events() {
    yield ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-opus-5', content: [], usage: { input_tokens: 3, output_tokens: 1 } } });
    yield ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (let i = 0; i < EVENTS; i++) yield ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `t${i} ` } });
    yield ev('content_block_stop', { type: 'content_block_stop', index: 0 });
    yield ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: EVENTS } });
    yield ev('message_stop', { type: 'message_stop' });
  }
  // 64 events per write, so the provider side is not the slow part.
  function* batches() {
    let batch: string[] = [];
    for (const e of events()) {
      batch.push(e);
      if (batch.length === 64) { yield batch.join(''); batch = []; }
    }
    if (batch.length > 0) yield batch.join('');
  }
  const upstream = await startPumpingProvider({ 'content-type': 'text/event-stream' }, batches);
  const gw = await startTestGateway({ origins: { anthropic: upstream.origin } });
  const relayed = relayActivity(gw.daemon.ctx.bus);
  try {
    // What the provider would write for the whole stream, to compare with what it managed.
    const total = EVENTS * ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 't99999 ' } }).length;
    const body = JSON.stringify({ model: 'anthropic/claude-opus-5', stream: true, messages: [{ role: 'user', content: 'count' }] });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' } }, resolve)
        .on('error', reject).end(body);
    });
    expect(res.statusCode).toBe(200);
    res.pause(); // the client reads nothing until the provider is held back
    await upstream.heldBack(relayed.at);
    expect(upstream.finished).toBe(false);
    expect(upstream.written).toBeLessThan(total / 2); // socket buffers only, not the whole stream
    const parser = new SseParser();
    let text = '';
    let done = false;
    res.on('data', (c: Buffer) => {
      for (const e of parser.push(c)) {
        if (e.data === '[DONE]') { done = true; continue; }
        text += (JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '';
      }
    });
    res.resume();
    await new Promise((r) => res.on('end', r));
    expect(done).toBe(true);
    expect(text).toBe(Array.from({ length: EVENTS }, (_, i) => `t${i} `).join(''));
  } finally {
    relayed.close();
    await gw.close();
    await upstream.close();
  }
}, 30_000);
