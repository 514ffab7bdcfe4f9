// Reasoning from OpenAI-compatible servers: read into the IR (`reasoning_content`, vLLM's
// `reasoning`, OpenRouter's `reasoning_details`) and given back on the next turn in the field and
// on the turns the provider's profile names (DeepSeek: tool turns; OpenRouter: the blocks it
// minted, unmodified), through a Messages client's round trip too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/providers/ir/protocol.js';
import type { Message, Request, StreamEvent } from '../../src/providers/ir/types.js';
import { anthropicClient } from '../../src/providers/protocols/anthropic/client/index.js';
import { openaiChatProvider } from '../../src/providers/protocols/openai-chat/provider/index.js';
import { QUIRK_PROFILES } from '../../src/providers/quirks.js';
import { readProviderStream } from '../helpers/provider-stream.js';

const target = (provider: string, profile = provider): Target => ({ provider, displayName: provider, model: 'm-1', protocol: 'openai-chat', quirks: QUIRK_PROFILES[profile]! });
const ir = (messages: Message[]): Request => ({ model: 'm-1', system: [], messages, tools: [{ name: 'w', inputSchema: { type: 'object' } }], stopSequences: [], stream: false });
const toolTurn = (reasoning?: string): Message => ({ role: 'assistant', parts: [
  ...(reasoning !== undefined ? [{ type: 'reasoning' as const, text: reasoning }] : []),
  { type: 'tool-call', id: 'call_1', name: 'w', arguments: '{}' },
] });
const history = (assistant: Message): Message[] => [
  { role: 'user', parts: [{ type: 'text', text: 'weather?' }] },
  assistant,
  { role: 'user', parts: [{ type: 'tool-result', callId: 'call_1', content: [{ type: 'text', text: '18C' }] }] },
];
const assistantOf = (body: Record<string, unknown>): Record<string, unknown> => (body.messages as Array<Record<string, unknown>>).find((m) => m.role === 'assistant')!;


describe('DeepSeek: reasoning_content', () => {
  it('is read from answers and streams', () => {
    const answer = openaiChatProvider.readResponse({ choices: [{ index: 0, message: { role: 'assistant', reasoning_content: 'Think.', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }, target('deepseek'));
    expect(answer.choices[0]!.parts[0]).toEqual({ type: 'reasoning', text: 'Think.' });
    const sse = Buffer.from('data: {"id":"c","model":"deepseek-chat","choices":[{"index":0,"delta":{"reasoning_content":"Hm."}}]}\n\ndata: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    expect(readProviderStream(openaiChatProvider, target('deepseek'), [sse]).filter((e) => e.type === 'reasoning' || e.type === 'text')).toEqual([{ type: 'reasoning', text: 'Hm.' }, { type: 'text', text: 'Hi' }]);
  });
  it('goes back on an assistant turn with tool calls (empty when the turn had none to give)', () => {
    expect(assistantOf(openaiChatProvider.buildRequest(ir(history(toolTurn('Think.'))), target('deepseek')).body)).toMatchObject({ reasoning_content: 'Think.', tool_calls: [{ id: 'call_1' }] });
    expect(assistantOf(openaiChatProvider.buildRequest(ir(history(toolTurn())), target('deepseek')).body)).toMatchObject({ reasoning_content: '' });
  });
  it('is not sent on turns without tool calls, nor to servers that take none back', () => {
    const plain: Message = { role: 'assistant', parts: [{ type: 'reasoning', text: 'Think.' }, { type: 'text', text: 'Hello' }] };
    expect(assistantOf(openaiChatProvider.buildRequest(ir([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }, plain]), target('deepseek')).body)).not.toHaveProperty('reasoning_content');
    expect(assistantOf(openaiChatProvider.buildRequest(ir(history(toolTurn('Think.'))), target('openai')).body)).not.toHaveProperty('reasoning_content');
  });
  it('survives a Messages client (Claude Code) and comes back to DeepSeek', () => {
    const t = target('deepseek');
    const answer = openaiChatProvider.readResponse({ choices: [{ index: 0, message: { role: 'assistant', reasoning_content: 'Check the weather tool.', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }] }, finish_reason: 'tool_calls' }] }, t);
    const rendered = anthropicClient.renderResponse(answer, { model: 'deepseek/m-1', created: 0, fallbackId: 'msg_1', includeUsage: false }) as { content: unknown[] };
    const next = anthropicClient.parseRequest({ model: 'deepseek/m-1', max_tokens: 100, messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: rendered.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18C' }] },
    ] }, t);
    expect(assistantOf(openaiChatProvider.buildRequest(next, t).body)).toMatchObject({ reasoning_content: 'Check the weather tool.' });
  });
});

describe("vLLM: reasoning under its new name `reasoning`", () => {
  it('is read', () => {
    const answer = openaiChatProvider.readResponse({ choices: [{ index: 0, message: { role: 'assistant', reasoning: 'R.', content: 'A' }, finish_reason: 'stop' }] }, target('vllm'));
    expect(answer.choices[0]!.parts).toEqual([{ type: 'reasoning', text: 'R.' }, { type: 'text', text: 'A' }]);
  });
});

