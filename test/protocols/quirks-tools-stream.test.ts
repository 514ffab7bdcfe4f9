// Ollama's streams lose tool calls, so with tools it is called without streaming and the whole
// answer is streamed to the client (answer-events.ts → the door's renderer): here, that the
// switch decides it, and that the answer becomes a proper stream in Chat and Messages frames.
import { describe, expect, it } from 'vitest';
import { streamsFromWholeAnswer } from '../../src/daemon/doors/answer-stream.js';
import { SseParser } from '../../src/daemon/http/sse.js';
import { answerAsStreamEvents } from '../../src/providers/ir/answer-events.js';
import type { Response } from '../../src/providers/ir/types.js';
import { anthropicClient } from '../../src/providers/protocols/anthropic/client/index.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { openaiChatProvider } from '../../src/providers/protocols/openai-chat/provider/index.js';
import { OPENAI_PROFILE, QUIRK_PROFILES } from '../../src/providers/quirks.js';

const ollama = QUIRK_PROFILES.ollama!;
const ANSWER = { id: 'chatcmpl-9', model: 'qwen3:8b', choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Let me check.', tool_calls: [
  { id: 'call_x1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
  { id: 'call_x2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
] } }], usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 } };
const answer: Response = openaiChatProvider.readResponse(ANSWER, { provider: 'ollama', displayName: 'Ollama', model: 'qwen3:8b' });

const frames = (text: string) => { const p = new SseParser(); return [...p.push(text), ...p.end()]; };

describe('tools with streaming (Ollama)', () => {
  it('asks without streaming only for streamed requests with tools, and only where the profile says so', () => {
    expect(streamsFromWholeAnswer(ollama, true, true)).toBe(true);
    expect(streamsFromWholeAnswer(ollama, true, false)).toBe(false);
    expect(streamsFromWholeAnswer(ollama, false, true)).toBe(false);
    expect(streamsFromWholeAnswer(OPENAI_PROFILE, true, true)).toBe(false);
  });

  it('gives a Chat client chunks with both tool calls, their arguments, the finish and usage', () => {
    const r = openaiChatClient.createStreamRenderer({ model: 'qwen3:8b', modelPrefix: '', created: 1, fallbackId: 'f', includeUsage: true });
    const text = answerAsStreamEvents(answer).map((e) => r.push(e)).join('') + r.end();
    const events = frames(text);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === 'chatcmpl-9' && c.model === 'qwen3:8b')).toBe(true);
    const calls = chunks.flatMap((c) => c.choices.flatMap((ch: any) => ch.delta.tool_calls ?? []));
    expect(calls).toEqual([
      { index: 0, id: 'call_x1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { index: 1, id: 'call_x2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta.content).filter(Boolean)).join('')).toBe('Let me check.');
    expect(chunks.flatMap((c) => c.choices.map((ch: any) => ch.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 7 } });
  });

  it('gives a Messages client text and tool_use blocks closed by message_stop', () => {
    const r = anthropicClient.createStreamRenderer({ model: 'ollama/qwen3:8b', modelPrefix: 'ollama/', created: 1, fallbackId: 'msg_f', includeUsage: false });
    const events = frames(answerAsStreamEvents(answer).map((e) => r.push(e)).join('') + r.end()).map((e) => [e.event, JSON.parse(e.data)] as const);
    expect(events[0]![0]).toBe('message_start');
    const starts = events.filter(([n]) => n === 'content_block_start').map(([, d]) => d.content_block);
    expect(starts).toMatchObject([{ type: 'text' }, { type: 'tool_use', id: 'call_x1', name: 'get_weather' }, { type: 'tool_use', id: 'call_x2', name: 'get_time' }]);
    const json = events.filter(([, d]) => d.delta?.type === 'input_json_delta').map(([, d]) => d.delta.partial_json).join('|');
    expect(json).toBe('{"city":"Paris"}|{}');
    expect(events.find(([n]) => n === 'message_delta')![1].delta.stop_reason).toBe('tool_use');
    expect(events.at(-1)![0]).toBe('message_stop');
  });
});
