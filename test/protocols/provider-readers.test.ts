// The provider sides of the hub on recorded streams: OpenAI Chat chunks and Gemini SSE fragments
// read into IR events (exact expectations for OpenAI; the Gemini recordings of test/fixtures/gemini
// checked through what a Messages client would get), the same events however the bytes are split,
// and the provider requests built from the IR.
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/daemon/http/sse.js';
import type { ProviderProtocol, Target } from '../../src/providers/ir/protocol.js';
import type { Request, StreamEvent } from '../../src/providers/ir/types.js';
import { anthropicClient } from '../../src/providers/protocols/anthropic/client/index.js';
import { geminiProvider } from '../../src/providers/protocols/gemini/provider/index.js';
import { openaiChatProvider } from '../../src/providers/protocols/openai-chat/provider/index.js';
import { readProviderStream } from '../helpers/provider-stream.js';

const OPENAI: Target = { provider: 'openai', displayName: 'OpenAI', model: 'gpt-5.4' };
const GEMINI: Target = { provider: 'gemini', displayName: 'Gemini', model: 'gemini-3.7-flash' };
const bytes = (dir: string, name: string) => readFileSync(new URL(`../fixtures/${dir}/${name}`, import.meta.url));


/** Random cuts of the bytes (inside UTF-8 characters and between \r and \n included) give the same events. */
function splitProperty(provider: ProviderProtocol, target: Target, data: Buffer): void {
  const whole = readProviderStream(provider, target, [data]);
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: data.length - 1 }), { maxLength: 30 }), (points) => {
    const cuts = [0, ...[...points].sort((a, b) => a - b), data.length];
    expect(readProviderStream(provider, target, cuts.slice(1).map((end, i) => data.subarray(cuts[i], end)))).toStrictEqual(whole);
  }), { numRuns: 60 });
}

/** The Messages client's frames for a stream: what Claude Code would get. */
function asMessages(events: StreamEvent[]): Array<[string, any]> {
  const r = anthropicClient.createStreamRenderer({ model: 'x', modelPrefix: 'p/', created: 0, fallbackId: 'msg_f', includeUsage: false });
  const parser = new SseParser();
  const text = events.map((e) => r.push(e)).join('') + r.end();
  return [...parser.push(text), ...parser.end()].map((e) => [e.event!, JSON.parse(e.data)]);
}

