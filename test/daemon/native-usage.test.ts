// Reading usage out of native answers without parsing them whole, the same way the translating
// readers read it.
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/daemon/http/sse.js';
import { irUsageToTokens, type TokenUsage } from '../../src/daemon/observe/events.js';
import { createNativeUsageTap, objectAfterLastKey } from '../../src/daemon/relay/native-usage.js';
import type { ProtocolId, ProviderProtocol, Target } from '../../src/providers/ir/protocol.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import { geminiProvider } from '../../src/providers/protocols/gemini/provider/index.js';
import { openaiChatProvider } from '../../src/providers/protocols/openai-chat/provider/index.js';
import { openaiResponsesProvider } from '../../src/providers/protocols/openai-responses/provider/index.js';

describe('objectAfterLastKey', () => {
  it('finds the last top-level usage object, ignoring look-alikes inside strings', () => {
    const text = JSON.stringify({ choices: [{ message: { content: 'the "usage": {"prompt_tokens": 999} } trap' } }], usage: { prompt_tokens: 3, completion_tokens: 4, nested: { s: '}{"' } } });
    expect(objectAfterLastKey(Buffer.from(text), 'usage')).toEqual({ prompt_tokens: 3, completion_tokens: 4, nested: { s: '}{"' } });
    expect(objectAfterLastKey(Buffer.from('{"a":1}'), 'usage')).toBeUndefined();
    expect(objectAfterLastKey(Buffer.from('{"usage":{"x":'), 'usage')).toBeUndefined();
  });
});

describe('native usage taps', () => {
  it('reads an OpenAI JSON answer split across chunks', () => {
    const tap = createNativeUsageTap('openai-chat', 'application/json')!;
    const body = Buffer.from(JSON.stringify({ id: 'x', model: 'gpt-5.4', choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 5 } } }));
    tap.push(body.subarray(0, 10));
    tap.push(body.subarray(10));
    expect(tap.usage()).toEqual({ inputTokens: 7, outputTokens: 2, cachedTokens: 5 });
    expect(tap.model()).toBe('gpt-5.4');
  });

  it('reads Gemini usage from the last element of a JSON-array stream', () => {
    const tap = createNativeUsageTap('gemini', 'application/json; charset=UTF-8')!;
    tap.push(Buffer.from('[{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1},"modelVersion":"models/gemini-3.5-flash"}\r\n,{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":6,"thoughtsTokenCount":2}}]'));
    expect(tap.usage()).toEqual({ inputTokens: 3, outputTokens: 8, cachedTokens: 0, reasoningTokens: 2 }); // Gemini leaves out counts that are 0
    expect(tap.model()).toBe('gemini-3.5-flash');
  });

  it('knows when an Anthropic or OpenAI stream has said it is complete', () => {
    const a = createNativeUsageTap('anthropic', 'text/event-stream')!;
    a.push(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"model":"claude-opus-5","usage":{"input_tokens":4,"cache_read_input_tokens":6,"output_tokens":1}}}\n\n'));
    expect(a.complete()).toBe(false);
    a.push(Buffer.from('event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":9}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'));
    expect(a.complete()).toBe(true);
    expect(a.usage()).toEqual({ inputTokens: 10, cachedTokens: 6, cacheWriteTokens: 0, cacheWrite1hTokens: 0, outputTokens: 9, reasoningTokens: 0 });
    const o = createNativeUsageTap('openai-chat', 'text/event-stream')!;
    o.push(Buffer.from('data: {"model":"gpt-5.4","choices":[]}\n\ndata: [DONE]\n\n'));
    expect(o.complete()).toBe(true);
  });
});

describe('a Chat stream written with spaces (Python servers)', () => {
  it('still finds the usage chunk and the model', () => {
    const tap = createNativeUsageTap('openai-chat', 'text/event-stream')!;
    tap.push(Buffer.from('data: {"model": "qwen3", "choices": [{"delta": {"content": "hi"}}], "usage": null}\n\n'));
    tap.push(Buffer.from('data: {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}\n\ndata: [DONE]\n\n'));
    expect(tap.usage()).toEqual({ inputTokens: 3, outputTokens: 2 });
    expect(tap.model()).toBe('qwen3');
  });
});

/**
 * Each protocol's usage objects, read four ways: the pass-through's tap on the whole answer and on
 * the stream (bytes relayed untouched), and the provider side's readers of the answer and of the
 * stream (translation). All four must count the same, as the tracker and the usage history see it.
 */
