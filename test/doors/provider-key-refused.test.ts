// A provider refusing the key the gateway holds gets one answer on every door, fast path and
// translated alike: a 401 in the door's own error shape, naming the provider and the command that
// fixes it, never the provider's own "invalid x-api-key" (which a client reads as its proxy key
// being wrong). The native prefixes still relay the provider's answer byte for byte.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  // Every provider key the daemon holds is wrong: each mock answers its provider's real refusal.
  gw = await startTestGateway({ providerKeys: { anthropic: 'sk-ant-wrong', openai: 'sk-wrong', gemini: 'wrong-gemini' } });
});
afterAll(async () => { await gw?.close(); });

const MODELS = [
  { model: 'anthropic/claude-opus-5', provider: 'anthropic', name: 'Anthropic' },
  { model: 'openai/gpt-5.4', provider: 'openai', name: 'OpenAI' },
  { model: 'gemini/gemini-3.5-flash', provider: 'gemini', name: 'Gemini' },
] as const;

const fixHint = (m: (typeof MODELS)[number]) => new RegExp(`${m.name} rejected the API key stored in the gateway[\\s\\S]*gateway providers set ${m.provider}`);

describe.each(MODELS)('the daemon holds a wrong $name key', (m) => {
  for (const stream of [false, true]) {
    it(`Chat door${stream ? ', streamed' : ''}: 401 in OpenAI's shape naming the fix`, async () => {
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
      const err = await client.chat.completions.create({ model: m.model, stream, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
      expect((err as Error).message).toMatch(fixHint(m));
    });

    it(`Messages door${stream ? ', streamed' : ''}: 401 in Anthropic's shape naming the fix`, async () => {
      const client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
      const err = await client.messages.create({ model: m.model, max_tokens: 16, stream, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      const body = (err as InstanceType<typeof Anthropic.AuthenticationError>).error as { type: string; error: { type: string; message: string } };
      expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      expect(body.error.message).toMatch(fixHint(m));
      expect(body.error.message).not.toMatch(/^invalid x-api-key$/);
    });
  }

  it('Responses door: 401 in OpenAI\'s shape naming the fix', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const err = await client.responses.create({ model: m.model, input: 'hi' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as Error).message).toMatch(fixHint(m));
  });

  it('Gemini door: 401 in Google\'s shape naming the fix', async () => {
    const r = await fetch(`${gw.url}/v1beta/models/${m.model}:generateContent`, {
      method: 'POST', headers: { 'x-goog-api-key': gw.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(r.status).toBe(401);
    const body = (await r.json()) as { error: { code: number; status: string; message: string } };
    expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect(body.error.message).toMatch(fixHint(m));
  });
});

it('the Gemini SDK on a Gemini model sees the same 401 (fast path)', async () => {
  const ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
  const err = await ai.models.generateContent({ model: 'gemini-3.5-flash', contents: 'hi' }).then(() => undefined, (e: unknown) => e);
  expect(String((err as Error).message)).toMatch(/Gemini rejected the API key stored in the gateway/);
});

it('the native prefixes keep the provider\'s own answer, byte for byte', async () => {
  const r = await fetch(`${gw.url}/anthropic/v1/messages`, {
    method: 'POST', headers: { 'x-api-key': gw.key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(r.status).toBe(401);
  expect(await r.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: 'req_mock' });
});
