// Retries and fallbacks through the daemon's doors, with the official SDKs as clients and loopback
// mock providers that fail in the ways real ones do (529 overloaded, 429 with retry-after, 503, a
// refused connection, a 400, a stream cut after its first bytes). The mock's record of every
// attempt is what is checked: how many, in what order, how far apart (the mock's own clock), and
// that nothing follows a 4xx or a first byte. Each answer's x-gateway-route says the same.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { DEFAULT_ROUTING, type RoutingSettings } from '../../src/daemon/routing/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, type MockHandler, type MockReply } from '../helpers/mock-provider.js';
import { closedPort } from '../helpers/ports.js';

let gw: TestGateway | undefined;
afterEach(async () => { await gw?.close(); gw = undefined; });

const routing = (over: Partial<RoutingSettings> = {}): RoutingSettings => ({ ...DEFAULT_ROUTING, backoff: { baseMs: 20, maxMs: 50 }, ...over });
const overloaded: MockReply = { status: 529, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };
const unavailable: MockReply = { status: 503, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } }) };

/** Fails the first `n` requests with `reply`, then answers as the provider would. */
const failFirst = (n: number, reply: MockReply): MockHandler => {
  let seen = 0;
  return (r, provider) => (++seen <= n ? reply : defaultReply(provider, r));
};

const anthropic = (g: TestGateway, headers: Record<string, string> = {}) => new Anthropic({ baseURL: g.url, apiKey: g.key, maxRetries: 0, defaultHeaders: headers });
const ask = (g: TestGateway, model: string, headers?: Record<string, string>) =>
  anthropic(g, headers).messages.create({ model, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }).withResponse();

describe('retries of one target', () => {
  it('Anthropic answers 529 twice, then the third attempt serves the request; the route header lists all three', async () => {
    gw = await startTestGateway({ settings: { routing: routing() } });
    gw.mocks.anthropic.setHandler(failFirst(2, overloaded));
    const { data, response } = await ask(gw, 'anthropic/claude-opus-5');
    expect(data.content[0]).toMatchObject({ type: 'text' });
    expect(gw.mocks.anthropic.requests).toHaveLength(3);
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=529, anthropic/claude-opus-5=529, anthropic/claude-opus-5=200');
  });

  it('a 429 with retry-after: 1 is retried after the wait it asked for (the mock\'s clock)', async () => {
    gw = await startTestGateway({ settings: { routing: routing() } });
    gw.mocks.anthropic.setHandler(failFirst(1, { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' }, body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }) }));
    await ask(gw, 'anthropic/claude-opus-5');
    const [first, second] = gw.mocks.anthropic.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
  });

  it('a 400 is never retried: one attempt, the provider\'s answer to the client', async () => {
    gw = await startTestGateway({ settings: { routing: routing() } });
    gw.mocks.anthropic.setHandler(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad' } }) }));
    const err = await ask(gw, 'anthropic/claude-opus-5').then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(gw.mocks.anthropic.requests).toHaveLength(1);
  });

  it('retries run out: the client gets the provider\'s last error, its status and the attempts', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 1 }) } });
    gw.mocks.anthropic.setHandler(() => overloaded);
    const err = await ask(gw, 'anthropic/claude-opus-5').then(() => undefined, (e: unknown) => e) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(529);
    expect(err.headers?.get('x-gateway-route')).toBe('anthropic/claude-opus-5=529, anthropic/claude-opus-5=529');
    expect(gw.mocks.anthropic.requests).toHaveLength(2);
  });

  it('a retry-after longer than the cap is not slept through: the client gets it at once, retry-after kept', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retryAfterCapMs: 5_000 }) } });
    gw.mocks.anthropic.setHandler(() => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '120' }, body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }) }));
    const err = await ask(gw, 'anthropic/claude-opus-5').then(() => undefined, (e: unknown) => e) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(429);
    expect(err.headers?.get('retry-after')).toBe('120');
    expect(gw.mocks.anthropic.requests).toHaveLength(1);
  });

  it('a stream cut after its first bytes is not replayed: one attempt, the door\'s error event', async () => {
    gw = await startTestGateway({ settings: { routing: routing() }, timeouts: { idleMs: 300 } });
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    gw.mocks.anthropic.setHandler((r, provider) => {
      const reply = defaultReply(provider, r);
      return { ...reply, beforeChunk: (i) => (i >= 3 ? held : undefined) };
    });
    const stream = anthropic(gw).messages.stream({ model: 'anthropic/claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
    await expect(stream.finalMessage()).rejects.toThrow(/stopped sending/);
    release();
    expect(gw.mocks.anthropic.requests).toHaveLength(1);
  });
});

