// Request translation edge cases beyond the recorded fixtures.
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_IGNORED_FIELDS, ANTHROPIC_MAPPED_FIELDS, ANTHROPIC_REJECTED_FIELDS, defaultMaxTokens,
  JSON_OBJECT_INSTRUCTION, toAnthropicRequest,
} from './via-hub.js';
import { TranslationError, type ChatCompletionRequest, type ChatMessage } from '../../src/providers/types.js';
import type { TranslateContext } from './via-hub.js';

const ctx: TranslateContext = { model: 'claude-sonnet-4-5', created: 1, fallbackId: 'chatcmpl-x', includeUsage: false };

function body(req: Partial<ChatCompletionRequest> & { messages?: ChatMessage[] }): Record<string, unknown> {
  return toAnthropicRequest({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], ...req }, ctx).body;
}

function translationError(fn: () => unknown): TranslationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TranslationError);
    return e as TranslationError;
  }
  throw new Error('expected a TranslationError');
}

const userText = (text: string) => ({ type: 'text', text });

/** A valid value for each field the tests below expect to be ignored. */
const HARMLESS: Record<string, unknown> = {
  stream_options: { include_usage: true }, seed: 1, store: true, metadata: { a: 'b' }, service_tier: 'auto', prompt_cache_key: 'k',
  prompt_cache_options: {}, frequency_penalty: 0.5, presence_penalty: 0.5, verbosity: 'low', prediction: { type: 'content', content: 'x' },
  user: 'u', safety_identifier: 's', parallel_tool_calls: false,
};

describe('toAnthropicRequest: call shape', () => {
  it('posts to /v1/messages with the anthropic-version header and the unprefixed model', () => {
    const call = toAnthropicRequest({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }, ctx);
    expect(call.path).toBe('/v1/messages');
    expect(call.headers).toEqual({ 'anthropic-version': '2023-06-01' });
    expect(call.body.model).toBe('claude-sonnet-4-5');
    expect(call.body).not.toHaveProperty('stream');
    expect(call.body).not.toHaveProperty('system');
  });
});

describe('toAnthropicRequest: messages', () => {
  it('collects every system and developer message, in order, into top-level system blocks', () => {
    const b = body({
      messages: [
        { role: 'system', content: 'one' },
        { role: 'user', content: 'u1' },
        { role: 'developer', content: [{ type: 'text', text: 'two' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: 'a1' },
        { role: 'system', content: 'three' },
        { role: 'user', content: 'u2' },
      ],
    });
    expect(b.system).toEqual([userText('one'), userText('two'), userText('three')]);
    expect(b.messages).toEqual([
      { role: 'user', content: [userText('u1')] },
      { role: 'assistant', content: [userText('a1')] },
      { role: 'user', content: [userText('u2')] },
    ]);
  });

  it('merges adjacent turns of the same role, including across a hoisted system message', () => {
    const b = body({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'system', content: 's' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'c' },
        { role: 'assistant', content: 'd' },
      ],
    });
    expect(b.messages).toEqual([
      { role: 'user', content: [userText('a'), userText('b')] },
      { role: 'assistant', content: [userText('c'), userText('d')] },
    ]);
  });

  it('puts tool results first in the user turn and merges consecutive tool messages', () => {
    const b = body({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: 'calling', tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'g', arguments: '' } },
        ] },
        { role: 'user', content: 'note first' },
        { role: 'tool', tool_call_id: 'call_1', content: 'r1' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '' },
        { role: 'user', content: 'then this' },
      ],
    });
    expect(b.messages).toEqual([
      { role: 'user', content: [userText('go')] },
      { role: 'assistant', content: [
        userText('calling'),
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
        { type: 'tool_use', id: 'toolu_2', name: 'g', input: {} },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: 'r1' },
        { type: 'tool_result', tool_use_id: 'toolu_2' },
        userText('note first'),
        userText('then this'),
      ] },
    ]);
  });

  it('rejects invalid tool-call arguments JSON, naming the exact param', () => {
    const err = translationError(() => body({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'f', arguments: '{"city": "Par' } },
        ] },
      ],
    }));
    expect(err.param).toBe('messages[1].tool_calls[1].function.arguments');
    expect(err.message).toMatch(/not valid JSON/);
  });

  it('rejects tool-call arguments that are JSON but not an object', () => {
    const err = translationError(() => body({
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1,2]' } }] }],
    }));
    expect(err.param).toBe('messages[0].tool_calls[0].function.arguments');
  });

  it('sends a conversation ending in an assistant message as-is (prefill)', () => {
    const b = body({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'Sure:' }] });
    expect(b.messages).toEqual([
      { role: 'user', content: [userText('q')] },
      { role: 'assistant', content: [userText('Sure:')] },
    ]);
  });

  it('refuses an assistant message with only a refusal, naming its content (the door validates before any provider)', () => {
    const e = translationError(() => body({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, refusal: 'I cannot help.' }, { role: 'user', content: 'ok' }] }));
    expect(e.param).toBe('messages[1].content');
  });

  it('rejects unsupported content: audio input, unknown part types, other data-URL MIME types, file ids', () => {
    const part = (p: Record<string, unknown>) => () => body({ messages: [{ role: 'user', content: [p as never] }] });
    expect(translationError(part({ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } })).param).toBe('messages[0].content[0].type');
    expect(translationError(part({ type: 'video', video: {} })).param).toBe('messages[0].content[0].type');
    const tiff = translationError(part({ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }));
    expect(tiff.param).toBe('messages[0].content[0].image_url.url');
    expect(tiff.message).toMatch(/image\/tiff.*Anthropic/);
    expect(translationError(part({ type: 'image_url', image_url: { url: 'ftp://x/y.png' } })).param).toBe('messages[0].content[0].image_url.url');
    expect(translationError(part({ type: 'file', file: { file_id: 'file-abc' } })).param).toBe('messages[0].content[0].file.file_id');
  });

  it('rejects non-text parts in system messages', () => {
    const err = translationError(() => body({ messages: [{ role: 'system', content: [{ type: 'image_url' } as never] }, { role: 'user', content: 'x' }] }));
    expect(err.param).toBe('messages[0].content[0].type');
  });
});

