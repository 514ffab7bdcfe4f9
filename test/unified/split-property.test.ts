// Property, end to end: however a provider's SSE bytes are cut into network writes (including
// inside multi-byte characters and between \r and \n), the client receives the same unified stream.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { anthropicScript, geminiScript, openaiScript } from '../helpers/scripted-providers.js';
import type { MockHandler, Recorded } from '../helpers/mock-provider.js';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const CASES = [
  { provider: 'anthropic', model: 'anthropic/claude-opus-5', script: anthropicScript },
  { provider: 'gemini', model: 'gemini/gemini-3.5-flash', script: geminiScript },
  { provider: 'openai', model: 'openai/gpt-5.4', script: openaiScript },
] as const;

/** The scripted stream's bytes, whole. */
function fullStream(script: MockHandler, body: unknown, url: string): Buffer {
  const rec: Recorded = { method: 'POST', url, headers: {}, body: Buffer.from(JSON.stringify(body)), aborted: false, at: 0 };
  const reply = script(rec, 'openai')!;
  return Buffer.concat(reply.chunks!.map((c) => Buffer.from(c)));
}

function cut(bytes: Buffer, points: number[]): Buffer[] {
  const sorted = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...sorted, bytes.length]) { if (p > prev) out.push(bytes.subarray(prev, p)); prev = p; }
  return out;
}

/** What the client sees, with the per-request random id normalised. */
async function clientStream(model: string, tools: boolean): Promise<string> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${gw.key}` },
    body: JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Weather in Paris?' }], ...(tools ? { tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] } : {}) }),
  });
  expect(r.status).toBe(200);
  return (await r.text()).replace(/chatcmpl-[0-9a-f]{24}/g, 'chatcmpl-ID').replace(/"created":\d+/g, '"created":0');
}

describe.each(CASES)('$provider stream split anywhere', ({ provider, model, script }) => {
  for (const tools of [false, true]) {
    it(`gives identical output (${tools ? 'tool call' : 'text'})`, async () => {
      const mock = gw.mocks[provider];
      const upstreamUrl = provider === 'gemini' ? '/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse' : provider === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
      // The body the gateway sends decides the scripted answer; capture it once, whole.
      mock.setHandler(script);
      const reference = await clientStream(model, tools);
      const sent = JSON.parse(mock.requests.at(-1)!.body.toString());
      const bytes = fullStream(script, sent, upstreamUrl);
      expect(reference).toContain('data: [DONE]');
      await fc.assert(fc.asyncProperty(fc.array(fc.nat({ max: bytes.length }), { maxLength: 12 }), async (points) => {
        const pieces = cut(bytes, points);
        mock.setHandler(() => ({ headers: { 'content-type': 'text/event-stream' }, chunks: pieces, delayMs: 1 }));
        expect(await clientStream(model, tools)).toBe(reference);
      }), { numRuns: 15 });
      mock.setHandler(undefined);
    });
  }
});
