// The caching mock of Anthropic's API (test/helpers/anthropic-cache.ts) against Anthropic's own
// SDK, straight to it: what the other caching tests rely on it to do as Anthropic documents.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anthropicCacheMock, type AnthropicCacheMock } from '../helpers/anthropic-cache.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

let server: MockProvider;
let mock: AnthropicCacheMock;
let now = 1_000_000;
beforeAll(async () => { server = await startMockProvider('anthropic'); });
afterAll(async () => { await server?.close(); });
beforeEach(() => {
  now = 1_000_000;
  mock = anthropicCacheMock({ clock: () => now });
  server.setHandler(mock.handler);
});

const client = () => new Anthropic({ baseURL: server.origin, apiKey: server.key, maxRetries: 0 });
const eph = { type: 'ephemeral' } as const;
const hour = { type: 'ephemeral', ttl: '1h' } as const;
/** A system prompt of about `tokens` tokens by the mock's count. */
const long = (tokens: number) => 'x'.repeat(tokens * 4);
type Ttl = typeof eph | typeof hour;
/** `mark`: the system prompt's cache_control (null: none). */
const ask = (system: string, question: string, mark: Ttl | null = eph, stream = false) => {
  const params = { model: 'claude-sonnet-5', max_tokens: 64, system: [{ type: 'text' as const, text: system, ...(mark ? { cache_control: mark } : {}) }], messages: [{ role: 'user' as const, content: question }] };
  return stream ? client().messages.stream(params).finalMessage() : client().messages.create(params);
};

describe('the caching mock of Anthropic', () => {
  it('writes the prefix up to a breakpoint, and a later request with the same prefix reads it', async () => {
    const system = long(2000);
    const first = await ask(system, 'one');
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(2000);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: first.usage.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 });
    const second = await ask(system, 'two, a different question');
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    // What follows the breakpoint is billed as plain input.
    expect(second.usage.input_tokens).toBeGreaterThan(0);
    expect(second.usage.input_tokens + second.usage.cache_read_input_tokens!).toBe(mock.turns[1]!.total);
  });

  it('reports the same in a stream: message_start and the cumulative message_delta', async () => {
    const system = long(2000);
    await ask(system, 'one');
    const streamed = await ask(system, 'two', eph, true);
    expect(streamed.usage.cache_read_input_tokens).toBe(mock.turns[0]!.usage.cache_creation_input_tokens);
  });

  it('caches nothing below the model\'s minimum, and nothing without a mark', async () => {
    const short = await ask(long(900), 'one');
    expect(short.usage.cache_creation_input_tokens).toBe(0);
    expect((await ask(long(900), 'one')).usage.cache_read_input_tokens).toBe(0);
    await ask(long(2000), 'one', null);
    expect((await ask(long(2000), 'two', eph)).usage.cache_read_input_tokens).toBe(0);
  });

  it('ignores where the marks are when matching: a mark moved later reads the earlier prefix (20 blocks back at most)', async () => {
    const system = long(2000);
    await ask(system, 'one');
    const later = await client().messages.create({
      model: 'claude-sonnet-5', max_tokens: 64, system: [{ type: 'text', text: system }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'and more', cache_control: eph }] }],
    });
    expect(later.usage.cache_read_input_tokens).toBe(mock.turns[0]!.usage.cache_creation_input_tokens);
    // 25 blocks later, with no mark in between, the earlier prefix is out of reach.
    const far = await client().messages.create({
      model: 'claude-sonnet-5', max_tokens: 64, system: [{ type: 'text', text: system, cache_control: eph }],
      messages: [{ role: 'user', content: [...Array.from({ length: 25 }, (_, i) => ({ type: 'text' as const, text: `block ${i}` })), { type: 'text', text: 'end', cache_control: eph }] }],
    });
    expect(far.usage.cache_read_input_tokens).toBeGreaterThan(2000); // through the system prompt's own mark
    const farOnly = await client().messages.create({
      model: 'claude-sonnet-5', max_tokens: 64, system: [{ type: 'text', text: system }],
      messages: [{ role: 'user', content: [...Array.from({ length: 25 }, (_, i) => ({ type: 'text' as const, text: `other ${i}` })), { type: 'text', text: 'end', cache_control: eph }] }],
    });
    expect(farOnly.usage.cache_read_input_tokens).toBe(0);
  });

  it('refuses more than 4 breakpoints with a 400', async () => {
    const five = Array.from({ length: 5 }, (_, i) => ({ type: 'text' as const, text: `part ${i}`, cache_control: eph }));
    const err = await client().messages.create({ model: 'claude-sonnet-5', max_tokens: 64, system: five, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('refuses a 1-hour mark after a 5-minute one, and bills 1-hour writes apart', async () => {
    const system = long(2000);
    const bad = await client().messages.create({
      model: 'claude-sonnet-5', max_tokens: 64, system: [{ type: 'text', text: system, cache_control: eph }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q', cache_control: hour }] }],
    }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    const good = await client().messages.create({
      model: 'claude-sonnet-5', max_tokens: 64, system: [{ type: 'text', text: system, cache_control: hour }],
      messages: [{ role: 'user', content: [{ type: 'text', text: long(300), cache_control: eph }] }],
    });
    const { ephemeral_1h_input_tokens: h, ephemeral_5m_input_tokens: m } = good.usage.cache_creation!;
    expect(h).toBeGreaterThan(2000);
    expect(m).toBeGreaterThan(300);
    expect(h + m).toBe(good.usage.cache_creation_input_tokens);
  });

  it('lets an entry expire its TTL after its last use', async () => {
    const system = long(2000);
    await ask(system, 'one');
    now += 4 * 60_000;
    expect((await ask(system, 'two')).usage.cache_read_input_tokens).toBeGreaterThan(0); // read: alive 5 more minutes
    now += 4 * 60_000;
    expect((await ask(system, 'three')).usage.cache_read_input_tokens).toBeGreaterThan(0);
    now += 5 * 60_000 + 1;
    const expired = await ask(system, 'four');
    expect(expired.usage.cache_read_input_tokens).toBe(0);
    expect(expired.usage.cache_creation_input_tokens).toBeGreaterThan(2000);
    // A 1-hour entry outlives that.
    await ask(long(3000), 'one', hour);
    now += 50 * 60_000;
    expect((await ask(long(3000), 'two', hour)).usage.cache_read_input_tokens).toBeGreaterThan(3000);
  });
});