describe('toAnthropicRequest: parameters', () => {
  it('prefers max_completion_tokens over max_tokens', () => {
    expect(body({ max_tokens: 10, max_completion_tokens: 20 }).max_tokens).toBe(20);
    expect(body({ max_tokens: 10 }).max_tokens).toBe(10);
    expect(body({ max_tokens: null, max_completion_tokens: null }).max_tokens).toBe(32_000);
  });

  it('defaults max_tokens per model family', () => {
    expect(defaultMaxTokens('claude-3-haiku-20240307')).toBe(4_096);
    expect(defaultMaxTokens('claude-3-5-sonnet-20241022')).toBe(8_192);
    expect(defaultMaxTokens('claude-3-7-sonnet-latest')).toBe(32_000);
    expect(defaultMaxTokens('claude-opus-4-1')).toBe(32_000);
    expect(defaultMaxTokens('claude-opus-5')).toBe(32_000);
    expect(defaultMaxTokens('my-alias')).toBe(4_096);
  });

  it('maps stop as a string or an array to stop_sequences', () => {
    expect(body({ stop: 'x' }).stop_sequences).toEqual(['x']);
    expect(body({ stop: ['a', 'b'] }).stop_sequences).toEqual(['a', 'b']);
    expect(body({ stop: [] })).not.toHaveProperty('stop_sequences');
    expect(body({ stop: null })).not.toHaveProperty('stop_sequences');
  });

  it('keeps temperature 0–1 and rejects higher values with a message naming Anthropic', () => {
    expect(body({ temperature: 0 }).temperature).toBe(0);
    expect(body({ temperature: 1 }).temperature).toBe(1);
    const err = translationError(() => body({ temperature: 1.5 }));
    expect(err.param).toBe('temperature');
    expect(err.message).toMatch(/Anthropic/);
  });

  it('does not send temperature, top_p or top_k to Claude models after Opus 4.6, which fix their own sampling', () => {
    const sampling = { temperature: 0.2, top_p: 0.5, top_k: 40 } as Partial<ChatCompletionRequest>;
    for (const model of ['claude-opus-5', 'claude-sonnet-5', 'claude-fable-5', 'claude-mythos-5', 'claude-opus-4-8', 'claude-opus-4-7', 'claude-mythos-preview', 'claude-opus-5-20260724', 'claude-opus-6']) {
      const b = toAnthropicRequest({ model: `anthropic/${model}`, messages: [{ role: 'user', content: 'hi' }], ...sampling }, { ...ctx, model }).body;
      expect([model, b]).toEqual([model, expect.not.objectContaining({ temperature: expect.anything() })]);
      expect(b).not.toHaveProperty('top_p');
      expect(b).not.toHaveProperty('top_k');
    }
    for (const model of ['claude-opus-4-6', 'claude-sonnet-4-6', 'claude-haiku-4-5', 'claude-sonnet-4-5-20250929', 'claude-3-7-sonnet-20250219']) {
      const b = toAnthropicRequest({ model: `anthropic/${model}`, messages: [{ role: 'user', content: 'hi' }], ...sampling }, { ...ctx, model }).body;
      expect(b).toMatchObject({ temperature: 0.2, top_p: 0.5, top_k: 40 });
    }
    // Out of range is still an error the client should see, whatever the model.
    expect(translationError(() => toAnthropicRequest({ model: 'anthropic/claude-opus-5', messages: [{ role: 'user', content: 'hi' }], temperature: 1.5 }, { ...ctx, model: 'claude-opus-5' })).param).toBe('temperature');
  });

  it('maps user (or else safety_identifier) to metadata.user_id', () => {
    expect(body({ user: 'u1', safety_identifier: 's1' }).metadata).toEqual({ user_id: 'u1' });
    expect(body({ safety_identifier: 's1' }).metadata).toEqual({ user_id: 's1' });
    expect(body({ user: '' })).not.toHaveProperty('metadata');
  });

  it('maps response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    // Anthropic's structured outputs want every object closed (output-schema.ts).
    expect(body({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }).output_config)
      .toEqual({ format: { type: 'json_schema', schema: { ...schema, additionalProperties: false } } });
    const jsonObject = body({ messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'u' }], response_format: { type: 'json_object' } });
    expect(jsonObject.system).toEqual([userText('s'), userText(JSON_OBJECT_INSTRUCTION)]);
    expect(jsonObject).not.toHaveProperty('output_config');
    expect(body({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }).system).toEqual([userText(JSON_OBJECT_INSTRUCTION)]);
    expect(body({ response_format: { type: 'text' } })).not.toHaveProperty('output_config');
  });

  it('maps reasoning_effort to output_config.effort and rejects unknown values', () => {
    expect(body({ reasoning_effort: 'medium' }).output_config).toEqual({ effort: 'medium' });
    expect(body({ reasoning_effort: 'minimal' }).output_config).toEqual({ effort: 'low' });
    expect(body({ reasoning_effort: 'none' })).not.toHaveProperty('output_config');
    expect(translationError(() => body({ reasoning_effort: 'extreme' })).param).toBe('reasoning_effort');
  });

  it('sets stream only when streaming', () => {
    expect(body({ stream: true }).stream).toBe(true);
    expect(body({ stream: false })).not.toHaveProperty('stream');
  });
});

