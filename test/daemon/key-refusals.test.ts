// A bad proxy key on /v1 and /openai is refused the way OpenAI refuses a bad API key, so OpenAI's
// clients recognise it: LiteLLM maps a 401 whose text has "invalid_request_error" but not
// "Incorrect API key provided" to BadRequestError instead of AuthenticationError. The message
// names the proxy key, points at `gateway keys list`, and shows at most a masked form of the key.
import OpenAI, { AuthenticationError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const OPENAI_SHAPED = {
  unified: { path: '/v1/chat/completions', body: '{"model":"gpt-5.4","messages":[{"role":"user","content":"x"}]}', baseURL: '/v1' },
  openai: { path: '/openai/v1/chat/completions', body: '{"model":"gpt-5.4","messages":[{"role":"user","content":"x"}]}', baseURL: '/openai/v1' },
} as const;
type Ep = keyof typeof OPENAI_SHAPED;

async function call(ep: Ep, key: string | undefined): Promise<{ status: number; text: string; error: Record<string, unknown> }> {
  const r = await fetch(`${gw.url}${OPENAI_SHAPED[ep].path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) }, body: OPENAI_SHAPED[ep].body,
  });
  const text = await r.text();
  return { status: r.status, text, error: (JSON.parse(text) as { error: Record<string, unknown> }).error };
}

/** LiteLLM's rule for an OpenAI-compatible 401 (litellm_core_utils/exception_mapping_utils.py). */
const liteLlmSeesBadRequest = (text: string) => text.includes('invalid_request_error') && !text.includes('Incorrect API key provided');

/** No run of the key longer than its first 9 or last 4 characters appears in `text`. */
function expectAtMostMasked(text: string, key: string): void {
  expect(text).not.toContain(key.slice(0, 10));
  expect(text).not.toContain(key.slice(-5));
  if (key.length > 13) expect(text).not.toContain(key.slice(9, -4));
}

describe.each(Object.keys(OPENAI_SHAPED) as Ep[])('%s endpoint', (ep) => {
  it('an unknown proxy key: OpenAI\'s wrong-key 401, with the key masked', async () => {
    const key = `sk-proxy-${'Q'.repeat(30)}wxyz`;
    const r = await call(ep, key);
    expect(r.status).toBe(401);
    expect(r.error).toEqual({
      message: 'Incorrect API key provided: sk-proxy-…wxyz. This is an unknown proxy key. You can find your proxy keys with `gateway keys list`.',
      type: 'invalid_request_error', param: null, code: 'invalid_api_key',
    });
    expectAtMostMasked(r.text, key);
    expect(liteLlmSeesBadRequest(r.text)).toBe(false);
  });

  it('a provider key sent instead, a short made-up key, a revoked and an expired key: all worded as a wrong key', async () => {
    const provider = `sk-ant-api03-${'A'.repeat(40)}Zk9q`;
    const p = await call(ep, provider);
    expect(p.status).toBe(401);
    expect(p.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key', message: expect.stringMatching(/^Incorrect API key provided: …Zk9q\. This is not a proxy key/) });
    expectAtMostMasked(p.text, provider);

    const short = await call(ep, 'sk-proxy-nope');
    expect(short.error.message).toMatch(/^Incorrect API key provided: …\. /);
    expect(short.text).not.toContain('nope');

    const revoked = gw.keys.create({ name: `revoked-${ep}` });
    gw.keys.revoke(revoked.record.id);
    const expired = gw.keys.create({ name: `expired-${ep}`, expiresAt: new Date(Date.now() - 1000) });
    await gw.daemon.reload();
    for (const [k, code, why] of [[revoked.key, 'key_revoked', 'has been revoked'], [expired.key, 'key_expired', 'expired at']] as const) {
      const r = await call(ep, k);
      expect(r.status).toBe(401);
      expect(r.error).toMatchObject({ type: 'invalid_request_error', code, message: expect.stringMatching(new RegExp(`^Incorrect API key provided: sk-proxy-…${k.slice(-4)}\\. Proxy key "[a-z]+-${ep}" ${why}`)) });
      expect(String(r.error.message)).toContain('gateway keys list');
      expectAtMostMasked(r.text, k);
      expect(liteLlmSeesBadRequest(r.text)).toBe(false);
    }
  });

  it('no key: OpenAI\'s "You didn\'t provide an API key" 401', async () => {
    const r = await call(ep, undefined);
    expect(r.status).toBe(401);
    expect(r.error).toMatchObject({ type: 'invalid_request_error', code: 'missing_api_key', param: null, message: expect.stringMatching(/^You didn't provide an API key\b.*Authorization: Bearer sk-proxy-….*gateway keys list/) });
  });

  it('the official SDK raises AuthenticationError with that message', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}${OPENAI_SHAPED[ep].baseURL}`, apiKey: `sk-proxy-${'Z'.repeat(30)}abcd`, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error' });
    expect((err as Error).message).toContain('Incorrect API key provided: sk-proxy-…abcd');
  });
});

describe('the other prefixes keep their own protocol\'s words', () => {
  it('/anthropic and /gemini say "unknown proxy key" without OpenAI\'s wording', async () => {
    const a = await fetch(`${gw.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': `sk-proxy-${'Q'.repeat(30)}wxyz` }, body: '{}' });
    expect(a.status).toBe(401);
    expect(await a.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'unknown proxy key (see: gateway keys list)' } });
    const g = await fetch(`${gw.url}/gemini/v1beta/models/gemini-3.5-flash:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': `sk-proxy-${'Q'.repeat(30)}wxyz` }, body: '{}' });
    expect(g.status).toBe(401);
    expect(await g.json()).toEqual({ error: { code: 401, message: 'unknown proxy key (see: gateway keys list)', status: 'UNAUTHENTICATED' } });
  });
});
