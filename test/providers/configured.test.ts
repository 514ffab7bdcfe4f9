// Configured providers as data: the base-URL path rule (never /v1/v1), what a stored entry may
// hold (never a credential), every preset turning into a valid provider, and the registry lookups
// seeing configured providers beside the built-ins.
import { afterEach, describe, expect, it } from 'vitest';
import { configuredProviders, keyEnvFor, parseHeaderPairs, toDescriptor, validateProviderName, validateStoredProvider } from '../../src/providers/configured.js';
import { findPreset, PRESETS, presetBaseUrl } from '../../src/providers/presets.js';
import { findProvider, joinBasePath, providerForFamily, setConfiguredProviders, splitProviderPrefix, upstreamPath } from '../../src/providers/registry.js';
import { resolveModel } from '../../src/providers/models.js';
import { buildPriceTable, requestCost } from '../../src/daemon/observe/usage/prices.js';

afterEach(() => setConfiguredProviders([]));

describe('a base URL path is written once', () => {
  const cases: Array<[string, string, string, string]> = [
    // protocol, base URL path, protocol path, upstream path
    ['openai-chat', '/v1', '/v1/chat/completions', '/v1/chat/completions'],
    ['openai-chat', '/v1/', '/v1/chat/completions', '/v1/chat/completions'],
    ['openai-chat', '', '/v1/chat/completions', '/v1/chat/completions'],
    ['openai-chat', '/api/v1', '/v1/chat/completions', '/api/v1/chat/completions'],
    ['openai-chat', '/openai/v1', '/v1/models', '/openai/v1/models'],
    ['openai-chat', '/api/paas/v4', '/v1/chat/completions', '/api/paas/v4/chat/completions'],
    ['openai-chat', '/v1beta/openai', '/v1/chat/completions', '/v1beta/openai/chat/completions'],
    ['openai-responses', '/inference/v1', '/v1/responses?x=1', '/inference/v1/responses?x=1'],
    ['anthropic', '/anthropic', '/v1/messages', '/anthropic/v1/messages'],
    ['anthropic', '/anthropic/v1', '/v1/messages?beta=true', '/anthropic/v1/messages?beta=true'],
    ['anthropic', '/api/anthropic', '/v1/messages/count_tokens', '/api/anthropic/v1/messages/count_tokens'],
    ['gemini', '/google', '/v1beta/models/g:streamGenerateContent?alt=sse', '/google/v1beta/models/g:streamGenerateContent?alt=sse'],
    ['gemini', '/google/v1beta', '/v1beta/models/g:generateContent', '/google/v1beta/models/g:generateContent'],
  ];
  it.each(cases)('%s: base path %j + %s → %s', (protocol, basePath, path, expected) => {
    expect(upstreamPath({ protocol: protocol as 'openai-chat', basePath }, path)).toBe(expected);
  });

  it('the overlap is whole segments only: /x/v1 + /v10/… keeps both', () => {
    expect(joinBasePath('/x/v1', '/v10/a', undefined)).toBe('/x/v1/v10/a');
    expect(joinBasePath('/a/b', '/b/c', undefined)).toBe('/a/b/c');
  });
});

describe('a stored provider holds no credential and a name of its own', () => {
  it('refuses credential headers, headers the gateway owns, and bad values', () => {
    for (const h of ['Authorization=Bearer x', 'x-api-key=k', 'api-key=k', 'X-Goog-Api-Key=k', 'cookie=a=b']) expect(() => parseHeaderPairs([h])).toThrow(/credential/);
    expect(() => parseHeaderPairs(['host=evil'])).toThrow(/set by the gateway/);
    expect(() => parseHeaderPairs(['novalue'])).toThrow(/Name=value/);
    expect(parseHeaderPairs(['HTTP-Referer=https://example.com', 'X-Title=My app'])).toEqual({ 'http-referer': 'https://example.com', 'x-title': 'My app' });
  });

  it('refuses the built-in names, the paths the daemon serves, and odd names', () => {
    expect(() => validateProviderName('openai')).toThrow(/built-in OpenAI/);
    expect(() => validateProviderName('google')).toThrow(/built-in Gemini/);
    for (const n of ['v1', 'admin', 'dashboard', 'healthz', 'all']) expect(() => validateProviderName(n)).toThrow(/reserved/);
    for (const n of ['Ollama', 'my_box', '1abc', 'a/b', '']) expect(() => validateProviderName(n)).toThrow(/lowercase/);
    expect(validateProviderName('deepseek-anthropic')).toBe('deepseek-anthropic');
  });

  it('refuses a base URL with credentials, a query or another scheme', () => {
    const bad = ['ftp://x/v1', 'http://user:pw@host/v1', 'http://host/v1?key=abc', 'not a url'];
    for (const baseUrl of bad) expect(() => validateStoredProvider('x', { protocol: 'openai-chat', baseUrl })).toThrow();
  });

  it('keeps the good entries of a section and reports the bad ones', () => {
    const r = configuredProviders({
      box: { protocol: 'openai-chat', baseUrl: 'http://10.0.0.5:4000/v1/' },
      bad: { protocol: 'smtp', baseUrl: 'http://x' },
      openai: { protocol: 'openai-chat', baseUrl: 'http://x' },
    });
    expect(r.providers.map((p) => p.id)).toEqual(['box']);
    expect(r.stored.box!.baseUrl).toBe('http://10.0.0.5:4000/v1');
    expect(r.problems).toEqual([expect.stringMatching(/providers\.bad: .*protocol/), expect.stringMatching(/providers\.openai: .*built-in/)]);
  });

  it('a descriptor: key under its name, GATEWAY_<NAME>_API_KEY, no auth when it takes no key, local when on loopback', () => {
    const d = toDescriptor('deep-seek', { protocol: 'openai-chat', baseUrl: 'https://api.deepseek.com' });
    expect(d).toMatchObject({ id: 'deep-seek', keychainAccount: 'deep-seek', keyEnv: 'GATEWAY_DEEP_SEEK_API_KEY', origin: 'https://api.deepseek.com', basePath: '', auth: { header: 'authorization', scheme: 'Bearer' }, local: false });
    expect(keyEnvFor('ollama')).toBe('GATEWAY_OLLAMA_API_KEY');
    expect(toDescriptor('o', { protocol: 'openai-chat', baseUrl: 'http://10.1.1.1:11434/v1', noKey: true })).toMatchObject({ auth: null, local: true });
    expect(toDescriptor('v', { protocol: 'openai-chat', baseUrl: 'http://localhost:8000/v1' })).toMatchObject({ local: true, basePath: '/v1' });
    expect(toDescriptor('a', { protocol: 'anthropic', baseUrl: 'https://api.z.ai/api/anthropic' })).toMatchObject({ auth: { header: 'x-api-key' }, basePath: '/api/anthropic' });
  });
});