describe('OpenRouter: reasoning_details', () => {
  const DETAILS = [
    { type: 'reasoning.text', text: 'Weather needs the tool.', signature: 'sig-abc', format: 'anthropic-claude-v1', index: 0 },
    { type: 'reasoning.encrypted', data: 'ENC==', format: 'anthropic-claude-v1', index: 1 },
  ];
  const answerBody = { choices: [{ index: 0, message: { role: 'assistant', content: null, reasoning: 'Weather needs the tool.', reasoning_details: DETAILS, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] };

  it('is read into a reasoning part carrying the blocks as state, and given back unmodified', () => {
    const t = target('openrouter');
    const answer = openaiChatProvider.readResponse(answerBody, t);
    const part = answer.choices[0]!.parts[0]!;
    expect(part).toMatchObject({ type: 'reasoning', text: 'Weather needs the tool.', state: { provider: 'openrouter' } });
    const body = openaiChatProvider.buildRequest(ir(history({ role: 'assistant', parts: answer.choices[0]!.parts as Message['parts'] } as Message)), t).body;
    expect(assistantOf(body).reasoning_details).toEqual(DETAILS);
  });
  it('without the profile switch nothing is kept (and nothing goes back)', () => {
    const answer = openaiChatProvider.readResponse(answerBody, target('openrouter', 'openai'));
    expect(answer.choices[0]!.parts[0]).toEqual({ type: 'reasoning', text: 'Weather needs the tool.' });
  });
  it("is given back only to the provider that minted it", () => {
    const foreign: Message = { role: 'assistant', parts: [{ type: 'reasoning', text: 'x', state: { provider: 'other-router', data: { reasoningDetails: JSON.stringify(DETAILS) } } }, { type: 'tool-call', id: 'call_1', name: 'w', arguments: '{}' }] };
    expect(assistantOf(openaiChatProvider.buildRequest(ir(history(foreign)), target('openrouter')).body)).not.toHaveProperty('reasoning_details');
  });
  it('round-trips through a Messages client as a thinking signature', () => {
    const t = target('openrouter');
    const rendered = anthropicClient.renderResponse(openaiChatProvider.readResponse(answerBody, t), { model: 'openrouter/m-1', created: 0, fallbackId: 'msg_1', includeUsage: false }) as { content: Array<{ type: string; signature?: string }> };
    expect(rendered.content[0]).toMatchObject({ type: 'thinking', thinking: 'Weather needs the tool.' });
    const next = anthropicClient.parseRequest({ model: 'openrouter/m-1', max_tokens: 100, messages: [
      { role: 'user', content: 'weather?' }, { role: 'assistant', content: rendered.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18C' }] },
    ] }, t);
    expect(assistantOf(openaiChatProvider.buildRequest(next, t).body).reasoning_details).toEqual(DETAILS);
  });

  // A stream sends the blocks in fragments (same type and index): they are joined into one block.
  const frames = [
    { id: 'g1', model: 'anthropic/claude-sonnet-4.5', choices: [{ index: 0, delta: { role: 'assistant', reasoning: 'Weather ', reasoning_details: [{ type: 'reasoning.text', text: 'Weather ', format: 'anthropic-claude-v1', index: 0 }] } }] },
    { id: 'g1', choices: [{ index: 0, delta: { reasoning: 'needs the tool.', reasoning_details: [{ type: 'reasoning.text', text: 'needs the tool.', index: 0 }] } }] },
    { id: 'g1', choices: [{ index: 0, delta: { reasoning_details: [{ type: 'reasoning.text', signature: 'sig-abc', index: 0 }] } }] },
    { id: 'g1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] } }] },
    { id: 'g1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } },
  ];
  const sse = Buffer.from(`${frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join('')}data: [DONE]\n\n`);

  it('streams: reasoning text, then one block closed with the merged details before the tool call', () => {
    const events = readProviderStream(openaiChatProvider, target('openrouter'), [sse]);
    expect(events.map((e) => e.type)).toEqual(['start', 'reasoning', 'reasoning', 'reasoning-end', 'tool-call-start', 'tool-call-arguments', 'usage', 'tool-call-end', 'finish']);
    const end = events.find((e) => e.type === 'reasoning-end') as Extract<StreamEvent, { type: 'reasoning-end' }>;
    expect(JSON.parse(end.state!.data.reasoningDetails!)).toEqual([{ type: 'reasoning.text', text: 'Weather needs the tool.', signature: 'sig-abc', format: 'anthropic-claude-v1', index: 0 }]);
  });
  it('streams read the same however the bytes are split', () => {
    const whole = readProviderStream(openaiChatProvider, target('openrouter'), [sse]);
    fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: sse.length - 1 }), { maxLength: 20 }), (points) => {
      const cuts = [0, ...[...points].sort((a, b) => a - b), sse.length];
      expect(readProviderStream(openaiChatProvider, target('openrouter'), cuts.slice(1).map((end, i) => sse.subarray(cuts[i], end)))).toStrictEqual(whole);
    }), { numRuns: 40 });
  });
});
