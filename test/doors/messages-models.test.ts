// Model discovery as Claude Code does it: GET /v1/models with `anthropic-version` answers in
// Anthropic's shape (Anthropic's models under their own ids, the others as provider/<id>), and the
// same path without it stays OpenAI's list.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway({ settings: { bodyLimitBytes: 1 << 20, aliases: { fast: 'gemini/gemini-3.5-flash' } } }); });
afterAll(async () => { await gw?.close(); });

describe('GET /v1/models for Anthropic clients', () => {
  it('lists every provider\'s models in Anthropic\'s shape through the Anthropic SDK', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) {
      expect(m.type).toBe('model');
      expect(typeof m.created_at).toBe('string');
      ids.push(m.id);
    }
    expect(ids).toEqual(expect.arrayContaining(['fast', 'claude-opus-5', 'openai/gpt-5.4', 'gemini/gemini-3.5-flash']));
  });

  it('retrieves one model, by its own id or provider/id', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    expect((await client.models.retrieve('claude-opus-5')).id).toBe('claude-opus-5');
    expect((await client.models.retrieve('openai/gpt-5.4')).id).toBe('openai/gpt-5.4');
    const err = await client.models.retrieve('openai/no-such-model').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('takes the key as x-api-key there, and refuses a bad one in Anthropic\'s shape', async () => {
    const r = await fetch(`${gw.url}/v1/models`, { headers: { 'x-api-key': 'sk-proxy-wrong-000000000000000000', 'anthropic-version': '2023-06-01' } });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('without anthropic-version the list stays OpenAI\'s', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const ids = (await client.models.list()).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['anthropic/claude-opus-5', 'openai/gpt-5.4']));
  });
});