describe('fallbacks along a route', () => {
  const coding = { coding: ['anthropic/claude-opus-5', 'openai/gpt-5.4'] };

  it('an alias whose first target keeps answering 503 is served by the next one, through its own protocol', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ routes: coding }) } });
    gw.mocks.anthropic.setHandler(() => unavailable);
    const { data, response } = await ask(gw, 'coding');
    expect(data.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Hello') });
    expect(gw.mocks.anthropic.requests).toHaveLength(3);
    expect(gw.mocks.openai.requests).toHaveLength(1);
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=503, anthropic/claude-opus-5=503, anthropic/claude-opus-5=503, openai/gpt-5.4=200');
  });

  it('the request\'s record names the target that served it and the attempts (monitor, usage history)', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 0, routes: coding }) } });
    const events: GatewayEvent[] = [];
    gw.daemon.ctx.bus.subscribe((e) => events.push(e));
    gw.mocks.anthropic.setHandler(() => unavailable);
    await ask(gw, 'coding');
    await expect.poll(() => events.find((e) => e.type === 'finished')).toMatchObject({
      status: 200, served: { provider: 'openai', model: 'gpt-5.4' }, route: 'anthropic/claude-opus-5=503, openai/gpt-5.4=200',
    });
    expect(events.find((e) => e.type === 'started')).toMatchObject({ provider: 'anthropic', model: 'claude-opus-5' });
  });

  it('a model the client names as it always does gets its fallback without any change on the client', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 0, routes: { 'claude-opus-5': ['claude-opus-5', 'openai/gpt-5.4'] } }) } });
    gw.mocks.anthropic.setHandler(() => overloaded);
    const { response } = await ask(gw, 'anthropic/claude-opus-5');
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=529, openai/gpt-5.4=200');
  });

  it('x-gateway-fallback: off keeps the request on its first target', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 0, routes: coding }) } });
    gw.mocks.anthropic.setHandler(() => unavailable);
    const err = await ask(gw, 'coding', { 'x-gateway-fallback': 'off' }).then(() => undefined, (e: unknown) => e) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(503);
    expect(gw.mocks.openai.requests).toHaveLength(0);
  });

  it('no fallback after a 4xx: it would fail the same everywhere', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ routes: coding }) } });
    gw.mocks.anthropic.setHandler(() => ({ status: 413, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type: 'request_too_large', message: 'too large' } }) }));
    await expect(ask(gw, 'coding')).rejects.toBeInstanceOf(Anthropic.APIError);
    expect(gw.mocks.openai.requests).toHaveLength(0);
  });

  it('a provider that cannot be reached (connection refused) is retried, then the route moves on; the OpenAI SDK on the Chat door', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 1, routes: coding }) }, origins: { anthropic: `http://127.0.0.1:${await closedPort()}` } });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'coding', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.content).toContain('Hello');
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=connect-error, anthropic/claude-opus-5=connect-error, openai/gpt-5.4=200');
  });
});

describe('the circuit breaker', () => {
  it('a target that failed 5 times in its window is skipped by the next request, then tried again after the cool-down', async () => {
    let now = 1_000_000;
    gw = await startTestGateway({
      clock: () => now,
      settings: { routing: routing({ retries: 2, breaker: { failures: 5, windowMs: 30_000, cooldownMs: 30_000 }, routes: { coding: ['anthropic/claude-opus-5', 'openai/gpt-5.4'] } }) },
    });
    gw.mocks.anthropic.setHandler(() => unavailable);
    await ask(gw, 'coding'); // 3 failures
    await ask(gw, 'coding'); // 5th failure opens the breaker after 2 attempts
    expect(gw.mocks.anthropic.requests).toHaveLength(5);
    const { response } = await ask(gw, 'coding');
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=skipped, openai/gpt-5.4=200');
    expect(gw.mocks.anthropic.requests).toHaveLength(5);
    now += 31_000;
    gw.mocks.anthropic.setHandler(undefined);
    const again = await ask(gw, 'coding');
    expect(again.response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=200');
  });
});
