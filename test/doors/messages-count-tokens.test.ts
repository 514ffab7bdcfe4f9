// POST /v1/messages/count_tokens through the Anthropic SDK: Anthropic's own count for Claude models
// (fast path), Gemini's countTokens for Gemini models, and a marked estimate for OpenAI models,
// which have no counting endpoint.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let client: Anthropic;
beforeAll(async () => {
  gw = await startTestGateway();
  client = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
});
afterAll(async () => { await gw?.close(); });

const ask = { system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this sentence?' }] };

describe('count_tokens on the Messages door', () => {
  it('Claude: Anthropic counts, the model id stripped of its prefix', async () => {
    const r = await client.messages.countTokens({ model: 'anthropic/claude-opus-5', ...ask });
    expect(r.input_tokens).toBe(12);
    const up = gw.mocks.anthropic.requests.at(-1)!;
    expect(up.url).toBe('/v1/messages/count_tokens');
    expect(JSON.parse(up.body.toString())).toEqual({ model: 'claude-opus-5', ...ask });
  });

  it('Gemini: Gemini counts, through models/{m}:countTokens with the whole request', async () => {
    const r = await client.messages.countTokens({ model: 'gemini/gemini-3.5-flash', ...ask });
    expect(r.input_tokens).toBe(12);
    const up = gw.mocks.gemini.requests.at(-1)!;
    expect(up.url).toBe('/v1beta/models/gemini-3.5-flash:countTokens');
    expect(JSON.parse(up.body.toString()).generateContentRequest).toMatchObject({ model: 'models/gemini-3.5-flash', systemInstruction: { parts: [{ text: 'Be brief.' }] } });
  });

  it('OpenAI: an estimate, said to be one, and nothing sent upstream', async () => {
    const before = gw.mocks.openai.requests.length;
    const r = await fetch(`${gw.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'x-api-key': gw.key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.4', ...ask }) });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-gateway-token-count')).toBe('estimate');
    const { input_tokens } = (await r.json()) as { input_tokens: number };
    // "Be brief." + the question: 42 characters, about 4 per token.
    expect(input_tokens).toBe(Math.ceil(('Be brief.'.length + ask.messages[0]!.content.length) / 4));
    expect(gw.mocks.openai.requests.length).toBe(before);
  });
});
