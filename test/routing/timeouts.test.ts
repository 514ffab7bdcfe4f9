// A provider that takes the request and never sends its response's headers: with a small injected
// upstream timeout (`timeouts.headersMs`) each attempt ends as `timeout`, is retried like any
// retryable failure, and then the route moves on to its next target. The mock's record shows
// every attempt arrived and was given up by the gateway (the connection closed unanswered); the
// client's answer is whole, from the fallback, and its x-gateway-route lists the timeouts.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING, type RoutingSettings } from '../../src/daemon/routing/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';

let gw: TestGateway | undefined;
afterEach(async () => { await gw?.close(); gw = undefined; });

const routing = (over: Partial<RoutingSettings> = {}): RoutingSettings => ({ ...DEFAULT_ROUTING, backoff: { baseMs: 20, maxMs: 50 }, ...over });
const coding = { coding: ['anthropic/claude-opus-5', 'openai/gpt-5.4'] };
/** Short enough to keep the test quick, long enough for a loopback mock that does answer. */
const timeouts = { headersMs: 300 };

describe('a timeout before the response headers', () => {
  it('is retried, then the route falls back; the OpenAI SDK on the Chat door gets the fallback\'s answer', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 1, routes: coding }) }, timeouts });
    gw.mocks.anthropic.setHandler(() => ({ hang: true }));
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'coding', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe(MOCK_TEXT);
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=timeout, anthropic/claude-opus-5=timeout, openai/gpt-5.4=200');
    // Both attempts reached the provider, and the gateway hung up on each rather than waiting on.
    expect(gw.mocks.anthropic.requests).toHaveLength(2);
    await expect.poll(() => gw!.mocks.anthropic.requests.every((r) => r.aborted)).toBe(true);
    expect(gw.mocks.openai.requests).toHaveLength(1);
    expect(gw.mocks.openai.requests[0]!.at).toBeGreaterThanOrEqual(gw.mocks.anthropic.requests[1]!.at);
  });

  it('a streamed Messages request on a model with a fallback (as Claude Code sends it) gets the fallback\'s whole stream', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 1, routes: { 'claude-opus-5': ['claude-opus-5', 'openai/gpt-5.4'] } }) }, timeouts });
    gw.mocks.anthropic.setHandler(() => ({ hang: true }));
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    const { data: stream, response } = await client.messages.stream({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const message = await stream.finalMessage();
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: MOCK_TEXT })]);
    expect(message.stop_reason).toBe('end_turn');
    expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=timeout, anthropic/claude-opus-5=timeout, openai/gpt-5.4=200');
    expect(gw.mocks.anthropic.requests).toHaveLength(2);
    expect(gw.mocks.openai.requests).toHaveLength(1);
  });

  it('with no fallback left, the client gets the door\'s 504 in its own shape, the timeouts in x-gateway-route', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 1 }) }, timeouts });
    gw.mocks.anthropic.setHandler(() => ({ hang: true }));
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    const err = await client.messages.create({ model: 'anthropic/claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] })
      .then(() => undefined, (e: unknown) => e) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(504);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'timeout_error', message: expect.stringContaining('upstream timeout') } });
    expect(err.headers?.get('x-gateway-route')).toBe('anthropic/claude-opus-5=timeout, anthropic/claude-opus-5=timeout');
    expect(gw.mocks.anthropic.requests).toHaveLength(2);
  });
});
