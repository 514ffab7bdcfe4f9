// Finish reasons, usage math, errors and the stream translator's edge cases.
import { describe, expect, it } from 'vitest';
import { fromGeminiError, fromGeminiUsage, gemini, mapGeminiFinishReason } from './via-hub.js';
import type { StreamOutput, TranslateContext } from './via-hub.js';

const ctx: TranslateContext = { model: 'gemini-3.5-flash', created: 1767225600, fallbackId: 'chatcmpl-1', includeUsage: true };
const event = (value: unknown): { data: string } => ({ data: JSON.stringify(value) });
const textChunk = (text: string, extra: Record<string, unknown> = {}): unknown => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...extra }], responseId: 'r1', modelVersion: 'gemini-3.5-flash',
});

describe('mapGeminiFinishReason', () => {
  it.each([
    ['STOP', 'stop'], ['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter'], ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'], ['SPII', 'content_filter'], ['IMAGE_SAFETY', 'content_filter'],
    ['IMAGE_PROHIBITED_CONTENT', 'content_filter'], ['RECITATION', 'content_filter'], ['LANGUAGE', 'content_filter'],
    ['NO_IMAGE', 'content_filter'], ['IMAGE_RECITATION', 'content_filter'], ['IMAGE_OTHER', 'content_filter'],
    ['OTHER', 'stop'], ['MALFORMED_FUNCTION_CALL', 'stop'], ['UNEXPECTED_TOOL_CALL', 'stop'], ['TOO_MANY_TOOL_CALLS', 'stop'],
    ['FINISH_REASON_UNSPECIFIED', 'stop'], ['SOMETHING_NEW', 'stop'], [undefined, 'stop'],
  ] as const)('%s → %s', (reason, expected) => {
    expect(mapGeminiFinishReason(reason, false)).toBe(expected);
  });

  it('is tool_calls whenever a call was made', () => {
    expect(mapGeminiFinishReason('STOP', true)).toBe('tool_calls');
    expect(mapGeminiFinishReason('MAX_TOKENS', true)).toBe('tool_calls');
  });
});

