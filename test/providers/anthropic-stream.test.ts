// Stream translator behaviour outside the recorded fixtures: state, usage tracking, odd input.
import { describe, expect, it } from 'vitest';
import { createAnthropicStreamTranslator } from './via-hub.js';
import type { SseEvent } from '../../src/providers/types.js';
import type { StreamOutput, TranslateContext } from './via-hub.js';

const ctx: TranslateContext = { model: 'claude-sonnet-4-5', created: 5, fallbackId: 'chatcmpl-fb', includeUsage: false };

const ev = (data: Record<string, unknown>): SseEvent => ({ event: data.type as string, data: JSON.stringify(data) });
const start = ev({ type: 'message_start', message: { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', content: [], usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 } } });
const textStart = ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
const text = (t: string) => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
const messageDelta = ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } });
const stop = ev({ type: 'message_stop' });

const run = (events: SseEvent[], c: TranslateContext = ctx) => {
  const t = createAnthropicStreamTranslator(c);
  const out: StreamOutput[] = events.flatMap((e) => t.push(e));
  return { t, out: [...out, ...t.end()] };
};
const deltas = (out: StreamOutput[]) => out.map((o) => (o.kind === 'chunk' ? o.chunk.choices[0]?.delta : o.error));

describe('createAnthropicStreamTranslator', () => {
  it('emits each text delta immediately, one chunk per delta', () => {
    const t = createAnthropicStreamTranslator(ctx);
    expect(t.push(start)).toHaveLength(1);
    expect(t.push(textStart)).toEqual([]);
    expect(deltas(t.push(text('a')))).toEqual([{ content: 'a' }]);
    expect(deltas(t.push(text('b')))).toEqual([{ content: 'b' }]);
  });

  it('tracks usage for accounting even without include_usage, keeping message_start input counts', () => {
    const t = createAnthropicStreamTranslator(ctx);
    expect(t.usage()).toBeUndefined();
    t.push(start);
    expect(t.usage()?.prompt_tokens).toBe(15);
    t.push(ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: null, cache_read_input_tokens: null, output_tokens: 7 } }));
    expect(t.usage()).toMatchObject({ prompt_tokens: 15, completion_tokens: 7, total_tokens: 22, prompt_tokens_details: { cached_tokens: 5 } });
    const out = t.push(stop);
    expect(out).toHaveLength(1); // no usage chunk without include_usage
    expect(out[0]?.kind === 'chunk' && 'usage' in out[0].chunk).toBe(false);
  });

  it('emits nothing after an error event, and end() adds nothing', () => {
    const { out } = run([start, textStart, text('a'), ev({ type: 'error', error: { type: 'api_error', message: 'boom' } }), text('b'), messageDelta, stop]);
    expect(deltas(out)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'a' },
      { error: { message: 'boom', type: 'server_error', param: null, code: null } },
    ]);
  });

  it('handles an error event with unreadable data', () => {
    const { out } = run([start, { event: 'error', data: 'not json' }]);
    expect(out[1]).toEqual({ kind: 'error', error: { error: { message: 'Anthropic reported an error mid-stream with no message.', type: 'server_error', param: null, code: null } } });
  });

  it('end() says a stream that never started ended early, and adds nothing after message_stop', () => {
    // The client used to get a bare [DONE] here; nothing was answered, so it is an error now.
    expect(run([]).out).toEqual([expect.objectContaining({ kind: 'error' })]);
    expect(run([ev({ type: 'ping' })]).out).toEqual([expect.objectContaining({ kind: 'error' })]);
    const { out } = run([start, messageDelta, stop]);
    expect(out.at(-1)).toMatchObject({ kind: 'chunk', chunk: { choices: [{ finish_reason: 'stop' }] } });
  });

  it('ignores malformed data, unknown events, and a repeated message_start', () => {
    const { out } = run([start, { data: '{' }, { event: 'weird', data: '[]' }, start, textStart, text('x'), messageDelta, stop]);
    expect(deltas(out)).toEqual([{ role: 'assistant', content: '' }, { content: 'x' }, {}]);
  });

  it('opens the message itself when content arrives before message_start', () => {
    const { out } = run([textStart, text('x'), messageDelta, stop]);
    expect(out[0]).toMatchObject({ kind: 'chunk', chunk: { id: 'chatcmpl-fb', model: 'anthropic/claude-sonnet-4-5', choices: [{ delta: { role: 'assistant', content: '' } }] } });
    expect(deltas(out)).toEqual([{ role: 'assistant', content: '' }, { content: 'x' }, {}]);
  });

  it('uses the running tool counter, ignores a duplicated tool start, and fills "{}" for argument-less tools', () => {
    const toolStart = (index: number, id: string) => ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: 'f', input: {} } });
    const json = (index: number, partial: string) => ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } });
    const blockStop = (index: number) => ev({ type: 'content_block_stop', index });
    const { out } = run([start, toolStart(3, 'toolu_a'), toolStart(3, 'toolu_a'), json(3, ''), blockStop(3), toolStart(5, 'toolu_b'), json(5, '{"a":'), json(5, '1}'), blockStop(5), stop]);
    expect(deltas(out)).toEqual([
      { role: 'assistant', content: '' },
      { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '1}' } }] },
      {},
    ]);
  });

  it('puts the same id, created and model on every chunk, and usage:null on all but the usage chunk with include_usage', () => {
    const { out } = run([start, textStart, text('a'), messageDelta, stop], { ...ctx, includeUsage: true, displayModel: 'anthropic/sonnet' });
    const chunks = out.map((o) => (o.kind === 'chunk' ? o.chunk : undefined));
    for (const c of chunks) expect(c).toMatchObject({ id: 'msg_1', created: 5, model: 'anthropic/sonnet', object: 'chat.completion.chunk' });
    expect(chunks.slice(0, -1).every((c) => c?.usage === null)).toBe(true);
    expect(chunks.slice(0, -2).every((c) => c?.choices[0]?.finish_reason === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 15, completion_tokens: 7, total_tokens: 22 } });
  });

  it('uses the event type from data when the event: line is missing', () => {
    const { out } = run([{ data: start.data }, { data: text('z').data }, { data: stop.data }]);
    expect(deltas(out)).toEqual([{ role: 'assistant', content: '' }, { content: 'z' }, {}]);
  });
});
