// The Gemini provider module on its own: which state goes back to Gemini (only its own), the
// refusals that name the client's field, how it reads streams, and its errors through the Chat door.
import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/providers/ir/protocol.js';
import type { Message, Request, StreamEvent } from '../../src/providers/ir/types.js';
import { geminiProvider } from '../../src/providers/protocols/gemini/provider/index.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { TranslationError, type SseEvent } from '../../src/providers/types.js';
import { chatError } from './chat-composition-helpers.js';

const target: Target = { provider: 'gemini', displayName: 'Gemini', model: 'gemini-3.5-flash', protocol: 'gemini' };
const base: Request = { model: 'gemini-3.5-flash', system: [], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [], stopSequences: [], stream: false };
const build = (req: Partial<Request>, t: Target = target) => geminiProvider.buildRequest({ ...base, ...req }, t).body as Record<string, any>;
const viaChat = (body: Record<string, unknown>) =>
  geminiProvider.buildRequest(openaiChatClient.parseRequest({ model: 'gemini/x', messages: [{ role: 'user', content: 'hi' }], ...body }, target), target).body as Record<string, any>;

function refusal(fn: () => unknown): TranslationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TranslationError);
    return e as TranslationError;
  }
  throw new Error('expected a TranslationError');
}

describe('Gemini provider: building the call', () => {
  it('gives a call\'s id and signature, and a signature on text, back only to the provider that minted them', () => {
    const turn: Message = { role: 'assistant', parts: [
      { type: 'text', text: 'Let me check.', state: { provider: 'gemini', data: { thoughtSignature: 'sig-text' } } },
      { type: 'tool-call', id: 'g1', name: 'f', arguments: '{}', state: { provider: 'gemini', data: { id: 'g1', thoughtSignature: 'sig-call' } } },
      { type: 'tool-call', id: 'toolu_1', name: 'f', arguments: '{"a":1}' },
      { type: 'tool-call', id: 'v1', name: 'f', arguments: '{}', state: { provider: 'vertex', data: { id: 'v1', thoughtSignature: 'other' } } },
      { type: 'reasoning', text: 'thoughts', state: { provider: 'gemini', data: { thoughtSignature: 's' } } },
    ] };
    const results: Message = { role: 'user', parts: [
      { type: 'tool-result', callId: 'g1', name: 'f', content: [{ type: 'text', text: '{"ok":true}' }] },
      { type: 'tool-result', callId: 'toolu_1', name: 'f', content: [{ type: 'text', text: 'plain' }, { type: 'text', text: 'text' }] },
    ] };
    expect(build({ messages: [base.messages[0]!, turn, results] }).contents.slice(1)).toEqual([
      { role: 'model', parts: [
        { text: 'Let me check.', thoughtSignature: 'sig-text' },
        { functionCall: { id: 'g1', name: 'f', args: {} }, thoughtSignature: 'sig-call' },
        { functionCall: { name: 'f', args: { a: 1 } } },
        { functionCall: { name: 'f', args: {} } },
      ] },
      { role: 'user', parts: [
        { functionResponse: { id: 'g1', name: 'f', response: { output: { ok: true } } } },
        { functionResponse: { name: 'f', response: { output: 'plain\ntext' } } },
      ] },
    ]);
  });

  it('sends results in the order of their calls whatever order the client answered in, so calls without ids get their own', () => {
    const call = (id: string, city: string) => ({ type: 'tool-call' as const, id, name: 'get_weather', arguments: JSON.stringify({ city }), state: { provider: 'gemini', data: {} } });
    const result = (callId: string, text: string) => ({ type: 'tool-result' as const, callId, content: [{ type: 'text' as const, text }] });
    const sent = build({ messages: [
      { role: 'user', parts: [{ type: 'text', text: 'Weather in Oslo and Rome?' }] },
      { role: 'assistant', parts: [call('c0', 'Oslo'), call('c1', 'Rome')] },
      { role: 'user', parts: [result('c1', 'Rome: 21°C'), result('c0', 'Oslo: 3°C'), { type: 'text', text: 'And tomorrow?' }] },
    ] });
    expect(sent.contents.at(-1)).toEqual({ role: 'user', parts: [
      { functionResponse: { name: 'get_weather', response: { output: 'Oslo: 3°C' } } },
      { functionResponse: { name: 'get_weather', response: { output: 'Rome: 21°C' } } },
      { text: 'And tomorrow?' },
    ] });
  });

  it('refuses what Gemini cannot take, naming the client\'s own field', () => {
    const noName = refusal(() => viaChat({ messages: [{ role: 'user', content: 'go' }, { role: 'tool', tool_call_id: 'call_1', content: 'r' }] }));
    expect([noName.param, noName.message]).toEqual(['messages[1].tool_call_id', expect.stringMatching(/function name/)]);
    const url = refusal(() => viaChat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/image?id=1' } }] }] }));
    expect([url.param, url.message]).toEqual(['messages[0].content[0].image_url.url', expect.stringContaining('data URL')]);
    expect(refusal(() => viaChat({ reasoning_effort: 'xhigh' })).param).toBe('reasoning_effort');
    expect(refusal(() => viaChat({ tool_choice: 'required' })).param).toBe('tool_choice');
    expect(refusal(() => viaChat({ tools: [{ type: 'function', function: { name: '1st' } }] })).param).toBe('tools[0]');
    expect(refusal(() => viaChat({ messages: [{ role: 'system', content: 'only a system prompt' }] })).param).toBe('messages');
  });

  it('maps reasoning settings to thinkingConfig', () => {
    expect(build({ reasoning: { effort: 'high' } }).generationConfig).toEqual({ thinkingConfig: { thinkingLevel: 'HIGH' } });
    expect(build({ reasoning: { budgetTokens: 1024, includeText: true } }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    expect(build({ reasoning: { enabled: false } }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(refusal(() => build({ reasoning: { effort: 'max' } })).param).toBe('reasoning.effort');
  });

  it('sends audio, PDFs and text documents inline', () => {
    const parts = viaChat({ messages: [{ role: 'user', content: [
      { type: 'input_audio', input_audio: { data: 'UklG', format: 'mp3' } },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE' } },
    ] }] }).contents[0].parts;
    expect(parts).toEqual([{ inlineData: { mimeType: 'audio/mp3', data: 'UklG' } }, { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } }]);
    expect(build({ messages: [{ role: 'user', parts: [{ type: 'document', source: { kind: 'text', mediaType: 'text/plain', text: 'hé' } }] }] }).contents[0].parts)
      .toEqual([{ inlineData: { mimeType: 'text/plain', data: Buffer.from('hé').toString('base64') } }]);
  });
});

describe('Gemini provider: reading', () => {
  const event = (data: unknown): SseEvent => ({ data: JSON.stringify(data) });
  const text = (t: string, extra: Record<string, unknown> = {}) => ({ candidates: [{ content: { parts: [{ text: t }] }, index: 0, ...extra }], responseId: 'r1', modelVersion: 'models/gemini-x' });

  it('keeps a signature on text as state, so it can go back', () => {
    const answer = geminiProvider.readResponse({ candidates: [{ content: { parts: [{ text: 'Hi' }, { text: '', thoughtSignature: 'sig' }] }, finishReason: 'STOP' }] }, target);
    expect(answer.choices[0]!.parts).toEqual([{ type: 'text', text: 'Hi' }, { type: 'text', text: '', state: { provider: 'gemini', data: { thoughtSignature: 'sig' } } }]);
    const next = build({ messages: [base.messages[0]!, { role: 'assistant', parts: answer.choices[0]!.parts }] });
    expect(next.contents[1]).toEqual({ role: 'model', parts: [{ text: 'Hi' }, { text: '', thoughtSignature: 'sig' }] });
  });

  it('reports an empty stream, ends at an error with nothing after it, and keeps the usage it saw', () => {
    const empty = geminiProvider.createStreamReader(target);
    expect(empty.push({ data: 'garbage' })).toEqual([]);
    expect(empty.end()).toEqual([{ type: 'error', error: { status: 502, kind: 'empty_response', message: 'Gemini ended the stream without sending a response.' } }]);
    const r = geminiProvider.createStreamReader(target);
    r.push(event({ ...text('a'), usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } }));
    expect(r.push(event({ error: { code: 429, message: 'Resource exhausted.', status: 'RESOURCE_EXHAUSTED' } }))).toEqual([
      { type: 'error', error: { status: 429, kind: 'rate_limit', message: 'Resource exhausted.' } },
    ]);
    expect(r.complete()).toBe(true);
    expect([...r.push(event(text('b'))), ...r.end()]).toEqual([]);
    expect(r.usage()).toEqual({ inputTokens: 3, outputTokens: 1, cachedInputTokens: 0, reasoningTokens: 0 });
    expect(geminiProvider.createStreamReader(target).push(event({ error: { message: 'Deadline.', status: 'DEADLINE_EXCEEDED' } }))[0]).toMatchObject({ error: { status: 504, kind: 'timeout' } });
  });

  it('sends each call whole with its state, finishes every candidate at EOF, and keeps the first id and model', () => {
    const r = geminiProvider.createStreamReader(target);
    const out: StreamEvent[] = [
      ...r.push(event({ ...text('a'), candidates: [{ content: { parts: [{ text: 'a' }] }, index: 0 }, { content: { parts: [{ functionCall: { name: 'f', args: { x: 1 } }, thoughtSignature: 's' }] }, index: 1 }] })),
      ...r.push(event({ candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'MAX_TOKENS', index: 0 }], responseId: 'other', modelVersion: 'y' })),
      ...r.end(),
    ];
    expect(out).toEqual([
      { type: 'start', id: 'r1', model: 'gemini-x' },
      { type: 'text', text: 'a' },
      { type: 'tool-call-start', id: '', name: 'f', arguments: '{"x":1}', state: { provider: 'gemini', data: { thoughtSignature: 's' } }, choice: 1 },
      { type: 'tool-call-end', id: '', state: { provider: 'gemini', data: { thoughtSignature: 's' } }, choice: 1 },
      { type: 'text', text: 'b' },
      { type: 'finish', reason: 'length', usage: { inputTokens: 0, outputTokens: 0 } },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 0, outputTokens: 0 }, choice: 1 },
    ]);
  });
});

