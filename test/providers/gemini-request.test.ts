// toGeminiRequest beyond the fixtures: which fields are translated, ignored or refused, and the
// client errors that name the exact field.
import { describe, expect, it } from 'vitest';
import { GEMINI_IGNORED_FIELDS, GEMINI_UNSUPPORTED_FIELDS, gemini } from './via-hub.js';
import { TranslationError, type ChatCompletionRequest } from '../../src/providers/types.js';
import type { TranslateContext } from './via-hub.js';

const ctx: TranslateContext = { model: 'gemini-3.5-flash', created: 1767225600, fallbackId: 'chatcmpl-1', includeUsage: false };
const base: ChatCompletionRequest = { model: 'gemini/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] };
const body = (extra: Partial<ChatCompletionRequest>): Record<string, unknown> => gemini.toRequest({ ...base, ...extra }, ctx).body;

function translationError(fn: () => unknown): TranslationError {
  try {
    fn();
  } catch (e) {
    if (e instanceof TranslationError) return e;
    throw e;
  }
  throw new Error('expected a TranslationError');
}

/** A valid value for each field the tests below expect to be ignored. */
const HARMLESS: Record<string, unknown> = {
  stream_options: { include_usage: true }, seed: 1, store: true, metadata: { a: 'b' }, service_tier: 'auto', prompt_cache_key: 'k',
  prompt_cache_options: {}, frequency_penalty: 0.5, presence_penalty: 0.5, verbosity: 'low', prediction: { type: 'content', content: 'x' },
  user: 'u', safety_identifier: 's', parallel_tool_calls: false,
};

describe('toGeminiRequest: path', () => {
  it('uses generateContent, or streamGenerateContent with alt=sse when streaming, and encodes the model', () => {
    expect(gemini.toRequest(base, ctx).path).toBe('/v1beta/models/gemini-3.5-flash:generateContent');
    expect(gemini.toRequest({ ...base, stream: true }, ctx).path).toBe('/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse');
    expect(gemini.toRequest(base, { ...ctx, model: 'models/tuned model?x' }).path).toBe('/v1beta/models/tuned%20model%3Fx:generateContent');
  });
});

describe('toGeminiRequest: fields', () => {
  it('ignores the harmless fields it lists', () => {
    const extra = Object.fromEntries(GEMINI_IGNORED_FIELDS.map((f) => [f, HARMLESS[f] ?? 'x']));
    expect(body(extra)).toStrictEqual(body({}));
    expect(GEMINI_IGNORED_FIELDS).toEqual(expect.arrayContaining(['user', 'parallel_tool_calls']));
  });

  it.each(GEMINI_UNSUPPORTED_FIELDS)('refuses %s, naming it and Gemini', (field) => {
    const e = translationError(() => body({ [field]: field === 'logit_bias' ? { 50256: -100 } : { x: 1 } }));
    expect(e.param).toBe(field);
    expect(e.message).toContain('Gemini');
  });

  it('lets null and empty values of unsupported fields through', () => {
    expect(body({ logit_bias: null, functions: undefined, audio: {} })).toStrictEqual(body({}));
  });

  it('refuses audio output modalities but accepts text', () => {
    expect(body({ modalities: ['text'] })).toStrictEqual(body({}));
    expect(translationError(() => body({ modalities: ['text', 'audio'] })).param).toBe('modalities');
  });

  it('maps stop as a string, max_tokens alone, json_object and logprobs without top_logprobs', () => {
    expect(body({ stop: 'END', max_tokens: 10, response_format: { type: 'json_object' }, logprobs: true }).generationConfig)
      .toStrictEqual({ stopSequences: ['END'], maxOutputTokens: 10, responseMimeType: 'application/json', responseLogprobs: true });
  });

  it('sends nothing for text response_format and null fields', () => {
    expect(body({ response_format: { type: 'text' }, temperature: null, stop: null, logprobs: false, top_logprobs: 3 })).toStrictEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it('maps reasoning_effort to a thinking level and refuses levels Gemini lacks', () => {
    expect(body({ reasoning_effort: 'high' }).generationConfig).toStrictEqual({ thinkingConfig: { thinkingLevel: 'HIGH' } });
    expect(translationError(() => body({ reasoning_effort: 'xhigh' })).param).toBe('reasoning_effort');
    expect(translationError(() => body({ reasoning_effort: 'toString' })).param).toBe('reasoning_effort');
  });

  it('refuses a non-numeric sampling value', () => {
    expect(translationError(() => body({ temperature: 'hot' as unknown as number })).param).toBe('temperature');
  });
});

describe('toGeminiRequest: tools and tool_choice', () => {
  const tools: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }];

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [{ type: 'function', function: { name: 'f' } }, { mode: 'ANY', allowedFunctionNames: ['f'] }],
  ] as const)('maps tool_choice %j', (choice, config) => {
    expect(body({ tools, tool_choice: choice as ChatCompletionRequest['tool_choice'] }).toolConfig).toStrictEqual({ functionCallingConfig: config });
  });

  it('drops auto/none without tools and refuses a forced call without tools', () => {
    expect(body({ tool_choice: 'none' })).toStrictEqual(body({}));
    expect(body({ tools: [], tool_choice: 'auto' })).toStrictEqual(body({}));
    expect(translationError(() => body({ tool_choice: 'required' })).param).toBe('tool_choice');
  });

  it('refuses non-function tools and names Gemini cannot take', () => {
    expect(translationError(() => body({ tools: [{ type: 'custom', function: { name: 'x' } } as never] })).param).toBe('tools[0].type');
    expect(translationError(() => body({ tools: [{ type: 'function', function: { name: '1st_tool' } }] })).param).toBe('tools[0]');
  });
});

