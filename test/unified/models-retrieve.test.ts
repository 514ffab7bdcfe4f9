// GET /v1/models/{model}: the SDKs' models.retrieve, answered in OpenAI's model-object shape for
// any name a chat request could use, and with OpenAI's 404 `model_not_found` for anything else.
import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let client: OpenAI;
beforeAll(async () => {
  gw = await startTestGateway({ settings: { bodyLimitBytes: 1024 * 1024, aliases: { fast: 'gemini/gemini-3.5-flash', 'team/best': 'anthropic/claude-opus-5' } } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const get = async (path: string, key = gw.key) => {
  const r = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, json: (await r.json()) as any };
};

describe('models.retrieve', () => {
  it('the official SDK retrieves a provider-prefixed id (it sends the slash encoded)', async () => {
    const m = await client.models.retrieve('anthropic/claude-opus-5');
    expect(m).toEqual({ id: 'anthropic/claude-opus-5', object: 'model', created: Date.parse('2026-07-24T00:00:00Z') / 1000, owned_by: 'anthropic' });
    const g = await client.models.retrieve('gemini/gemini-3.5-flash');
    expect(g).toMatchObject({ id: 'gemini/gemini-3.5-flash', object: 'model', owned_by: 'google' });
  });

  it('takes the slash raw or encoded in any case, and a bare well-known id under the name asked for', async () => {
    for (const path of ['/v1/models/anthropic/claude-opus-5', '/v1/models/anthropic%2Fclaude-opus-5', '/v1/models/anthropic%2fclaude-opus-5']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.json).toMatchObject({ id: 'anthropic/claude-opus-5', object: 'model', owned_by: 'anthropic' });
    }
    const bare = await get('/v1/models/gpt-5.4');
    expect(bare).toEqual({ status: 200, json: { id: 'gpt-5.4', object: 'model', created: 1767225600, owned_by: 'openai' } });
    expect((await get('/v1/models/google%2Fgemini-3.5-flash')).json).toMatchObject({ id: 'google/gemini-3.5-flash', owned_by: 'google' });
  });

  it('retrieves aliases, even one with a slash in its name', async () => {
    expect(await client.models.retrieve('fast')).toEqual({ id: 'fast', object: 'model', created: 0, owned_by: 'alias' });
    expect(await client.models.retrieve('team/best')).toEqual({ id: 'team/best', object: 'model', created: 0, owned_by: 'alias' });
  });

  it('an id no alias or provider list knows: OpenAI\'s 404 model_not_found, which the SDK raises as NotFoundError', async () => {
    for (const id of ['gpt-9', 'anthropic/claude-none', 'no-such-model', 'gemini/text-embedding-004']) {
      const r = await get(`/v1/models/${encodeURIComponent(id)}`);
      expect(r.status, id).toBe(404);
      expect(r.json).toEqual({ error: { message: expect.stringContaining(`The model \`${id}\` does not exist`), type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
    }
    const err = await client.models.retrieve('gpt-9').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('needs a proxy key, like the list', async () => {
    const r = await get('/v1/models/gpt-5.4', 'sk-proxy-not-a-real-key-at-all');
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('invalid_api_key');
  });
});