describe('toAnthropicRequest: tools', () => {
  const tool = (name: string) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } });
  const schema = { type: 'object', properties: {} };

  it('maps every tool_choice form', () => {
    const tools = [tool('f')];
    expect(body({ tools, tool_choice: 'auto' }).tool_choice).toEqual({ type: 'auto' });
    expect(body({ tools, tool_choice: 'none' }).tool_choice).toEqual({ type: 'none' });
    expect(body({ tools, tool_choice: 'required' }).tool_choice).toEqual({ type: 'any' });
    expect(body({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(body({ tools })).not.toHaveProperty('tool_choice');
  });

  it('maps parallel_tool_calls:false to disable_parallel_tool_use', () => {
    const tools = [tool('f')];
    expect(body({ tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(body({ tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(body({ tools, tool_choice: 'none', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'none' });
    expect(body({ tools, parallel_tool_calls: true })).not.toHaveProperty('tool_choice');
  });

  it('refuses an allowed_tools choice, naming tool_choice (the door validates before any provider)', () => {
    const e = translationError(() => body({
      tools: [tool('f'), tool('g'), tool('h')],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'g' } }] } } as never,
    }));
    expect(e.param).toBe('tool_choice');
  });

  it('omits tools and harmless choices when there are no tools, and rejects forcing a tool', () => {
    expect(body({ tools: [], tool_choice: 'auto' })).not.toHaveProperty('tools');
    expect(body({ tool_choice: 'none' })).not.toHaveProperty('tool_choice');
    expect(translationError(() => body({ tool_choice: 'required' })).param).toBe('tool_choice');
  });

  it('rejects non-function tools', () => {
    expect(translationError(() => body({ tools: [{ type: 'custom', custom: { name: 'x' } } as never] })).param).toBe('tools[0].type');
  });
});

describe('toAnthropicRequest: field policy', () => {
  it('rejects n>1 naming n and Anthropic', () => {
    const err = translationError(() => body({ n: 2 }));
    expect(err.param).toBe('n');
    expect(err.message).toMatch(/Anthropic/);
    expect(() => body({ n: 1 })).not.toThrow();
  });

  it.each([
    ['logprobs', true],
    ['top_logprobs', 3],
    ['logit_bias', { '50256': -100 }],
    ['modalities', ['text', 'audio']],
    ['audio', { voice: 'alloy', format: 'mp3' }],
    ['web_search_options', {}],
    ['functions', [{ name: 'f' }]],
    ['function_call', 'auto'],
  ])('rejects %s when set', (field, value) => {
    const err = translationError(() => body({ [field]: value }));
    expect(err.param).toBe(field);
    expect(err.message).toMatch(/Anthropic/);
  });

  it.each([
    ['logprobs', false], ['top_logprobs', 0], ['logit_bias', {}], ['modalities', ['text']], ['audio', null],
  ])('accepts %s at its OpenAI default', (field, value) => {
    expect(() => body({ [field]: value })).not.toThrow();
  });

  it('ignores the harmless fields without changing the request', () => {
    const plain = body({});
    const noisy = body(Object.fromEntries(ANTHROPIC_IGNORED_FIELDS.map((f) => [f, HARMLESS[f] ?? 'x'])));
    expect(noisy).toEqual(plain);
  });

  it('keeps the three field lists disjoint', () => {
    const all = [...ANTHROPIC_MAPPED_FIELDS, ...ANTHROPIC_IGNORED_FIELDS, ...ANTHROPIC_REJECTED_FIELDS];
    expect(new Set(all).size).toBe(all.length);
  });
});
