// The Anthropic provider module on its own: the Messages call it builds from the IR (reasoning
// given back only to the provider that minted it, cache hints, thinking settings, the limits it
// refuses naming the client's field), and how it reads answers and streams into the IR.
import { describe, expect, it, vi } from 'vitest';
import type { Target } from '../../src/providers/ir/protocol.js';
import type { Message, Request, StreamEvent } from '../../src/providers/ir/types.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { SseParser } from '../../src/daemon/http/sse.js';
import { TranslationError, type SseEvent } from '../../src/providers/types.js';
import { fixtureNames, readFixtureBytes } from '../providers/anthropic-fixture-helpers.js';

const target: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
const base: Request = { model: 'claude-sonnet-4-5', system: [], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [], stopSequences: [], stream: false };
const build = (req: Partial<Request>, t: Target = target) => anthropicProvider.buildRequest({ ...base, ...req }, t).body;
/** Through the Chat door first, as /v1/chat/completions does. */
const viaChat = (body: Record<string, unknown>, t: Target = target) =>
  anthropicProvider.buildRequest(openaiChatClient.parseRequest({ model: 'anthropic/x', messages: [{ role: 'user', content: 'hi' }], ...body }, t), t).body;

function refusal(fn: () => unknown): TranslationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TranslationError);
    return e as TranslationError;
  }
  throw new Error('expected a TranslationError');
}

const text = (t: string) => ({ type: 'text', text: t });

