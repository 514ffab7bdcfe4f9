// The `key` query parameter is a client credential on every native prefix: it never reaches a
// provider, in any casing or encoding, while every other parameter goes upstream byte for byte.
// Gemini's clients send the key that way, so /gemini takes it as the proxy key; /openai and
// /anthropic clients never do, so there it is only stripped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { MockProvider } from '../helpers/mock-provider.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const PREFIXES = {
  openai: { path: '/openai/v1/chat/completions', body: '{"model":"gpt-5.4","messages":[{"role":"user","content":"x"}]}', upstream: '/v1/chat/completions' },
  anthropic: { path: '/anthropic/v1/messages', body: '{"model":"claude-opus-5","max_tokens":5,"messages":[{"role":"user","content":"x"}]}', upstream: '/v1/messages' },
  gemini: { path: '/gemini/v1beta/models/gemini-3.5-flash:generateContent', body: '{"contents":[{"parts":[{"text":"x"}]}]}', upstream: '/v1beta/models/gemini-3.5-flash:generateContent' },
} as const;
type Prefix = keyof typeof PREFIXES;

const mock = (p: Prefix): MockProvider => gw.mocks[p];

async function post(p: Prefix, query: string, headers: Record<string, string> = { authorization: `Bearer ${gw.key}` }) {
  const r = await fetch(`${gw.url}${PREFIXES[p].path}?${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: PREFIXES[p].body });
  return { status: r.status, body: await r.text() };
}

/** Sends the request and returns the URL the provider received. */
async function upstreamUrl(p: Prefix, query: string): Promise<string> {
  const before = mock(p).requests.length;
  const r = await post(p, query);
  expect(r.status, r.body).toBe(200);
  expect(mock(p).requests.length).toBe(before + 1);
  return mock(p).requests.at(-1)!.url;
}

describe.each(Object.keys(PREFIXES) as Prefix[])('%s prefix', (p) => {
  it('drops ?key=<proxy key> and forwards the other parameters byte for byte', async () => {
    const url = await upstreamUrl(p, `beta=true&key=${gw.key}&x=a%2Bb+c&empty=&flag`);
    expect(url).toBe(`${PREFIXES[p].upstream}?beta=true&x=a%2Bb+c&empty=&flag`);
    expect(url).not.toContain('sk-proxy-');
  });

  it('drops the parameter in any casing and any encoding of its name', async () => {
    for (const name of ['KEY', 'Key', 'k%65y', '%4B%45%59', '%6b%65%79']) {
      const url = await upstreamUrl(p, `${name}=${encodeURIComponent(gw.key)}&alt=sse`);
      expect(url, name).toBe(`${PREFIXES[p].upstream}?alt=sse`);
    }
    // The only parameter: no dangling "?" either.
    expect(await upstreamUrl(p, `key=${gw.key}`)).toBe(PREFIXES[p].upstream);
  });

  it('refuses a proxy key left elsewhere in the query, sending nothing upstream', async () => {
    for (const query of [`q=${gw.key}`, `key%5B%5D=${gw.key}`, `alt=sse;key=${gw.key}`, `note=${encodeURIComponent(gw.key).replace('sk', '%73k')}`]) {
      const before = mock(p).requests.length;
      const r = await post(p, query);
      expect(r.status, query).toBe(400);
      expect(r.body).toContain('carries a proxy key');
      expect(r.body).not.toContain(gw.key);
      expect(mock(p).requests.length).toBe(before);
    }
  });
});

describe('which prefixes take ?key= as the credential', () => {
  it('/gemini does, in any casing of the name, like Google\'s own clients', async () => {
    for (const name of ['key', 'KEY']) {
      const r = await post('gemini', `${name}=${gw.key}&alt=sse`, {});
      expect(r.status, name).toBe(200);
      expect(mock('gemini').requests.at(-1)!.url).toBe('/v1beta/models/gemini-3.5-flash:generateContent?alt=sse');
      expect(mock('gemini').requests.at(-1)!.headers['x-goog-api-key']).toBe(mock('gemini').key);
    }
  });

  it('/openai and /anthropic do not (their clients never send it): 401, and nothing upstream', async () => {
    for (const p of ['openai', 'anthropic'] as const) {
      const before = mock(p).requests.length;
      const r = await post(p, `key=${gw.key}`, {});
      expect(r.status, p).toBe(401);
      expect(r.body).not.toContain(gw.key);
      expect(mock(p).requests.length).toBe(before);
    }
  });
});