describe('one usage reading per protocol: the pass-through tap and the translating readers agree', () => {
  const TARGETS: Record<ProtocolId, [ProviderProtocol, Target]> = {
    anthropic: [anthropicProvider, { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-x' }],
    'openai-chat': [openaiChatProvider, { provider: 'openai', displayName: 'OpenAI', model: 'gpt-x' }],
    'openai-responses': [openaiResponsesProvider, { provider: 'openai', displayName: 'OpenAI', model: 'gpt-x' }],
    gemini: [geminiProvider, { provider: 'gemini', displayName: 'Gemini', model: 'gemini-x' }],
  };
  // The answer text holds a look-alike of a usage object: the tap's scan must not take it.
  const TEXT = 'the "usage": {"input_tokens": 999, "prompt_tokens": 999, "promptTokenCount": 999} trap';
  const sse = (events: Array<[string | undefined, unknown]>, done = false): string =>
    events.map(([name, data]) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '');

  /** A whole answer carrying `usage`, and a stream whose events carry `streamed` (in order), as each protocol writes them. */
  const ANSWERS: Record<ProtocolId, { whole(usage: unknown): unknown; stream(streamed: unknown[]): string }> = {
    anthropic: {
      whole: (usage) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x-1', content: [{ type: 'text', text: TEXT }], stop_reason: 'end_turn', stop_sequence: null, usage }),
      stream: ([start, ...deltas]) => sse([
        ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x-1', content: [], usage: start } }],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } }],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ...deltas.map((usage): [string, unknown] => ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }]),
        ['message_stop', { type: 'message_stop' }],
      ]),
    },
    'openai-chat': {
      whole: (usage) => ({ id: 'c1', object: 'chat.completion', model: 'gpt-x-1', choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }], usage }),
      stream: (streamed) => sse([
        [undefined, { id: 'c1', object: 'chat.completion.chunk', model: 'gpt-x-1', choices: [{ index: 0, delta: { role: 'assistant', content: TEXT }, finish_reason: null }], usage: null }],
        [undefined, { id: 'c1', object: 'chat.completion.chunk', model: 'gpt-x-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }],
        ...streamed.map((usage): [undefined, unknown] => [undefined, { id: 'c1', object: 'chat.completion.chunk', model: 'gpt-x-1', choices: [], usage }]),
      ], true),
    },
    'openai-responses': {
      whole: (usage) => ({ id: 'resp_1', object: 'response', model: 'gpt-x-1', status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: TEXT }] }], usage }),
      stream: (streamed) => sse([
        ['response.created', { type: 'response.created', response: { id: 'resp_1', object: 'response', model: 'gpt-x-1', status: 'in_progress', output: [], usage: null } }],
        ['response.output_text.delta', { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: TEXT }],
        ['response.completed', { type: 'response.completed', response: { id: 'resp_1', object: 'response', model: 'gpt-x-1', status: 'completed', output: [{ type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: TEXT }] }], usage: streamed.at(-1) } }],
      ]),
    },
    gemini: {
      whole: (usageMetadata) => ({ candidates: [{ content: { role: 'model', parts: [{ text: TEXT }] }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-x-1', responseId: 'r1' }),
      // Every fragment carries the counts so far.
      stream: (streamed) => sse(streamed.map((usageMetadata, i) => [undefined, {
        candidates: [{ content: { role: 'model', parts: [{ text: TEXT }] }, index: 0, ...(i === streamed.length - 1 ? { finishReason: 'STOP' } : {}) }], usageMetadata, modelVersion: 'gemini-x-1', responseId: 'r1',
      }])),
    },
  };

  const ROWS: Array<{ what: string; protocol: ProtocolId; usage: unknown; streamed?: unknown[]; tokens: TokenUsage }> = [
    {
      what: 'Anthropic: input_tokens leave out cache reads and writes, the tracker counts them in',
      protocol: 'anthropic', usage: { input_tokens: 1000, cache_read_input_tokens: 3000, cache_creation_input_tokens: 500, output_tokens: 800 },
      streamed: [{ input_tokens: 1000, cache_read_input_tokens: 3000, cache_creation_input_tokens: 500, output_tokens: 1 }, { output_tokens: 800 }],
      tokens: { inputTokens: 4500, cachedTokens: 3000, cacheWriteTokens: 500, cacheWrite1hTokens: 0, outputTokens: 800, reasoningTokens: 0 },
    },
    {
      what: 'Anthropic: a message_delta that repeats the input count alone keeps message_start\'s cache counts',
      protocol: 'anthropic', usage: { input_tokens: 10, cache_read_input_tokens: 6, cache_creation_input_tokens: 0, output_tokens: 9 },
      streamed: [{ input_tokens: 10, cache_read_input_tokens: 6, cache_creation_input_tokens: 0, output_tokens: 1 }, { input_tokens: 10, cache_read_input_tokens: null, output_tokens: 9 }],
      tokens: { inputTokens: 16, cachedTokens: 6, cacheWriteTokens: 0, cacheWrite1hTokens: 0, outputTokens: 9, reasoningTokens: 0 },
    },
    {
      what: 'Anthropic: cache writes by TTL, the 1-hour part kept beside the total (message_delta does not repeat the split)',
      protocol: 'anthropic',
      usage: { input_tokens: 40, cache_read_input_tokens: 1200, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, output_tokens: 30 },
      streamed: [
        { input_tokens: 40, cache_read_input_tokens: 1200, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, output_tokens: 1 },
        { input_tokens: 40, cache_read_input_tokens: 1200, cache_creation_input_tokens: 300, output_tokens: 30 },
      ],
      tokens: { inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200, outputTokens: 30, reasoningTokens: 0 },
    },
    {
      what: 'OpenAI Chat: cached prompt tokens, reasoning counted in output',
      protocol: 'openai-chat', usage: { prompt_tokens: 2000, completion_tokens: 1500, total_tokens: 3500, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 1000 } },
      tokens: { inputTokens: 2000, cachedTokens: 1024, outputTokens: 1500, reasoningTokens: 1000 },
    },
    {
      what: 'OpenAI Chat: cache writes (OpenRouter)',
      protocol: 'openai-chat', usage: { prompt_tokens: 3000, completion_tokens: 100, total_tokens: 3100, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 1500 } },
      tokens: { inputTokens: 3000, cachedTokens: 1000, cacheWriteTokens: 1500, outputTokens: 100 },
    },
    {
      what: 'OpenAI Chat: DeepSeek\'s prompt_cache_hit_tokens',
      protocol: 'openai-chat', usage: { prompt_tokens: 900, completion_tokens: 50, total_tokens: 950, prompt_cache_hit_tokens: 600, prompt_cache_miss_tokens: 300 },
      tokens: { inputTokens: 900, cachedTokens: 600, outputTokens: 50 },
    },
    {
      what: 'OpenAI Chat: details reported as 0 are counts, details left out are unknown',
      protocol: 'openai-chat', usage: { prompt_tokens: 25, completion_tokens: 9, total_tokens: 34, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
      tokens: { inputTokens: 25, cachedTokens: 0, outputTokens: 9, reasoningTokens: 0 },
    },
    {
      what: 'Responses: input_tokens_details and output_tokens_details',
      protocol: 'openai-responses', usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 32 }, output_tokens: 180, output_tokens_details: { reasoning_tokens: 160 }, total_tokens: 230 },
      tokens: { inputTokens: 50, cachedTokens: 32, outputTokens: 180, reasoningTokens: 160 },
    },
    {
      what: 'Responses: cache writes',
      protocol: 'openai-responses', usage: { input_tokens: 3000, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 1500 }, output_tokens: 100, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 3100 },
      tokens: { inputTokens: 3000, cachedTokens: 1000, cacheWriteTokens: 1500, outputTokens: 100, reasoningTokens: 0 },
    },
    {
      what: 'Gemini: thoughts counted in output, tool-use prompt tokens in input, cumulative fragments',
      protocol: 'gemini', usage: { promptTokenCount: 5000, cachedContentTokenCount: 4000, candidatesTokenCount: 300, thoughtsTokenCount: 700, toolUsePromptTokenCount: 20, totalTokenCount: 6020 },
      streamed: [
        { promptTokenCount: 5000, cachedContentTokenCount: 4000, candidatesTokenCount: 100, thoughtsTokenCount: 700, toolUsePromptTokenCount: 20, totalTokenCount: 5820 },
        { promptTokenCount: 5000, cachedContentTokenCount: 4000, candidatesTokenCount: 300, thoughtsTokenCount: 700, toolUsePromptTokenCount: 20, totalTokenCount: 6020 },
      ],
      tokens: { inputTokens: 5020, cachedTokens: 4000, outputTokens: 1000, reasoningTokens: 700 },
    },
    {
      what: 'Gemini: counts left out are 0 (its JSON omits zeros)',
      protocol: 'gemini', usage: { promptTokenCount: 8, candidatesTokenCount: 6, totalTokenCount: 14 },
      tokens: { inputTokens: 8, cachedTokens: 0, outputTokens: 6, reasoningTokens: 0 },
    },
  ];

  it.each(ROWS)('$what', ({ protocol, usage, streamed, tokens }) => {
    const [provider, target] = TARGETS[protocol];
    const answer = ANSWERS[protocol];
    const whole = Buffer.from(JSON.stringify(answer.whole(usage)));
    const stream = Buffer.from(answer.stream(streamed ?? [usage]));

    const jsonTap = createNativeUsageTap(protocol, 'application/json')!;
    jsonTap.push(whole.subarray(0, 40));
    jsonTap.push(whole.subarray(40));
    const sseTap = createNativeUsageTap(protocol, 'text/event-stream')!;
    sseTap.push(stream.subarray(0, 50));
    sseTap.push(stream.subarray(50));
    const reader = provider.createStreamReader(target);
    const parser = new SseParser();
    for (const ev of [...parser.push(stream), ...parser.end()]) reader.push(ev);
    reader.end();

    expect({
      'pass-through, whole answer': jsonTap.usage(),
      'pass-through, stream': sseTap.usage(),
      'translated, whole answer': irUsageToTokens(provider.readResponse(JSON.parse(whole.toString()), target).usage),
      'translated, stream': irUsageToTokens(reader.usage()),
    }).toEqual({
      'pass-through, whole answer': tokens, 'pass-through, stream': tokens, 'translated, whole answer': tokens, 'translated, stream': tokens,
    });
    // The model the provider says answered, read by the tap either way.
    expect([jsonTap.model(), sseTap.model()]).toEqual([`${target.model}-1`, `${target.model}-1`]);
  });
});
