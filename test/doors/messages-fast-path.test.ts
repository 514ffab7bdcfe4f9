// POST /v1/messages at the root with a Claude model: the official Anthropic SDK against the daemon
// and a mock Anthropic on loopback. The request goes through with only the model and the key
// changed (thinking, cache_control, metadata, anthropic-beta and unknown fields all arrive), and
// the answer comes back as Anthropic sent it.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
// These tests are about how one provider answer reaches the client: no retries (test/routing has those).
import { NO_RETRIES } from '../helpers/routing.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let client: Anthropic;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { routing: NO_RETRIES } });
  client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const lastUpstream = () => gw.mocks.anthropic.requests.at(-1)!;

describe('Messages door → Anthropic (fast path)', () => {
  it('answers through the SDK, the routing prefix stripped upstream and the provider key swapped in', async () => {
    const msg = await client.messages.create({ model: 'anthropic/claude-opus-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
    const up = lastUpstream();
    expect(up.url).toBe('/v1/messages');
    expect(JSON.parse(up.body.toString()).model).toBe('claude-opus-5');
    expect(up.headers['x-api-key']).toBe(gw.mocks.anthropic.key);
    expect(up.headers.authorization).toBeUndefined();
    expect(up.body.toString()).not.toContain(gw.key);
  });

  it('sends every field and Anthropic header on as the client sent it; only the model changes', async () => {
    const body = {
      model: 'claude-opus-5', max_tokens: 32000, stream: false,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'high' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      metadata: { user_id: 'u-1' }, a_field_from_the_future: { x: 1 },
    };
    const r = await fetch(`${gw.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': gw.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'effort-2025-11-24,context-management-2025-06-27' },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    const up = lastUpstream();
    expect(up.url).toBe('/v1/messages?beta=true');
    expect(JSON.parse(up.body.toString())).toStrictEqual(body);
    expect(up.headers['anthropic-beta']).toBe('effort-2025-11-24,context-management-2025-06-27');
    expect(up.headers['x-api-key']).toBe(gw.mocks.anthropic.key);
  });

  it('sends the client\'s own bytes, only the model\'s value changed (key order, spacing and unicode escapes kept)', async () => {
    const raw = '{ "max_tokens" : 16,\n  "model" :  "anthropic/claude-opus-5", "metadata": {"model": "not-this-one"},\n  "messages": [{"role": "user", "content": "caf\\u00e9 \\"model\\": \\"x\\""}] }';
    const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key, 'content-type': 'application/json' }, body: raw });
    expect(r.status).toBe(200);
    expect(lastUpstream().body.toString()).toBe(raw.replace('"anthropic/claude-opus-5"', '"claude-opus-5"'));
    // A bare Claude name needs no change at all: the very bytes go.
    const bare = raw.replace('anthropic/claude-opus-5', 'claude-opus-5');
    await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key }, body: bare });
    expect(lastUpstream().body.toString()).toBe(bare);
  });

  it('a conversation that moves to Claude loses the state another provider minted, and nothing else', async () => {
    // The assistant turn came from a Gemini model through this door: its thought signature rides in
    // a thinking block's signature (gw1.…), which Anthropic would refuse.
    const geminiState = `gw1.${Buffer.from(JSON.stringify({ p: 'gemini', d: { thoughtSignature: 'c2ln' }, c: 'fc_1' })).toString('base64url')}`;
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [
        { type: 'tool_use', id: 'fc_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'thinking', thinking: '', signature: geminiState },
      ] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'fc_1', content: '18°C' }] },
    ];
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object' } }];
    await client.messages.create({ model: 'claude-opus-5', max_tokens: 64, tools, messages });
    const sent = JSON.parse(lastUpstream().body.toString()) as { messages: Array<{ content: unknown }> };
    expect(sent.messages[1]!.content).toEqual([{ type: 'tool_use', id: 'fc_1', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(sent.messages[2]).toEqual(messages[2]);
    expect(lastUpstream().body.toString()).not.toContain('gw1.');
  });

  it('streams the provider\'s own events, byte for byte', async () => {
    const stream = client.messages.stream({ model: 'claude-opus-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
    expect(final.stop_reason).toBe('end_turn');
    expect(JSON.parse(lastUpstream().body.toString()).stream).toBe(true);
  });

  it('gives Anthropic\'s own error body back unmodified, with its status and retry-after', async () => {
    const errBody = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }, request_id: 'req_mock_429' });
    gw.mocks.anthropic.setHandler(() => ({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' }, body: errBody }));
    try {
      const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }) });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('7');
      expect(await r.text()).toBe(errBody);
    } finally { gw.mocks.anthropic.setHandler(undefined); }
  });

  it('shows in the monitor\'s events as a request that came in by the Messages door', async () => {
    const seen: GatewayEvent[] = [];
    const unsubscribe = gw.daemon.ctx.bus.subscribe((e) => seen.push(e));
    try {
      await client.messages.create({ model: 'claude-opus-5', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] });
      await expect.poll(() => seen.some((e) => e.type === 'finished')).toBe(true);
      expect(seen.find((e) => e.type === 'started')).toMatchObject({ mode: 'messages', path: '/v1/messages', provider: 'anthropic', model: 'claude-opus-5' });
    } finally { unsubscribe(); }
  });

  it('refuses a wrong proxy key in Anthropic\'s error shape, sending nothing upstream', async () => {
    const before = gw.mocks.anthropic.requests.length;
    const bad = new Anthropic({ baseURL: gw.url, apiKey: 'sk-proxy-not-a-real-key-000000000000', maxRetries: 0 });
    const err = await bad.messages.create({ model: 'claude-opus-5', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(gw.mocks.anthropic.requests.length).toBe(before);
  });

  it('refuses a model that names no provider and a body that is not JSON, in Anthropic\'s shape', async () => {
    const err = await client.messages.create({ model: 'mystery-model', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toMatch(/mystery-model.*does not name a provider/);
    const r = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': gw.key }, body: '{not json' });
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