describe('Gemini provider: HTTP errors through the Chat door', () => {
  const through = (status: number, body: string, t: Target = target) => chatError(openaiChatClient.renderError(geminiProvider.readError(status, body, t)));
  const google = (code: number, status: string, message: string, details?: unknown[]) => JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });

  it('turns a rejected key (400 API_KEY_INVALID, 403 for unregistered callers) into a 401 naming the stored key and the provider', () => {
    const invalid = through(400, google(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ reason: 'API_KEY_INVALID' }]));
    expect(invalid).toMatchObject({ status: 401, body: { error: { type: 'authentication_error', code: 'upstream_auth_failed' } } });
    expect(invalid.body.error.message).toMatch(/Gemini rejected the API key stored in the gateway.*gateway providers set gemini.*API key not valid/);
    const missing = through(403, google(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers."), { ...target, provider: 'vertex', displayName: 'Vertex' });
    expect(missing.status).toBe(401);
    expect(missing.body.error.message).toContain('gateway providers set vertex');
    expect(through(403, google(403, 'PERMISSION_DENIED', 'You do not have permission to access the tuned model.'))).toEqual({
      status: 403, body: { error: { message: 'You do not have permission to access the tuned model.', type: 'permission_error', param: null, code: null } },
    });
  });

  it.each([
    [400, 'INVALID_ARGUMENT', 400, 'invalid_request_error', null],
    [402, 'FAILED_PRECONDITION', 429, 'insufficient_quota', 'insufficient_quota'],
    [404, 'NOT_FOUND', 404, 'invalid_request_error', 'model_not_found'],
    [429, 'RESOURCE_EXHAUSTED', 429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
    [500, 'INTERNAL', 500, 'server_error', null],
    [503, 'UNAVAILABLE', 503, 'server_error', 'overloaded'],
    [504, 'DEADLINE_EXCEEDED', 504, 'server_error', 'timeout'],
    [502, 'UNKNOWN', 502, 'server_error', null],
  ])('%i %s → %i %s (%s), keeping the message', (status, grpc, outStatus, type, code) => {
    expect(through(status, google(status, grpc, 'Google says so.'))).toEqual({ status: outStatus, body: { error: { message: 'Google says so.', type, param: null, code } } });
  });

  it('reads the array form, and says so when there is nothing to read', () => {
    expect(through(429, `[${google(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.')}]`).body.error.message).toBe('Quota exceeded.');
    expect(through(502, '<html>Bad Gateway</html>')).toEqual({
      status: 502, body: { error: { message: 'Gemini returned HTTP 502 with no readable error message.', type: 'server_error', param: null, code: null } },
    });
  });
});
