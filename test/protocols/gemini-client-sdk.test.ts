// The Gemini door's module against the real client: @google/genai talks to a loopback server that
// parses its requests with the door's parser and answers with the door's renderers (what the
// daemon will do once the door is wired). The SDK must read the answers, streams, function calls,
// signatures and errors as if Google had sent them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geminiClient } from '../../src/providers/protocols/gemini/client/index.js';
import type { RenderContext, Target } from '../../src/providers/ir/protocol.js';
import type { Request, Response, StreamEvent } from '../../src/providers/ir/types.js';
import { TranslationError } from '../../src/providers/types.js';

const target: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
const rctx: RenderContext = { model: 'anthropic/claude-sonnet-4-5', modelPrefix: 'anthropic/', created: 1767225600, fallbackId: 'gen-1', includeUsage: false };
const signatureState = { provider: 'anthropic', data: { signature: 'EqQBCkYIBxgC' } };

const answer: Response = {
  id: 'msg_01', choices: [{ index: 0, finish: 'tool-calls', parts: [
    { type: 'reasoning', text: 'Need the weather.', state: signatureState },
    { type: 'text', text: 'Checking.' },
    { type: 'tool-call', id: 'toolu_01Paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ] }],
  usage: { inputTokens: 50, outputTokens: 30, reasoningTokens: 10 },
};

const events: StreamEvent[] = [
  { type: 'start', id: 'msg_02', model: 'claude-sonnet-4-5-20250929' },
  { type: 'text', text: 'Bonjour' },
  { type: 'text', text: ' Paris.' },
  { type: 'finish', reason: 'stop', usage: { inputTokens: 8, outputTokens: 3 } },
];

let server: Server;
let ai: GoogleGenAI;
const seen: Request[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const stream = url.pathname.endsWith(':streamGenerateContent');
      const send = (status: number, type: string, body: string) => { res.writeHead(status, { 'content-type': type }); res.end(body); };
      let parsed: Request;
      try {
        parsed = geminiClient.parseRequest({ ...JSON.parse(Buffer.concat(chunks).toString('utf8')), ...(stream ? { stream: true } : {}) }, target);
      } catch (e) {
        const message = e instanceof TranslationError ? e.message : String(e);
        const { status, body } = geminiClient.renderError({ status: 400, kind: 'invalid_request', message });
        return send(status, 'application/json', JSON.stringify(body));
      }
      seen.push(parsed);
      if (url.pathname.includes('/models/limited:')) {
        const { status, body } = geminiClient.renderError({ status: 429, kind: 'rate_limit', message: 'Anthropic rate limit', retryAfter: '7' });
        return send(status, 'application/json', JSON.stringify(body));
      }
      if (!stream) return send(200, 'application/json', JSON.stringify(geminiClient.renderResponse(answer, rctx)));
      const failing = url.pathname.includes('/models/failing:');
      const r = geminiClient.createStreamRenderer(rctx);
      const list: StreamEvent[] = failing ? [events[0]!, events[1]!, { type: 'error', error: { status: 529, kind: 'overloaded', message: 'Overloaded' } }] : events;
      send(200, 'text/event-stream', list.map((e) => r.push(e)).join('') + r.end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ai = new GoogleGenAI({ apiKey: 'sk-proxy-test', httpOptions: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('@google/genai through the Gemini door', () => {
  it('sends a request the door parses, and reads the answer: text, a whole function call, usage, a signature to send back', async () => {
    const res = await ai.models.generateContent({
      model: 'claude-sonnet-4-5',
      contents: 'Weather in Paris?',
      config: {
        systemInstruction: 'Be brief.',
        temperature: 0.2,
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }],
      },
    });
    const req = seen.at(-1)!;
    expect(req.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(req.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] }]);
    expect(req).toMatchObject({ temperature: 0.2, stream: false, reasoning: { enabled: true, budgetTokens: 1024, includeText: true } });
    expect(req.tools.map((t) => t.name)).toEqual(['get_weather']);

    expect(res.text).toBe('Checking.');
    expect(res.functionCalls).toEqual([{ id: 'toolu_01Paris', name: 'get_weather', args: { city: 'Paris' } }]);
    expect(res.usageMetadata).toEqual({ promptTokenCount: 50, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 80 });
    expect(res.responseId).toBe('msg_01');
    expect(res.modelVersion).toBe('anthropic/claude-sonnet-4-5');

    // The SDK's next turn: the model's content as it got it, and the function's answer.
    await ai.models.generateContent({
      model: 'claude-sonnet-4-5',
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        res.candidates![0]!.content!,
        { role: 'user', parts: [{ functionResponse: { id: 'toolu_01Paris', name: 'get_weather', response: { output: '18°C' } } }] },
      ],
    });
    expect(seen.at(-1)!.messages.slice(1)).toEqual([
      { role: 'assistant', parts: answer.choices[0]!.parts },
      { role: 'user', parts: [{ type: 'tool-result', callId: 'toolu_01Paris', name: 'get_weather', content: [{ type: 'text', text: '18°C' }], plain: true, param: 'contents[2].parts[0].functionResponse' }] },
    ]);
  });

  it('streams over SSE: the SDK reads every chunk and the finish', async () => {
    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({ model: 'claude-sonnet-4-5', contents: 'Hi' })) chunks.push(chunk);
    expect(seen.at(-1)!.stream).toBe(true);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe('Bonjour Paris.');
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe('STOP');
    expect(chunks.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 3, totalTokenCount: 11 });
    expect(chunks.every((c) => c.responseId === 'msg_02')).toBe(true);
  });

  it('an error mid-stream reaches the SDK as an ApiError', async () => {
    const read = async () => {
      const texts: string[] = [];
      for await (const chunk of await ai.models.generateContentStream({ model: 'failing', contents: 'Hi' })) texts.push(chunk.text ?? '');
      return texts;
    };
    await expect(read()).rejects.toSatisfy((e: unknown) => e instanceof ApiError && e.status === 529 && /Overloaded/.test(e.message));
  });

  it('an error answer reaches the SDK as an ApiError with its status, a refused field names the field', async () => {
    await expect(ai.models.generateContent({ model: 'limited', contents: 'Hi' }))
      .rejects.toSatisfy((e: unknown) => e instanceof ApiError && e.status === 429 && /Anthropic rate limit/.test(e.message));
    await expect(ai.models.generateContent({ model: 'claude-sonnet-4-5', contents: 'Hi', config: { tools: [{ googleSearch: {} }] } }))
      .rejects.toSatisfy((e: unknown) => e instanceof ApiError && e.status === 400 && /tools\[0\]\.googleSearch/.test(e.message));
  });
});