describe('OpenAI Chat chunks → IR', () => {
  const EXPECTED: Record<string, StreamEvent[]> = {
    'text.sse': [
      { type: 'start', id: 'chatcmpl-t1', model: 'gpt-5.4-2026-03-05' },
      { type: 'text', text: 'Hello' }, { type: 'text', text: ' wörld 👋' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 4, cachedInputTokens: 8, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 12, outputTokens: 4, cachedInputTokens: 8, reasoningTokens: 0 } },
    ],
    'parallel-tools.sse': [
      { type: 'start', id: 'chatcmpl-t2', model: 'gpt-5.4' },
      { type: 'tool-call-start', id: 'call_A', name: 'get_weather' },
      { type: 'tool-call-arguments', id: 'call_A', delta: '{"city": "Par' },
      { type: 'tool-call-arguments', id: 'call_A', delta: 'is"}' },
      { type: 'tool-call-start', id: 'call_B', name: 'get_time' },
      { type: 'tool-call-arguments', id: 'call_B', delta: '{}' },
      { type: 'tool-call-end', id: 'call_A' }, { type: 'tool-call-end', id: 'call_B' },
      { type: 'usage', usage: { inputTokens: 40, outputTokens: 22 } },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 40, outputTokens: 22 } },
    ],
    'reasoning-length.sse': [
      { type: 'start', id: 'chatcmpl-t3', model: 'deepseek-reasoner' },
      { type: 'reasoning', text: 'Think: 2+2.' }, { type: 'text', text: '4' },
      { type: 'finish', reason: 'length' },
    ],
    'mid-stream-error.sse': [
      { type: 'start', id: 'chatcmpl-t4', model: 'gpt-5.4' }, { type: 'text', text: 'Par' },
      { type: 'error', error: { status: 502, kind: 'server', message: 'The server had an error while processing your request.' } },
    ],
    'cut-before-done.sse': [
      { type: 'start', id: 'chatcmpl-t5', model: 'gpt-5.4' }, { type: 'text', text: 'Par' },
      { type: 'error', error: { status: 502, kind: 'stream_ended', message: 'OpenAI closed the stream before [DONE]' } },
    ],
  };

  it.each(Object.keys(EXPECTED))('%s reads as recorded, however its bytes are split', (name) => {
    const data = bytes('protocols/openai-chat-provider', name);
    expect(readProviderStream(openaiChatProvider, OPENAI, [data])).toStrictEqual(EXPECTED[name]);
    splitProperty(openaiChatProvider, OPENAI, data);
  });

  it('a whole answer, and an error answer about the stored key', () => {
    expect(openaiChatProvider.readResponse({
      id: 'chatcmpl-9', model: 'gpt-5.4', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    }, OPENAI)).toEqual({ id: 'chatcmpl-9', model: 'gpt-5.4', choices: [{ index: 0, finish: 'tool-calls', parts: [{ type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":1}' }] }], usage: { inputTokens: 5, outputTokens: 3 } });
    const e = openaiChatProvider.readError(401, '{"error":{"message":"Incorrect API key provided: sk-…","type":"invalid_request_error","code":"invalid_api_key"}}', OPENAI);
    expect(e).toMatchObject({ status: 401, kind: 'authentication' });
    expect(e.message).toMatch(/stored in the gateway.*gateway providers set openai/);
  });
});

describe('Gemini recordings → IR → what a Messages client gets', () => {
  const names = readdirSync(new URL('../fixtures/gemini/', import.meta.url)).filter((f) => f.endsWith('.sse'));

  it.each(names)('%s gives the same events however its bytes are split', (name) => {
    splitProperty(geminiProvider, GEMINI, bytes('gemini', name));
  });

  it('a function call: a tool_use block, and its thought signature kept for the way back', () => {
    const out = asMessages(readProviderStream(geminiProvider, GEMINI, [bytes('gemini', 'function-call.sse')]));
    const tool = out.find(([e, d]) => e === 'content_block_start' && d.content_block.type === 'tool_use')![1].content_block;
    expect(tool).toMatchObject({ id: 'fc7a1b2c9d', name: 'get_weather' });
    expect(out.some(([e, d]) => e === 'content_block_delta' && d.delta.type === 'signature_delta' && d.delta.signature.startsWith('gw1.'))).toBe(true);
    expect(out.find(([e]) => e === 'message_delta')![1].delta.stop_reason).toBe('tool_use');
  });

  it('thoughts become thinking blocks, then the answer text', () => {
    const events = readProviderStream(geminiProvider, GEMINI, [bytes('gemini', 'thoughts.sse')]);
    expect(events.filter((e) => e.type === 'reasoning').map((e) => (e as { text: string }).text).join('')).toBe('**Checking divisors**\nTry 2, 3, 5, 7. None divide 97.');
    const starts = asMessages(events).filter(([e]) => e === 'content_block_start').map(([, d]) => d.content_block.type);
    expect(starts).toEqual(['thinking', 'text']);
  });

  it.each([['max-tokens.sse', 'max_tokens'], ['safety.sse', 'refusal'], ['plain-text.sse', 'end_turn']])('%s ends with stop_reason %s', (name, reason) => {
    const out = asMessages(readProviderStream(geminiProvider, GEMINI, [bytes('gemini', name)]));
    expect(out.find(([e]) => e === 'message_delta')![1].delta.stop_reason).toBe(reason);
    expect(out.at(-1)![0]).toBe('message_stop');
  });

  it('an error mid-stream ends in an error event, never message_stop', () => {
    const out = asMessages(readProviderStream(geminiProvider, GEMINI, [bytes('gemini', 'mid-stream-error.sse')]));
    expect(out.at(-1)![0]).toBe('error');
    expect(out.some(([e]) => e === 'message_stop')).toBe(false);
  });

  it('a 429 keeps its RetryInfo delay; a bad stored key says whose key failed', () => {
    const rl = geminiProvider.readError(429, JSON.stringify({ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }] } }), GEMINI);
    expect(rl).toMatchObject({ status: 429, kind: 'rate_limit', retryAfter: '12', message: 'Quota exceeded' });
    const bad = geminiProvider.readError(400, JSON.stringify({ error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT', details: [{ reason: 'API_KEY_INVALID' }] } }), GEMINI);
    expect(bad).toMatchObject({ status: 401, kind: 'authentication' });
  });
});

describe('IR → provider requests', () => {
  const base: Request = {
    model: 'x', system: [{ type: 'text', text: 'Be brief.' }], tools: [{ name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
    stopSequences: [], stream: true, maxOutputTokens: 32000, reasoning: { enabled: true, effort: 'high' },
    messages: [
      { role: 'user', parts: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', parts: [{ type: 'reasoning', text: 'hm' }, { type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}', state: { provider: 'gemini', data: { id: 'c1', thoughtSignature: 'SIG' } } }] },
      { role: 'user', parts: [{ type: 'tool-result', callId: 'c1', content: [{ type: 'text', text: '18°C' }] }, { type: 'text', text: 'And tomorrow?' }] },
    ],
  };

  it('OpenAI Chat: system first, the result as a tool message before the rest of its turn, tokens capped for the model', () => {
    const call = openaiChatProvider.buildRequest(base, { ...OPENAI, model: 'gpt-4o' });
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.body).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '18°C' },
        { role: 'user', content: 'And tomorrow?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      max_completion_tokens: 16384, reasoning_effort: 'high', stream: true, stream_options: { include_usage: true },
    });
  });

  it('Gemini: the call\'s own id and signature back to Gemini (from the state it minted), the result under the call\'s name, a thinking level', () => {
    const call = geminiProvider.buildRequest(base, GEMINI);
    expect(call.path).toBe('/v1beta/models/gemini-3.7-flash:streamGenerateContent?alt=sse');
    expect(call.body).toMatchObject({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'SIG' }] },
        { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'get_weather', response: { output: '18°C' } } }, { text: 'And tomorrow?' }] },
      ],
      generationConfig: { maxOutputTokens: 32000, thinkingConfig: { thinkingLevel: 'HIGH' } },
    });
    // State another provider minted is not Gemini's to read: its signature never goes; a call of the
    // current turn that has none of Gemini's gets Google's documented dummy, which Gemini 3 requires.
    const foreign = geminiProvider.buildRequest({ ...base, messages: [base.messages[0]!, { role: 'assistant', parts: [{ type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{}', state: { provider: 'other', data: { thoughtSignature: 'X' } } }] }] }, GEMINI);
    expect(JSON.stringify(foreign.body)).not.toContain('"X"');
    expect(foreign.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} }, thoughtSignature: 'skip_thought_signature_validator' }] },
    ]);
    // An earlier turn's call, and any call for a Gemini 2 model, gets none.
    const earlier = geminiProvider.buildRequest({ ...base, messages: [base.messages[0]!, { role: 'assistant', parts: [{ type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{}' }] }, { role: 'user', parts: [{ type: 'text', text: 'Thanks. Now?' }] }] }, GEMINI);
    const older = geminiProvider.buildRequest({ ...base, messages: [base.messages[0]!, { role: 'assistant', parts: [{ type: 'tool-call', id: 'c1', name: 'get_weather', arguments: '{}' }] }] }, { ...GEMINI, model: 'gemini-2.5-flash' });
    expect(JSON.stringify(earlier.body)).not.toContain('thoughtSignature');
    expect(JSON.stringify(older.body)).not.toContain('thoughtSignature');
  });
});