describe('presets', () => {
  it.each(PRESETS.map((p) => [p.id]))('%s becomes a valid provider', (id) => {
    const p = findPreset(id)!;
    const baseUrl = presetBaseUrl(p, { resource: 'myres' });
    const s = validateStoredProvider(id, { protocol: p.protocol, baseUrl, ...(p.noKey ? { noKey: true } : {}), ...(p.auth ? { auth: p.auth } : {}), ...(p.quirks ? { quirks: p.quirks } : {}) });
    expect(toDescriptor(id, s).origin).toMatch(/^https?:\/\//);
  });

  it('azure needs its resource and sends the key as api-key', () => {
    const azure = findPreset('azure')!;
    expect(() => presetBaseUrl(azure, {})).toThrow(/--resource/);
    expect(presetBaseUrl(azure, { resource: 'contoso' })).toBe('https://contoso.openai.azure.com/openai/v1');
    expect(azure.auth).toEqual({ header: 'api-key' });
  });

  it('llamacpp does not collide with the gateway\'s own port 8080', () => {
    expect(new URL(findPreset('llamacpp')!.baseUrl).port).not.toBe('8080');
  });

  it('a provider with an Anthropic endpoint too has a preset for each', () => {
    for (const id of ['deepseek', 'moonshot', 'zai', 'minimax']) {
      expect(findPreset(id)!.protocol).toBe('openai-chat');
      expect(findPreset(`${id}-anthropic`)!.protocol).toBe('anthropic');
    }
  });
});

describe('the registry sees configured providers', () => {
  it('routes <name>/<model> with the rest as the model id, slashes included; never by family', () => {
    setConfiguredProviders(configuredProviders({
      openrouter: { protocol: 'openai-chat', baseUrl: 'https://openrouter.ai/api/v1' },
      ollama: { protocol: 'openai-chat', baseUrl: 'http://localhost:11434/v1', noKey: true },
    }).providers);
    expect(resolveModel('openrouter/anthropic/claude-sonnet-4.5')).toEqual({ provider: 'openrouter', model: 'anthropic/claude-sonnet-4.5' });
    expect(resolveModel('OLLAMA/qwen3:8b')).toEqual({ provider: 'ollama', model: 'qwen3:8b' });
    expect(resolveModel('fast', { fast: 'ollama/qwen3:8b' })).toEqual({ provider: 'ollama', model: 'qwen3:8b', alias: 'fast' });
    expect(splitProviderPrefix('anthropic/claude-x')!.provider.id).toBe('anthropic');
    expect(providerForFamily('qwen3:8b')).toBeUndefined();
    expect(() => resolveModel('nobody/x')).toThrow(/"openrouter\/<model>", "ollama\/<model>"/);
  });

  it('a removed provider is gone from every lookup', () => {
    setConfiguredProviders(configuredProviders({ box: { protocol: 'openai-chat', baseUrl: 'http://h/v1' } }).providers);
    expect(findProvider('box')).toBeDefined();
    setConfiguredProviders([]);
    expect(findProvider('box')).toBeUndefined();
    expect(() => resolveModel('box/m')).toThrow(/does not name a provider/);
  });

  it('a local provider costs 0; an unpriced remote model is unpriced, never guessed', () => {
    setConfiguredProviders(configuredProviders({
      ollama: { protocol: 'openai-chat', baseUrl: 'http://localhost:11434/v1', noKey: true },
      deepseek: { protocol: 'openai-chat', baseUrl: 'https://api.deepseek.com' },
    }).providers);
    const { table } = buildPriceTable({ models: {} });
    const usage = { inputTokens: 1000, outputTokens: 1000 };
    expect(requestCost(table, 'ollama', 'qwen3:8b', usage, 200)).toBe(0);
    expect(requestCost(table, 'deepseek', 'deepseek-chat', usage, 200)).toBeNull();
    const priced = buildPriceTable({ models: {} }, { 'deepseek/deepseek-chat': { input: 0.28, output: 0.42 } });
    expect(priced.problems).toEqual([]);
    expect(requestCost(priced.table, 'deepseek', 'deepseek-chat', usage, 200)).toBeCloseTo(0.0007, 10);
  });
});