describe('toGeminiRequest: messages', () => {
  it('merges adjacent same-role turns and skips empty text', () => {
    expect(body({ messages: [
      { role: 'user', content: 'a' }, { role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: '' }, { role: 'assistant', content: [{ type: 'text', text: 'c' }] }, { role: 'system', content: '' },
    ] })).toStrictEqual({ contents: [{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }, { role: 'model', parts: [{ text: 'c' }] }] });
  });

  it('needs at least one non-system message', () => {
    expect(translationError(() => body({ messages: [{ role: 'system', content: 'only' }] })).param).toBe('messages');
  });

  it('names the tool message whose tool_call_id matches no earlier call', () => {
    const e = translationError(() => body({ messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_2', content: 'r' },
    ] }));
    expect(e.param).toBe('messages[2].tool_call_id');
    expect(e.message).toContain('call_2');
  });

  it('looks the name up only in earlier assistant messages', () => {
    expect(translationError(() => body({ messages: [
      { role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_1', content: 'r' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    ] })).param).toBe('messages[1].tool_call_id');
  });

  it('names bad tool-call arguments', () => {
    expect(translationError(() => body({ messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{nope' } }] },
    ] })).param).toBe('messages[1].tool_calls[0].function.arguments');
  });

  it('refuses an image URL whose type the extension does not tell, suggesting a data URL', () => {
    const e = translationError(() => body({ messages: [{ role: 'user', content: [
      { type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://example.com/image?id=3' } },
    ] }] }));
    expect(e.param).toBe('messages[0].content[1].image_url.url');
    expect(e.message).toContain('data URL');
  });

  it('refuses non-base64 data URLs, other schemes and unknown part types', () => {
    const img = (url: string): ChatCompletionRequest['messages'] => [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }];
    expect(translationError(() => body({ messages: img('data:image/svg+xml,<svg/>') })).param).toBe('messages[0].content[0].image_url.url');
    expect(translationError(() => body({ messages: img('ftp://x/a.png') })).param).toBe('messages[0].content[0].image_url.url');
    expect(translationError(() => body({ messages: [{ role: 'user', content: [{ type: 'video', video: {} }] }] })).param).toBe('messages[0].content[0].type');
  });

  it('sends audio and PDF files inline', () => {
    expect(body({ messages: [{ role: 'user', content: [
      { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
      { type: 'file', file: { file_data: 'JVBERi0=', filename: 'report.PDF' } },
    ] }] }).contents).toStrictEqual([{ role: 'user', parts: [
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ] }]);
    expect(translationError(() => body({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] })).param).toBe('messages[0].content[0].file.file_id');
  });
});
