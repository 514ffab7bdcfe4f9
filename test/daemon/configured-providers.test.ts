// Providers added by the user (config.json descriptors) on every door and under their own native
// prefix: the official SDKs as clients, loopback mock servers per protocol behind base URLs that
// carry a path, and assertions on what each mock received — the path written once, its own key
// and no other, nothing at all for a provider that takes no key, never the proxy key.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredProviders } from '../../src/providers/configured.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MOCK_TEXT, startMockProvider, type MockProvider, type Recorded } from '../helpers/mock-provider.js';
import { closedPort } from '../helpers/ports.js';

let gw: TestGateway;
let router: MockProvider; // OpenAI Chat under /api (OpenRouter-like: base URL …/api/v1)
let box: MockProvider; // OpenAI Chat, base URL …/v1 (the http://host:4000/v1)
let anth: MockProvider; // Anthropic Messages under /anthropic (DeepSeek-, Z.ai-like)
let gem: MockProvider; // Gemini under /google
let local: MockProvider; // a local server that takes no key
let openai: OpenAI;
let anthropic: Anthropic;
let downPort = 0;

beforeAll(async () => {
  [router, box, anth, gem, local] = await Promise.all([
    startMockProvider('openai', { mount: '/api', key: 'sk-or-router-key-0123456789' }),
    startMockProvider('openai', { key: 'sk-box-key-0123456789' }),
    startMockProvider('anthropic', { mount: '/anthropic', key: 'sk-anth-like-key-0123456789' }),
    startMockProvider('gemini', { mount: '/google', key: 'gem-like-key-0123456789' }),
    startMockProvider('openai', { requireKey: false }),
  ]);
  downPort = await closedPort();
  const { providers, problems } = configuredProviders({
    router: { protocol: 'openai-chat', baseUrl: `${router.origin}/api/v1`, headers: { 'x-title': 'model-gateway test', 'http-referer': 'https://example.test' } },
    box: { protocol: 'openai-chat', baseUrl: `${box.origin}/v1` },
    'claude-like': { protocol: 'anthropic', baseUrl: `${anth.origin}/anthropic` },
    gem: { protocol: 'gemini', baseUrl: `${gem.origin}/google` },
    local: { protocol: 'openai-chat', baseUrl: `${local.origin}/v1`, noKey: true },
    fixed: { protocol: 'openai-chat', baseUrl: `${local.origin}/v1`, noKey: true, models: ['m-one', 'm-two'] },
    down: { protocol: 'openai-chat', baseUrl: `http://127.0.0.1:${downPort}/v1` },
    // Takes its key in a header of its own: a client's value there is a credential too.
    odd: { protocol: 'openai-chat', baseUrl: `http://127.0.0.1:${downPort}/v1`, auth: { header: 'x-odd-key' } },
  });
  expect(problems).toEqual([]);
  gw = await startTestGateway({
    secrets: staticSecrets({
      anthropic: 'real-anthropic-key-0123456789', openai: 'real-openai-key-0123456789', gemini: 'real-gemini-key-0123456789',
      router: router.key, box: box.key, 'claude-like': anth.key, gem: gem.key, down: 'sk-down-key-0123456789',
      // Stored for a provider added with --no-key: must never be sent.
      local: 'sk-must-never-leave-0123456789',
    }),
    settings: { providers, aliases: { fast: 'local/llama3.2:3b', deep: 'router/deepseek/deepseek-r1' } },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([router, box, anth, gem, local].map((m) => m?.close()));
});

const last = (m: MockProvider): Recorded => m.requests.at(-1)!;
const bodyOf = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'x-odd-key', 'proxy-authorization', 'cookie'];

describe('the Chat door (openai SDK) routes <name>/<model>', () => {
  it('the first segment names the provider, the rest is its model id, slashes included; the base URL path is written once', async () => {
    const r = await openai.chat.completions.create({ model: 'router/anthropic/claude-sonnet-4.5', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe(MOCK_TEXT);
    const up = last(router);
    expect(up.url).toBe('/api/v1/chat/completions');
    expect(bodyOf(up).model).toBe('anthropic/claude-sonnet-4.5');
    expect(up.headers.authorization).toBe(`Bearer ${router.key}`);
    expect(up.headers['x-title']).toBe('model-gateway test');
    expect(up.headers['http-referer']).toBe('https://example.test');
  });

  it('a stream, with a base URL ending in /v1: /v1/chat/completions, never /v1/v1/…', async () => {
    const stream = await openai.chat.completions.create({ model: 'box/qwen3:8b', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe(MOCK_TEXT);
    expect(last(box).url).toBe('/v1/chat/completions');
    expect(bodyOf(last(box)).model).toBe('qwen3:8b');
  });

  it('an Anthropic-protocol provider, translated, under its /anthropic base path', async () => {
    const r = await openai.chat.completions.create({ model: 'claude-like/glm-4.6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe(MOCK_TEXT);
    expect(r.model).toBe('claude-like/glm-4.6');
    expect(last(anth).url).toBe('/anthropic/v1/messages');
    expect(last(anth).headers['x-api-key']).toBe(anth.key);
    expect(last(anth).headers.authorization).toBeUndefined();
  });

  it('a Gemini-protocol provider, translated, under its /google base path', async () => {
    const r = await openai.chat.completions.create({ model: 'gem/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe(MOCK_TEXT);
    expect(last(gem).url).toBe('/google/v1beta/models/gemini-3.5-flash:generateContent');
    expect(last(gem).headers['x-goog-api-key']).toBe(gem.key);
  });

  it('aliases point at them', async () => {
    await openai.chat.completions.create({ model: 'deep', messages: [{ role: 'user', content: 'hi' }] });
    expect(bodyOf(last(router)).model).toBe('deepseek/deepseek-r1');
    await openai.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(bodyOf(last(local)).model).toBe('llama3.2:3b');
  });

  it('a provider that cannot be reached is a 502 naming it, in the door\'s shape', async () => {
    const err = await openai.chat.completions.create({ model: 'down/m', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((err as Error).message).toMatch(new RegExp(`cannot reach down at http://127.0.0.1:${downPort}`));
  });
});

describe('the Messages door (@anthropic-ai/sdk) routes <name>/<model>', () => {
  it('an Anthropic-protocol provider takes the fast path, its key in x-api-key', async () => {
    const msg = await anthropic.messages.create({ model: 'claude-like/glm-4.6', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    const up = last(anth);
    expect(up.url).toBe('/anthropic/v1/messages');
    expect(bodyOf(up).model).toBe('glm-4.6');
    expect(up.headers['x-api-key']).toBe(anth.key);
  });

  it('an OpenAI-Chat provider, translated, streamed', async () => {
    const texts: string[] = [];
    const stream = anthropic.messages.stream({ model: 'box/qwen3:8b', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    stream.on('text', (t) => texts.push(t));
    const msg = await stream.finalMessage();
    expect(texts.join('')).toBe(MOCK_TEXT);
    expect(msg.model).toBe('box/qwen3:8b');
    expect(last(box).url).toBe('/v1/chat/completions');
    expect(last(box).headers.authorization).toBe(`Bearer ${box.key}`);
  });
});

describe('the Responses door (openai SDK) routes <name>/<model>', () => {
  it('an OpenAI-Chat provider, translated, with the base URL path written once', async () => {
    const r = await openai.responses.create({ model: 'router/qwen/qwen3-coder', input: 'hi', store: false });
    expect(r.output_text).toBe(MOCK_TEXT);
    expect(last(router).url).toBe('/api/v1/chat/completions');
    expect(bodyOf(last(router)).model).toBe('qwen/qwen3-coder');
    expect(last(router).headers.authorization).toBe(`Bearer ${router.key}`);
  });
});

describe('native pass-through under /<name>/…', () => {
  it('is byte for byte both ways, onto a base URL with a path', async () => {
    const sent = '{"model" :  "deepseek/deepseek-r1",\n  "messages":[{"role":"user","content":"h\\u00e9"}] }';
    const answer = '{ "id":"gen-1","object":"chat.completion" ,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],\n"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}';
    router.setHandler((r) => (r.url.startsWith('/v1/chat/completions') ? { status: 200, headers: { 'content-type': 'application/json', 'x-upstream': 'router' }, body: answer } : undefined));
    try {
      const res = await fetch(`${gw.url}/router/v1/chat/completions?trace=1`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: sent });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-upstream')).toBe('router');
      expect(await res.text()).toBe(answer);
      const up = last(router);
      expect(up.url).toBe('/api/v1/chat/completions?trace=1');
      expect(up.body.toString('utf8')).toBe(sent);
      expect(up.headers.authorization).toBe(`Bearer ${router.key}`);
    } finally { router.setHandler(undefined); }
  });

  it('a stream goes through as it comes, and GET /<name>/v1/models reaches its models path', async () => {
    const res = await fetch(`${gw.url}/box/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'qwen3:8b', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text).toContain('data: [DONE]');
    expect(last(box).url).toBe('/v1/chat/completions');
    const models = await fetch(`${gw.url}/router/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(models.status).toBe(200);
    expect(last(router).url).toBe('/api/v1/models');
  });

  it('an Anthropic-protocol prefix takes the proxy key where the Anthropic SDK puts it, and keeps the query', async () => {
    const client = new Anthropic({ baseURL: `${gw.url}/claude-like`, apiKey: gw.key, maxRetries: 0 });
    const msg = await client.messages.create({ model: 'glm-4.6', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, { query: { beta: 'true' } });
    expect(msg.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    expect(last(anth).url).toBe('/anthropic/v1/messages?beta=true');
    expect(last(anth).headers['x-api-key']).toBe(anth.key);
  });

  it('refuses a request without a proxy key, in the protocol\'s shape, and sends nothing upstream', async () => {
    const before = router.requests.length;
    const res = await fetch(`${gw.url}/router/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${router.key}` }, body: '{}' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/sk-proxy-/);
    expect(router.requests.length).toBe(before);
  });
});

describe('a provider added with --no-key never receives a credential', () => {
  it('on a door and under its prefix, whatever the client sent', async () => {
    await openai.chat.completions.create({ model: 'local/llama3.2:3b', messages: [{ role: 'user', content: 'hi' }] });
    const res = await fetch(`${gw.url}/local/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'x-api-key': gw.key, 'api-key': gw.key, 'x-goog-api-key': gw.key, 'x-odd-key': gw.key, cookie: `k=${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama3.2:3b', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(local.requests.length).toBeGreaterThanOrEqual(2);
    for (const r of local.requests) for (const h of CREDENTIAL_HEADERS) expect(r.headers[h], `${h} on ${r.url}`).toBeUndefined();
  });
});

describe('GET /v1/models lists configured providers', () => {
  it('in OpenAI\'s shape: fetched lists and --models lists; one that does not answer is named, not fatal', async () => {
    const res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(res.status).toBe(200);
    // `odd` has no key, so it is not asked at all (no key is not "did not answer").
    expect(res.headers.get('x-gateway-models-unavailable')).toBe('down (ECONNREFUSED)');
    const ids = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['fast', 'deep', 'router/gpt-5.4', 'box/gpt-5.4', 'claude-like/claude-opus-5', 'gem/gemini-3.5-flash', 'fixed/m-one', 'fixed/m-two', 'local/gpt-5.4']));
    expect(ids.some((id) => id.startsWith('down/'))).toBe(false);
    // The openai SDK reads the same list.
    const listed: string[] = [];
    for await (const m of openai.models.list()) listed.push(m.id);
    expect(listed).toEqual(ids);
    expect(last(router).url).toBe('/api/v1/models');
  });

  it('in Anthropic\'s shape for Claude Code, with a model of a configured provider retrievable by name', async () => {
    const page = await anthropic.models.list();
    expect(page.data.map((m) => m.id)).toEqual(expect.arrayContaining(['box/gpt-5.4', 'claude-like/claude-opus-5']));
    const one = await openai.models.retrieve('fixed/m-two');
    expect(one.id).toBe('fixed/m-two');
  });
});

describe('credentials stay where they belong', () => {
  it('each mock only ever saw its own key, and none saw the proxy key', () => {
    const own: Array<[MockProvider, string | undefined]> = [[router, router.key], [box, box.key], [anth, anth.key], [gem, gem.key], [local, undefined]];
    const allKeys = [router.key, box.key, anth.key, gem.key, 'sk-must-never-leave-0123456789', 'real-openai-key-0123456789', 'real-anthropic-key-0123456789', 'real-gemini-key-0123456789'];
    for (const [mock, key] of own) {
      expect(mock.requests.length).toBeGreaterThan(0);
      for (const r of mock.requests) {
        const raw = JSON.stringify(r.headers) + r.url + r.body.toString('utf8');
        expect(raw).not.toContain('sk-proxy-');
        for (const other of allKeys) if (other !== key) expect(raw, `${other} reached ${mock.origin}`).not.toContain(other);
      }
    }
  });
});