describe('Anthropic provider: building the call', () => {
  it('merges turns, puts tool results first in the user turn, and skips empty turns', () => {
    const b = viaChat({ messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'calling', tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'g', arguments: '' } },
      ] },
      { role: 'user', content: 'note first' },
      { role: 'tool', tool_call_id: 'call_1', content: 'r1' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '' },
      { role: 'system', content: 's' },
      { role: 'user', content: '' },
      { role: 'user', content: 'then this' },
    ] });
    expect(b.system).toEqual([text('s')]);
    expect(b.messages).toEqual([
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [text('calling'), { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'toolu_2', name: 'g', input: {} }] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: 'r1' }, { type: 'tool_result', tool_use_id: 'toolu_2' },
        text('note first'), text('then this'),
      ] },
    ]);
  });

  it('refuses what Anthropic cannot take, naming the client\'s own field', () => {
    const bad = (content: unknown[]) => () => viaChat({ messages: [{ role: 'user', content }] });
    const tiff = refusal(bad([{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }]));
    expect([tiff.param, tiff.message]).toEqual(['messages[0].content[0].image_url.url', expect.stringMatching(/image\/tiff.*Anthropic/)]);
    const audio = refusal(bad([{ type: 'text', text: 'x' }, { type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }]));
    expect([audio.param, audio.message]).toEqual(['messages[0].content[1].type', 'Audio input is not supported for Anthropic models.']);
    const args = refusal(() => viaChat({ messages: [{ role: 'assistant', content: null, tool_calls: [
      { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
      { id: 'b', type: 'function', function: { name: 'f', arguments: '{"city": "Par' } },
    ] }] }));
    expect([args.param, args.message]).toEqual(['messages[0].tool_calls[1].function.arguments', expect.stringMatching(/not valid JSON/)]);
    expect(refusal(() => viaChat({ temperature: 1.5 })).param).toBe('temperature');
    expect(refusal(() => viaChat({ tool_choice: 'required' })).param).toBe('tool_choice');
  });

  it('names IR fields when a door gave none', () => {
    expect(refusal(() => build({ messages: [{ role: 'user', parts: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/bmp', data: 'AA' } }] }] })).param).toBe('messages[0].parts[0]');
    expect(refusal(() => build({ candidates: 2 })).param).toBe('candidates');
    expect(refusal(() => build({ logprobs: { top: 0 } })).param).toBe('logprobs');
    expect(build({ candidates: 1 })).not.toHaveProperty('candidates');
  });

  it('gives thinking back with its signature only to the provider that minted it', () => {
    const turn: Message = { role: 'assistant', parts: [
      { type: 'reasoning', text: 'mine', state: { provider: 'anthropic', data: { signature: 'sig-a' } } },
      { type: 'reasoning', text: '', redacted: true, state: { provider: 'anthropic', data: { data: 'enc' } } },
      { type: 'reasoning', text: 'other provider', state: { provider: 'claude-proxy', data: { signature: 'sig-b' } } },
      { type: 'reasoning', text: 'gemini thoughts', state: { provider: 'gemini', data: { thoughtSignature: 'x' } } },
      { type: 'reasoning', text: 'no state' },
      { type: 'text', text: 'answer' },
    ] };
    const messages = [base.messages[0]!, turn];
    expect((build({ messages }).messages as unknown[])[1]).toEqual({ role: 'assistant', content: [
      { type: 'thinking', thinking: 'mine', signature: 'sig-a' }, { type: 'redacted_thinking', data: 'enc' }, text('answer'),
    ] });
    expect((build({ messages }, { ...target, provider: 'claude-proxy' }).messages as unknown[])[1]).toEqual({ role: 'assistant', content: [
      { type: 'thinking', thinking: 'other provider', signature: 'sig-b' }, text('answer'),
    ] });
  });

  it('sends cache hints as cache_control', () => {
    const b = build({
      system: [{ type: 'text', text: 'long guide', cache: { type: 'ephemeral', ttl: '1h' } }],
      messages: [{ role: 'user', parts: [
        { type: 'document', source: { kind: 'text', mediaType: 'text/plain', text: 'doc' }, title: 'T', cache: { type: 'ephemeral' } },
        { type: 'tool-result', callId: 'c', content: [{ type: 'text', text: 'r' }], cache: { type: 'ephemeral' } },
      ] }],
      tools: [{ name: 'f', inputSchema: { type: 'object' }, cache: { type: 'ephemeral' } }],
    });
    expect(b.system).toEqual([{ type: 'text', text: 'long guide', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(b.messages).toEqual([{ role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'c', content: [text('r')], cache_control: { type: 'ephemeral' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' }, title: 'T', cache_control: { type: 'ephemeral' } },
    ] }]);
    expect(b.tools).toEqual([{ name: 'f', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }]);
  });

  it('maps reasoning settings: a budget or a switch to thinking, effort to output_config', () => {
    expect(build({ reasoning: { budgetTokens: 2048 } }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(build({ reasoning: { enabled: true, includeText: false } }).thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    expect(build({ reasoning: { enabled: false, effort: 'high' } })).toMatchObject({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } });
    expect(build({ reasoning: { effort: 'minimal' } })).toEqual(expect.not.objectContaining({ thinking: expect.anything() }));
    expect(build({ reasoning: { effort: 'none' } })).not.toHaveProperty('output_config');
  });

  it('maps tool choice and parallel_tool_calls', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    expect(viaChat({ tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(viaChat({ tools, tool_choice: 'none', parallel_tool_calls: false }).tool_choice).toEqual({ type: 'none' });
    expect(viaChat({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(viaChat({ tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(viaChat({ tool_choice: 'none', parallel_tool_calls: false })).not.toHaveProperty('tool_choice');
  });

  it('does not send sampling to Claude models that fix their own, but still refuses an out-of-range temperature', () => {
    const later = { ...target, model: 'claude-opus-5' };
    expect(build({ temperature: 0.2, topP: 0.5, topK: 40 }, later)).toEqual(expect.not.objectContaining({ temperature: expect.anything(), top_p: expect.anything(), top_k: expect.anything() }));
    expect(build({ temperature: 0.2, topP: 0.5, topK: 40 })).toMatchObject({ temperature: 0.2, top_p: 0.5, top_k: 40 });
    expect(refusal(() => build({ temperature: 1.5 }, later)).param).toBe('temperature');
  });
});

describe('Anthropic provider: reading an answer', () => {
  it('keeps thinking signatures and redacted data as this provider\'s state', () => {
    const answer = anthropicProvider.readResponse({
      id: 'msg_1', model: 'claude-x', stop_reason: 'stop_sequence', stop_sequence: 'END',
      content: [{ type: 'thinking', thinking: 't', signature: 'sig' }, { type: 'redacted_thinking', data: 'enc' }, { type: 'tool_use', id: 'tu', name: 'f' }, { type: 'server_tool_use' }],
    }, { ...target, provider: 'claude-proxy' });
    expect(answer).toEqual({ id: 'msg_1', model: 'claude-x', choices: [{ index: 0, finish: 'stop-sequence', stopSequence: 'END', parts: [
      { type: 'reasoning', text: 't', state: { provider: 'claude-proxy', data: { signature: 'sig' } } },
      { type: 'reasoning', text: '', redacted: true, state: { provider: 'claude-proxy', data: { data: 'enc' } } },
      { type: 'tool-call', id: 'tu', name: 'f', arguments: '{}' },
    ] }] });
  });

  it('never throws on odd bodies', () => {
    for (const body of [undefined, null, 'text', 42, [], {}, { content: 'nope' }, { content: [null, 1, { type: 'tool_use' }] }]) {
      expect(() => anthropicProvider.readResponse(body, target)).not.toThrow();
    }
    expect(anthropicProvider.readResponse({ stop_reason: 'something_new' }, target).choices[0]!.finish).toBe('other');
  });
});

describe('Anthropic provider: reading a stream', () => {
  const ev = (data: Record<string, unknown>): SseEvent => ({ event: data.type as string, data: JSON.stringify(data) });
  const start = ev({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 } } });
  const stop = ev({ type: 'message_stop' });
  const run = (events: SseEvent[]) => {
    const r = anthropicProvider.createStreamReader(target);
    const out: StreamEvent[] = events.flatMap((e) => r.push(e));
    return { r, out: [...out, ...r.end()] };
  };

  it('carries a thinking block\'s signature (and a redacted block\'s data) on reasoning-end', () => {
    const { out } = run([
      start,
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'enc' } }),
      ev({ type: 'content_block_stop', index: 1 }),
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }),
      stop,
    ]);
    expect(out.filter((e) => e.type.startsWith('reasoning'))).toEqual([
      { type: 'reasoning', text: 'hmm' },
      { type: 'reasoning-end', state: { provider: 'anthropic', data: { signature: 'EqQB' } } },
      { type: 'reasoning-end', redacted: true, state: { provider: 'anthropic', data: { data: 'enc' } } },
    ]);
    expect(out.at(-1)).toEqual({ type: 'finish', reason: 'stop', usage: { inputTokens: 15, outputTokens: 7, cachedInputTokens: 5, cacheWriteTokens: 0, cacheWrite1hTokens: 0, reasoningTokens: 0 } });
  });

  it('opens one call per tool block, however often its start repeats', () => {
    const toolStart = ev({ type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_a', name: 'f', input: {} } });
    const { out } = run([start, toolStart, toolStart, ev({ type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '' } }),
      ev({ type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }), ev({ type: 'content_block_stop', index: 3 }), stop]);
    expect(out.filter((e) => e.type.startsWith('tool'))).toEqual([
      { type: 'tool-call-start', id: 'toolu_a', name: 'f' },
      { type: 'tool-call-arguments', id: 'toolu_a', delta: '{"a":1}' },
      { type: 'tool-call-end', id: 'toolu_a' },
    ]);
  });

  it('tracks usage for accounting, keeping message_start\'s input counts when message_delta sends null', () => {
    const r = anthropicProvider.createStreamReader(target);
    expect(r.usage()).toBeUndefined();
    r.push(start);
    r.push(ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: null, cache_read_input_tokens: null, output_tokens: 7 } }));
    expect(r.usage()).toEqual({ inputTokens: 15, outputTokens: 7, cachedInputTokens: 5, cacheWriteTokens: 0, cacheWrite1hTokens: 0, reasoningTokens: 0 });
    expect(r.complete()).toBe(false);
    r.push(stop);
    expect(r.complete()).toBe(true);
  });

  it('says the stream ended early at an EOF before message_stop, even before message_start', () => {
    for (const events of [[], [ev({ type: 'ping' })], [start]]) {
      expect(run(events).out.at(-1)).toEqual({ type: 'error', error: { status: 502, kind: 'stream_ended', message: 'upstream stream ended early: Anthropic closed the stream before message_stop.' } });
    }
    expect(run([start, stop]).out.at(-1)).toMatchObject({ type: 'finish' });
  });

  it('ends at an error event, with nothing after it, mapping its type', () => {
    const { out } = run([start, ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'late' } }), stop]);
    expect(out.slice(1)).toEqual([{ type: 'error', error: { status: 503, kind: 'overloaded', message: 'Overloaded' } }]);
    expect(run([{ event: 'error', data: 'not json' }]).out).toEqual([{ type: 'error', error: { status: 500, kind: 'server', message: 'Anthropic reported an error mid-stream with no message.' } }]);
  });

  it('reads events without an event: line by their data, and opens the message itself when content comes first', () => {
    const { out } = run([{ data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'z' } }) }, start, { data: stop.data }]);
    expect(out).toEqual([{ type: 'start' }, { type: 'text', text: 'z' }, expect.objectContaining({ type: 'finish', reason: 'stop' })]);
  });

  it('parses each event\'s JSON at most once, and pings and message_stop never', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const name of fixtureNames('.sse')) {
        const events = new SseParser().push(readFixtureBytes(`${name}.sse`));
        const needed = events.filter((e) => e.event !== 'ping' && e.event !== 'message_stop').length;
        parse.mockClear();
        const r = anthropicProvider.createStreamReader(target);
        for (const e of events) r.push(e);
        expect(parse.mock.calls.length, name).toBeLessThanOrEqual(needed);
      }
    } finally {
      parse.mockRestore();
    }
  });
});
