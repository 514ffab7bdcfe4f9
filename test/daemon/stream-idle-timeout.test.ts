// The stream idle timeout (UpstreamTimeouts.idleMs, injected small here): a provider that answers
// 200, streams its first text and then stalls must leave the client with an explicit error in
// its own protocol, naming the stall — never a stream that just ends as if it were complete. On
// every door, translated and same-protocol, with the official SDKs as the clients. A native prefix
// relays the provider's bytes and nothing else, so there the connection is cut (the SDK raises
// it); the request's record says upstream_timeout either way. No assertion on how long it took.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, type MockHandler } from '../helpers/mock-provider.js';

const FIRST_TEXT = 'Hello '; // the first text piece of every mock stream (MOCK_TEXT's first word)

let gw: TestGateway;
let release: () => void = () => {};
const stalled = new Promise<void>((resolve) => { release = resolve; });
const events: GatewayEvent[] = [];

/** The provider's own stream, held back for good after the chunk that carries the first text. */
const stallAfterFirstText: MockHandler = (r, provider) => {
  const reply = defaultReply(provider, r);
  if (!reply.chunks) return reply;
  const upTo = reply.chunks.findIndex((c) => String(c).includes(`"${FIRST_TEXT}"`)) + 1;
  if (upTo === 0) throw new Error(`no "${FIRST_TEXT}" in the mock's stream for ${r.url}`);
  return { ...reply, beforeChunk: (i) => (i >= upTo ? stalled : undefined) };
};

beforeAll(async () => {
  gw = await startTestGateway({ timeouts: { idleMs: 200 } });
  for (const m of Object.values(gw.mocks)) m.setHandler(stallAfterFirstText);
  gw.daemon.ctx.bus.subscribe((e) => events.push(e));
});
afterAll(async () => {
  release();
  await gw?.close();
});

/** The record of the next request to finish after `from` events (waits for it). */
async function nextEnd(from: number): Promise<GatewayEvent> {
  await expect.poll(() => events.slice(from).find((e) => e.type === 'failed' || e.type === 'finished'), { timeout: 5000, interval: 20 }).toBeDefined();
  return events.slice(from).find((e) => e.type === 'failed' || e.type === 'finished')!;
}

/**
 * Runs a client's stream to its end: the text it got, and what ended it. A stall must end it with
 * an error (never `undefined`, a clean end) whose message says the provider stopped sending.
 */
async function consume(read: (onText: (t: string) => void) => Promise<void>): Promise<{ text: string; error: unknown }> {
  let text = '';
  try {
    await read((t) => { text += t; });
    return { text, error: undefined };
  } catch (error) {
    return { text, error };
  }
}

async function expectStallReported(provider: string, read: (onText: (t: string) => void) => Promise<void>, said: 'in the protocol' | 'by the cut' = 'in the protocol'): Promise<void> {
  const from = events.length;
  const { text, error } = await consume(read);
  expect(text).toBe(FIRST_TEXT);
  expect(error, 'the stream ended as if it were complete').toBeDefined();
  if (said === 'in the protocol') expect(String((error as Error).message)).toMatch(new RegExp(`${provider} stopped sending`));
  expect(await nextEnd(from)).toMatchObject({ type: 'failed', code: 'upstream_timeout', message: expect.stringMatching(new RegExp(`^${provider} stopped sending`)) });
}

const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
const anthropic = (base = gw.url) => new Anthropic({ baseURL: base, apiKey: gw.key, maxRetries: 0 });
const genai = (base = gw.url) => new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: base } });

const chatStream = (client: OpenAI, model: string) => async (onText: (t: string) => void) => {
  const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  for await (const c of stream) onText(c.choices[0]?.delta.content ?? '');
};
const messagesStream = (client: Anthropic, model: string) => async (onText: (t: string) => void) => {
  const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
  stream.on('text', onText);
  await stream.finalMessage();
};
/** A Responses stream fails with an `error` event or `response.failed`; either is raised here. */
const responsesStream = (client: OpenAI, model: string) => async (onText: (t: string) => void) => {
  const stream = client.responses.stream({ model, input: 'hi' });
  for await (const ev of stream) {
    if (ev.type === 'response.output_text.delta') onText(ev.delta);
    if (ev.type === 'response.failed') throw new Error(ev.response.error?.message ?? 'response.failed without an error');
    if (ev.type === 'response.completed') return;
  }
  await stream.finalResponse();
};
const geminiStream = (client: GoogleGenAI, model: string) => async (onText: (t: string) => void) => {
  for await (const c of await client.models.generateContentStream({ model, contents: 'hi' })) onText(c.text ?? '');
};

describe('a provider that stalls mid-stream, through the doors', () => {
  it('Chat door, translated (Anthropic): the OpenAI SDK raises the error event', async () => {
    await expectStallReported('Anthropic', chatStream(openai(), 'anthropic/claude-opus-5'));
  });

  it('Chat door, same protocol (OpenAI)', async () => {
    await expectStallReported('OpenAI', chatStream(openai(), 'openai/gpt-5.4'));
  });

  it('Chat door on the wire: the error is the last frame, no [DONE] after it', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anthropic/claude-opus-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(frames.some((f) => f.includes('[DONE]'))).toBe(false);
    expect(JSON.parse(frames.at(-1)!.replace(/^data: /, ''))).toMatchObject({ error: { type: 'server_error', code: 'upstream_timeout', message: expect.stringMatching(/^Anthropic stopped sending/) } });
  });

  it('Messages door, translated (OpenAI): the Anthropic SDK raises the error event', async () => {
    await expectStallReported('OpenAI', messagesStream(anthropic(), 'openai/gpt-5.4'));
  });

  it('Messages door, same protocol (Claude, the fast path)', async () => {
    await expectStallReported('Anthropic', messagesStream(anthropic(), 'anthropic/claude-opus-5'));
  });

  it('Responses door, translated (Anthropic)', async () => {
    await expectStallReported('Anthropic', responsesStream(openai(), 'anthropic/claude-opus-5'));
  });

  it('Responses door, same protocol (OpenAI, the fast path)', async () => {
    await expectStallReported('OpenAI', responsesStream(openai(), 'openai/gpt-5.4'));
  });

  it('Gemini door, translated (OpenAI): @google/genai raises the error event', async () => {
    await expectStallReported('OpenAI', geminiStream(genai(), 'openai/gpt-5.4'));
  });

  it('Gemini door, same protocol (Gemini, the fast path)', async () => {
    await expectStallReported('Gemini', geminiStream(genai(), 'gemini/gemini-3.5-flash'));
  });
});

describe('a provider that stalls mid-stream, on the native prefixes: the connection is cut', () => {
  it('/anthropic with the Anthropic SDK', async () => {
    await expectStallReported('Anthropic', messagesStream(anthropic(`${gw.url}/anthropic`), 'claude-opus-5'), 'by the cut');
  });

  it('/openai with the OpenAI SDK', async () => {
    await expectStallReported('OpenAI', chatStream(new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: gw.key, maxRetries: 0 }), 'gpt-5.4'), 'by the cut');
  });

  it('/gemini with @google/genai', async () => {
    await expectStallReported('Gemini', geminiStream(genai(`${gw.url}/gemini`), 'gemini-3.5-flash'), 'by the cut');
  });
});