describe('fromGeminiUsage', () => {
  it('adds thoughts to completion and tool-use prompt tokens to prompt, so prompt + completion = total', () => {
    expect(fromGeminiUsage({ promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 20, thoughtsTokenCount: 30, toolUsePromptTokenCount: 5, totalTokenCount: 155 }))
      .toStrictEqual({
        prompt_tokens: 105, completion_tokens: 50, total_tokens: 155,
        prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 30 },
      });
  });

  it('counts missing fields as zero and ignores non-objects', () => {
    expect(fromGeminiUsage({ promptTokenCount: 4 })).toMatchObject({ prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
    expect(fromGeminiUsage(undefined)).toBeUndefined();
    expect(fromGeminiUsage('x')).toBeUndefined();
  });
});

describe('fromGeminiError', () => {
  const google = (code: number, status: string, message: string, details?: unknown[]): string => JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } });

  it('turns a wrong key (400 API_KEY_INVALID) into a 401 about the gateway key', () => {
    const r = fromGeminiError(400, google(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
    ]));
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('upstream_auth_failed');
    expect(r.body.error.message).toContain('gateway providers set gemini');
    expect(r.body.error.message).toContain('API key not valid');
  });

  it('turns a missing key (403 PERMISSION_DENIED) into the same 401', () => {
    const r = fromGeminiError(403, google(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."));
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('upstream_auth_failed');
  });

  it('keeps other 403s as permission errors', () => {
    const r = fromGeminiError(403, google(403, 'PERMISSION_DENIED', 'You do not have permission to access the tuned model.'));
    expect(r).toStrictEqual({ status: 403, body: { error: { message: 'You do not have permission to access the tuned model.', type: 'permission_error', param: null, code: null } } });
  });

  it.each([
    [400, 'INVALID_ARGUMENT', 400, 'invalid_request_error', null],
    [402, 'RESOURCE_EXHAUSTED', 429, 'insufficient_quota', 'insufficient_quota'],
    [404, 'NOT_FOUND', 404, 'invalid_request_error', 'model_not_found'], // the only call is generateContent: a 404 is the model
    [429, 'RESOURCE_EXHAUSTED', 429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
    [500, 'INTERNAL', 500, 'server_error', null],
    [503, 'UNAVAILABLE', 503, 'server_error', 'overloaded'], // as Anthropic's overload reads
    [504, 'DEADLINE_EXCEEDED', 504, 'server_error', 'timeout'],
    [502, 'UNKNOWN', 502, 'server_error', null],
  ] as const)('%i %s → %i %s', (status, grpc, outStatus, type, code) => {
    const r = fromGeminiError(status, google(status, grpc, 'Google says so.'));
    expect(r).toStrictEqual({ status: outStatus, body: { error: { message: 'Google says so.', type, param: null, code } } });
  });

  it('reads the error out of the non-SSE array form', () => {
    expect(fromGeminiError(429, `[${google(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.')}]`).body.error.message).toBe('Quota exceeded.');
  });

  it('gives a generic message with the status for an unreadable body', () => {
    expect(fromGeminiError(502, '<html>Bad Gateway</html>')).toStrictEqual({
      status: 502, body: { error: { message: 'Gemini returned HTTP 502 with no readable error message.', type: 'server_error', param: null, code: null } },
    });
  });
});

describe('fromGeminiResponse', () => {
  it('falls back to ctx ids and model names', () => {
    const c = gemini.fromResponse({ candidates: [{ content: { parts: [{ text: 'x' }] } }] }, { ...ctx, displayModel: 'my-alias' });
    expect(c).toMatchObject({ id: 'chatcmpl-1', model: 'my-alias', choices: [{ index: 0, finish_reason: 'stop', message: { content: 'x' } }] });
    expect(c.usage).toBeUndefined();
    expect(gemini.fromResponse({}, ctx)).toMatchObject({ model: 'gemini/gemini-3.5-flash', choices: [{ message: { content: null }, finish_reason: 'stop' }] });
    expect(gemini.fromResponse('garbage', ctx).choices).toHaveLength(1);
  });
});

describe('createGeminiStreamTranslator', () => {
  const chunks = (outputs: StreamOutput[]): unknown[] => outputs.map((o) => (o.kind === 'chunk' ? o.chunk : o));

  it('reports an error when the stream ended with no response at all', () => {
    const t = gemini.createStreamTranslator(ctx);
    expect(t.push({ data: 'garbage' })).toEqual([]);
    const end = t.end();
    expect(end).toHaveLength(1);
    expect(end[0]).toMatchObject({ kind: 'error', error: { error: { type: 'server_error', code: 'upstream_empty_response' } } });
    expect(t.end()).toEqual([]);
  });

  it('emits nothing after an error event, not even at end(), but still reports usage', () => {
    const t = gemini.createStreamTranslator(ctx);
    t.push(event({ ...(textChunk('a') as object), usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } }));
    const err = t.push(event({ error: { code: 429, message: 'Resource exhausted.', status: 'RESOURCE_EXHAUSTED' } }));
    expect(err).toStrictEqual([{ kind: 'error', error: { error: { message: 'Resource exhausted.', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' } } }]);
    expect(t.push(event(textChunk('b')))).toEqual([]);
    expect(t.end()).toEqual([]);
    expect(t.usage()).toMatchObject({ prompt_tokens: 3, completion_tokens: 1 });
  });

  it('maps an in-stream error without a code by its gRPC status', () => {
    const t = gemini.createStreamTranslator(ctx);
    expect(t.push(event({ error: { message: 'Deadline.', status: 'DEADLINE_EXCEEDED' } }))[0]).toMatchObject({ error: { error: { code: 'timeout' } } });
  });

  it('omits the usage field without include_usage and sends no usage chunk', () => {
    const t = gemini.createStreamTranslator({ ...ctx, includeUsage: false });
    const out = [...t.push(event(textChunk('a', { finishReason: 'STOP' }))), ...t.end()];
    expect(out.every((o) => o.kind === 'chunk' && !('usage' in o.chunk) && o.chunk.choices.length === 1)).toBe(true);
    expect(t.usage()).toBeUndefined();
  });

  it('sends a zero usage chunk when include_usage is set and Gemini reported none', () => {
    const t = gemini.createStreamTranslator(ctx);
    t.push(event(textChunk('a', { finishReason: 'STOP' })));
    expect(chunks(t.end()).at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
  });

  it('keeps the first chunk\'s id and model on every chunk; latest usage wins', () => {
    const t = gemini.createStreamTranslator(ctx);
    t.push(event({ ...(textChunk('a') as object), usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 } }));
    t.push(event({ candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }], responseId: 'other', modelVersion: 'models/x', usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2 } }));
    const out = chunks(t.end()) as Array<{ id: string; model: string }>;
    expect(out.map((c) => [c.id, c.model])).toEqual([['r1', 'gemini/gemini-3.5-flash'], ['r1', 'gemini/gemini-3.5-flash']]);
    expect(t.usage()).toMatchObject({ completion_tokens: 2, total_tokens: 7 });
  });

  it('attaches log probabilities to the fragment\'s first text chunk', () => {
    const t = gemini.createStreamTranslator({ ...ctx, includeUsage: false });
    const out = chunks(t.push(event(textChunk('Hi', { logprobsResult: { chosenCandidates: [{ token: 'Hi', logProbability: -0.5 }], topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.5 }] }] } }))));
    expect(out[1]).toMatchObject({ choices: [{ delta: { content: 'Hi' }, logprobs: { content: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105] }] }], refusal: null } }] });
  });
});
