// Reading usage out of native answers without parsing them whole.
import { describe, expect, it } from 'vitest';
import { createNativeUsageTap, objectAfterLastKey } from '../../src/daemon/relay/native-usage.js';

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
    expect(tap.usage()).toEqual({ inputTokens: 3, outputTokens: 8, reasoningTokens: 2 });
    expect(tap.model()).toBe('gemini-3.5-flash');
  });

  it('knows when an Anthropic or OpenAI stream has said it is complete', () => {
    const a = createNativeUsageTap('anthropic', 'text/event-stream')!;
    a.push(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"model":"claude-opus-5","usage":{"input_tokens":4,"cache_read_input_tokens":6,"output_tokens":1}}}\n\n'));
    expect(a.complete()).toBe(false);
    a.push(Buffer.from('event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":9}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'));
    expect(a.complete()).toBe(true);
    expect(a.usage()).toEqual({ inputTokens: 10, cachedTokens: 6, outputTokens: 9 });
    const o = createNativeUsageTap('openai-chat', 'text/event-stream')!;
    o.push(Buffer.from('data: {"model":"gpt-5.4","choices":[]}\n\ndata: [DONE]\n\n'));
    expect(o.complete()).toBe(true);
  });
});
