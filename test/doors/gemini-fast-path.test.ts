// The Gemini door's fast path: a Gemini model's request goes to Gemini as it came, byte for byte
// (the body, the method, the API version, the query less `key`), with only the key swapped and the
// model named as Gemini names it; Gemini's answer and streams come back byte for byte. The one
// change to a body: thought signatures the gateway minted for another provider are dropped.
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeThoughtSignature } from '../../src/providers/protocols/gemini/client/thought-signature.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { MockReply } from '../helpers/mock-provider.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const mock = () => gw.mocks.gemini;
const last = () => mock().requests.at(-1)!;
const post = (path: string, body: string, headers: Record<string, string> = { 'x-goog-api-key': gw.key }) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

/** Whatever the mock answers, the gateway must relay unchanged: odd spacing and key order included. */
const ANSWER = '{"candidates": [{"content": {"parts": [{"text": "Bonjour"}], "role": "model"}, "finishReason": "STOP", "index": 0}],\n "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 1, "totalTokenCount": 5}, "modelVersion": "gemini-3.5-flash", "responseId": "r-1"}';
const BODY = '{ "contents":[{"role":"user","parts":[{"text":"Hi"}]}],\n  "generationConfig": {"temperature": 0.5, "thinkingConfig": {"thinkingBudget": 0}} , "safetySettings": [] }';

function answering(reply: MockReply): void {
  mock().setHandler((r) => (r.headers['x-goog-api-key'] === mock().key ? reply : undefined));
}

describe('Gemini door → Gemini (fast path)', () => {
  it('the body and the answer byte for byte; only the key changes, and a `key` parameter is never forwarded', async () => {
    answering({ headers: { 'content-type': 'application/json; charset=UTF-8', 'x-gemini-trace': 't1' }, body: ANSWER });
    try {
      const r = await post(`/v1beta/models/gemini-3.5-flash:generateContent?key=${gw.key}&$alt=json`, BODY, {});
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(ANSWER);
      expect(r.headers.get('x-gemini-trace')).toBe('t1');
      const sent = last();
      expect(sent.url).toBe('/v1beta/models/gemini-3.5-flash:generateContent?$alt=json');
      expect(sent.body.equals(Buffer.from(BODY))).toBe(true);
      expect(sent.headers['x-goog-api-key']).toBe(mock().key);
      expect(JSON.stringify(sent.headers) + sent.url).not.toContain(gw.key);
    } finally { mock().setHandler(undefined); }
  });

  it('a prefixed model is named as Gemini names it, whichever form the path takes; the API version is kept', async () => {
    for (const [path, upstream] of [
      ['/v1beta/models/gemini/gemini-3.5-flash:generateContent', '/v1beta/models/gemini-3.5-flash:generateContent'],
      ['/v1beta/models/google%2Fgemini-3.5-flash:countTokens', '/v1beta/models/gemini-3.5-flash:countTokens'],
      ['/v1/models/gemini-3.5-flash:generateContent', '/v1/models/gemini-3.5-flash:generateContent'],
    ] as const) {
      const r = await post(path, BODY);
      expect(r.status, path).toBe(200);
      expect(last().url).toBe(upstream);
      expect(last().body.equals(Buffer.from(BODY))).toBe(true);
    }
  });

  it('streams: alt=sse kept and the SSE bytes relayed; without it, Gemini\'s JSON array relayed', async () => {
    const sse = ['data: {"candidates":[{"content":{"parts":[{"text":"Bon"}],"role":"model"},"index":0}]}\r\n\r\n', 'data: {"candidates":[{"content":{"parts":[{"text":"jour"}],"role":"model"},"finishReason":"STOP","index":0}]}\r\n\r\n'];
    answering({ headers: { 'content-type': 'text/event-stream' }, chunks: sse });
    try {
      const r = await post('/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse', BODY);
      expect(await r.text()).toBe(sse.join(''));
      expect(last().url).toBe('/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse');
    } finally { mock().setHandler(undefined); }
    const r = await post('/v1beta/models/gemini-3.5-flash:streamGenerateContent', BODY);
    const text = await r.text();
    expect(last().url).toBe('/v1beta/models/gemini-3.5-flash:streamGenerateContent');
    expect(text.startsWith('[')).toBe(true);
    expect((JSON.parse(text) as unknown[]).length).toBeGreaterThan(1);
  });

  it('@google/genai reads it all: generateContent, a stream, countTokens', async () => {
    const ai = new GoogleGenAI({ apiKey: gw.key, httpOptions: { baseUrl: gw.url } });
    const r = await ai.models.generateContent({ model: 'gemini-3.5-flash', contents: 'Hi' });
    expect(r.text).toBe('Hello from the mock provider.');
    expect(r.modelVersion).toBe('gemini-3.5-flash');
    const texts = [];
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-3.5-flash', contents: 'Hi' })) texts.push(c.text);
    expect(texts.join('')).toBe('Hello from the mock provider.');
    expect(last().url).toBe('/v1/models/gemini-3.5-flash:streamGenerateContent?alt=sse');
    expect((await ai.models.countTokens({ model: 'gemini-3.5-flash', contents: 'Hi' })).totalTokens).toBe(12);
  });

  it('a conversation moving to Gemini loses only the signatures another provider\'s state rode in', async () => {
    const ours = encodeThoughtSignature({ reasoning: [{ type: 'reasoning', text: 'thinking', state: { provider: 'anthropic', data: { signature: 'EqQB' } } }] });
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        { role: 'model', parts: [{ text: '', thought: true, thoughtSignature: ours }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQBGeminiOwn' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18°C' } } }] },
      ],
    };
    const r = await post('/v1beta/models/gemini-3.5-flash:generateContent', JSON.stringify(body));
    expect(r.status).toBe(200);
    const sent = JSON.parse(last().body.toString()) as typeof body;
    expect(sent.contents[1]!.parts).toEqual([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQBGeminiOwn' }]);
    expect(sent.contents[0]).toEqual(body.contents[0]);
    expect(sent.contents[2]).toEqual(body.contents[2]);
    expect(sent).not.toHaveProperty('model');
  });

  it('a model id that cannot be Gemini\'s never reaches an upstream path', async () => {
    const before = mock().requests.length;
    for (const path of ['/v1beta/models/gemini%2F..%2F..%2Fv1%2Ffiles:generateContent', '/v1beta/models/gemini/x/y:generateContent', '/v1beta/models/gemini/..:generateContent']) {
      const r = await post(path, BODY);
      expect(r.status, path).toBe(400);
      expect(await r.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    }
    expect(mock().requests.length).toBe(before);
  });

  it('a body that is not JSON goes to Gemini as it came, and Gemini\'s own 400 comes back; for a Claude model it is the gateway\'s 400, nothing upstream', async () => {
    const googles = '{"error": {"code": 400, "message": "Invalid JSON payload received.", "status": "INVALID_ARGUMENT"}}';
    answering({ status: 400, headers: { 'content-type': 'application/json; charset=UTF-8' }, body: googles });
    try {
      const r = await post('/v1beta/models/gemini-3.5-flash:generateContent', '{"contents": [');
      expect(r.status).toBe(400);
      expect(await r.text()).toBe(googles);
      expect(last().body.toString()).toBe('{"contents": [');
    } finally { mock().setHandler(undefined); }
    const before = gw.mocks.anthropic.requests.length;
    const r = await post('/v1beta/models/anthropic/claude-sonnet-4-5:generateContent', '{"contents": [');
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(/not valid JSON/) } });
    expect(gw.mocks.anthropic.requests.length).toBe(before);
  });
});
