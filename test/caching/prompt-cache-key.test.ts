// OpenAI's cache routing for clients that name a session: a request reaching OpenAI carries a
// prompt_cache_key derived from the session (Claude Code's x-claude-code-session-id, Codex's
// session_id, an explicit x-gateway-session), the same on every turn, a hash rather than the id;
// a client's own key is left as it is; translated and fast paths alike.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CACHE } from '../../src/daemon/caching/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });
beforeEach(() => { gw.daemon.ctx.settings.cache = DEFAULT_CACHE; });

const sent = (from: number) => gw.mocks.openai.requests.slice(from).map((r) => ({ url: r.url, raw: r.body.toString('utf8'), body: JSON.parse(r.body.toString('utf8')) as Record<string, any> }));
const KEY = /^gateway-[0-9a-f]{32}$/;

describe('a GPT model from the Messages door, with Claude Code\'s session header', () => {
  const claude = (session?: string, key = gw.key) => new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0, defaultHeaders: session ? { 'x-claude-code-session-id': session } : {} });
  const turn = (c: Anthropic, text: string) => c.messages.create({ model: 'openai/gpt-5.4', max_tokens: 64, messages: [{ role: 'user', content: text }] });

  it('carries one stable prompt_cache_key across turns: a hash, not the session id; another session, another key', async () => {
    const from = gw.mocks.openai.requests.length;
    const session = 'c0ffee00-1111-4222-8333-444455556666';
    await turn(claude(session), 'first');
    await turn(claude(session), 'second');
    await turn(claude('another-session'), 'third');
    await turn(claude(), 'no session');
    const [a, b, c, none] = sent(from);
    expect(a!.body.prompt_cache_key).toMatch(KEY);
    expect(b!.body.prompt_cache_key).toBe(a!.body.prompt_cache_key);
    expect(a!.raw).not.toContain(session);
    expect(c!.body.prompt_cache_key).toMatch(KEY);
    expect(c!.body.prompt_cache_key).not.toBe(a!.body.prompt_cache_key);
    expect(none!.body).not.toHaveProperty('prompt_cache_key');
  });

  it('is another key for another proxy key naming the same session', async () => {
    const other = gw.keys.create({ name: 'other' }).key;
    await gw.daemon.reload();
    const from = gw.mocks.openai.requests.length;
    await turn(claude('shared-session'), 'mine');
    await turn(claude('shared-session', other), 'theirs');
    const [mine, theirs] = sent(from);
    expect(mine!.body.prompt_cache_key).toMatch(KEY);
    expect(theirs!.body.prompt_cache_key).toMatch(KEY);
    expect(theirs!.body.prompt_cache_key).not.toBe(mine!.body.prompt_cache_key);
  });

  it('is not sent when config.json turns it off', async () => {
    gw.daemon.ctx.settings.cache = { ...DEFAULT_CACHE, promptCacheKey: false };
    const from = gw.mocks.openai.requests.length;
    await turn(claude('s-off'), 'hello');
    expect(sent(from)[0]!.body).not.toHaveProperty('prompt_cache_key');
  });
});

describe('the OpenAI doors\' fast paths', () => {
  const openai = (headers: Record<string, string> = {}) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0, defaultHeaders: headers });

  it('a Chat request naming a session (x-gateway-session) gets the key; one with its own goes byte for byte', async () => {
    const from = gw.mocks.openai.requests.length;
    await openai({ 'x-gateway-session': 'chat-session' }).chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] });
    await openai({ 'x-gateway-session': 'chat-session' }).chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'again' }] });
    const own = { model: 'gpt-5.4', messages: [{ role: 'user', content: 'mine' }], prompt_cache_key: 'client-key' };
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'x-gateway-session': 'chat-session' }, body: JSON.stringify(own) });
    expect(r.status).toBe(200);
    const [a, b, c] = sent(from);
    expect(a!.body.prompt_cache_key).toMatch(KEY);
    expect(b!.body.prompt_cache_key).toBe(a!.body.prompt_cache_key);
    expect(c!.raw).toBe(JSON.stringify(own));
  });

  it('a Responses request with Codex\'s session_id header gets the key; Codex\'s own prompt_cache_key is kept', async () => {
    const from = gw.mocks.openai.requests.length;
    await openai({ session_id: 'codex-session' }).responses.create({ model: 'gpt-5.4', input: 'hi', store: false });
    await openai({ session_id: 'codex-session' }).responses.create({ model: 'gpt-5.4', input: 'hi', store: false, prompt_cache_key: 'codex-own' });
    const [derived, own] = sent(from);
    expect(derived!.url).toBe('/v1/responses');
    expect(derived!.body.prompt_cache_key).toMatch(KEY);
    expect(own!.body.prompt_cache_key).toBe('codex-own');
  });

  it('a Chat request for a model OpenAI serves only by Responses (translated) keeps the client\'s key, or gets the session\'s', async () => {
    const from = gw.mocks.openai.requests.length;
    await openai().chat.completions.create({ model: 'gpt-5.4-pro', messages: [{ role: 'user', content: 'hi' }], prompt_cache_key: 'client-key' });
    await openai({ 'x-gateway-session': 'pro-session' }).chat.completions.create({ model: 'gpt-5.4-pro', messages: [{ role: 'user', content: 'hi' }] });
    const [own, derived] = sent(from);
    expect(own!.url).toBe('/v1/responses');
    expect(own!.body.prompt_cache_key).toBe('client-key');
    expect(derived!.body.prompt_cache_key).toMatch(KEY);
  });

  it('a request without a session, and without a key of its own, goes without one', async () => {
    const from = gw.mocks.openai.requests.length;
    await openai().chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] });
    expect(sent(from)[0]!.body).not.toHaveProperty('prompt_cache_key');
  });
});
