// Finish reasons, usage arithmetic and lenient parsing of non-streaming Anthropic responses.
import { describe, expect, it } from 'vitest';
import { fromAnthropicResponse, fromAnthropicUsage, mapAnthropicStopReason } from './via-hub.js';
import type { TranslateContext } from './via-hub.js';

const ctx: TranslateContext = { model: 'claude-sonnet-4-5', created: 1767225600, fallbackId: 'chatcmpl-fallback', includeUsage: false };

describe('mapAnthropicStopReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['compaction', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['something_new', 'stop'],
    [null, 'stop'],
    [undefined, 'stop'],
  ])('%s → %s', (reason, expected) => {
    expect(mapAnthropicStopReason(reason)).toBe(expected);
  });
});

describe('fromAnthropicUsage', () => {
  it('adds cache reads and writes to prompt tokens and keeps prompt + completion = total', () => {
    expect(fromAnthropicUsage({
      input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000,
      output_tokens: 50, output_tokens_details: { thinking_tokens: 20 },
    })).toEqual({
      prompt_tokens: 3210, completion_tokens: 50, total_tokens: 3260,
      prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 200 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
  });

  it('treats missing and null counts as 0', () => {
    expect(fromAnthropicUsage({ input_tokens: 7, cache_read_input_tokens: null, output_tokens_details: null })).toEqual({
      prompt_tokens: 7, completion_tokens: 0, total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(fromAnthropicUsage(undefined).total_tokens).toBe(0);
  });
});

describe('fromAnthropicResponse', () => {
  it('never throws on a body missing optional (or even required) fields', () => {
    for (const body of [undefined, null, 'text', 42, [], {}, { content: 'nope' }, { content: [null, 1, { type: 'tool_use' }] }]) {
      expect(() => fromAnthropicResponse(body, ctx)).not.toThrow();
    }
    expect(fromAnthropicResponse({}, ctx)).toEqual({
      id: 'chatcmpl-fallback',
      object: 'chat.completion',
      created: 1767225600,
      model: 'anthropic/claude-sonnet-4-5',
      choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    });
  });

  it('prefers displayModel, else anthropic/<model from the body>', () => {
    expect(fromAnthropicResponse({ model: 'claude-x-1' }, ctx).model).toBe('anthropic/claude-x-1');
    expect(fromAnthropicResponse({ model: 'claude-x-1' }, { ...ctx, displayModel: 'fast' }).model).toBe('fast');
  });

  it('gives tool calls stringified input, {} when input is missing, and finish_reason tool_calls', () => {
    const got = fromAnthropicResponse({
      id: 'msg_1',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: [1, 'é'] } }, { type: 'tool_use', id: 'toolu_2', name: 'g' }],
      stop_reason: 'tool_use',
    }, ctx);
    expect(got.choices[0].message.content).toBeNull();
    expect(got.choices[0].message.tool_calls).toEqual([
      { id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":[1,"é"]}' } },
      { id: 'toolu_2', type: 'function', function: { name: 'g', arguments: '{}' } },
    ]);
    expect(got.choices[0].finish_reason).toBe('tool_calls');
  });

  it('maps model_context_window_exceeded to length', () => {
    expect(fromAnthropicResponse({ stop_reason: 'model_context_window_exceeded' }, ctx).choices[0].finish_reason).toBe('length');
  });
});
