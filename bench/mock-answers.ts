// What the bench mock answers, in each provider's wire format: whole JSON answers and streams of
// SSE events. A module of its own so the micro-benchmark (stream-translate.ts) and the hello-world
// row run the very same bytes without starting the mock's server.
// Each streamed text token is `tok{i}@%TS% `: the mock puts its send time where `%TS%` stands.

export const TEXT = 'Hello from the bench mock.';

export const openaiJson = Buffer.from(JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1767225600, model: 'gpt-5.4',
  choices: [{ index: 0, message: { role: 'assistant', content: TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
}));
export const anthropicJson = Buffer.from(JSON.stringify({
  id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-opus-5', content: [{ type: 'text', text: TEXT }],
  stop_reason: 'end_turn', stop_sequence: null,
  usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 6 },
}));
const geminiResponse = (text: string, n: number, finish?: string) => ({
  candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: n, totalTokenCount: 12 + n }, modelVersion: 'gemini-3.5-flash', responseId: 'resp-bench',
});
export const geminiJson = Buffer.from(JSON.stringify(geminiResponse(TEXT, 6, 'STOP')));

const responsesUsage = (n: number) => ({ input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: n, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 + n });
const responsesObject = (status: string, output: unknown[], n: number) => ({
  id: 'resp_bench', object: 'response', created_at: 1767225600, status, error: null, incomplete_details: null, model: 'gpt-5.4',
  output, parallel_tool_calls: true, tool_choice: 'auto', tools: [], store: true, usage: status === 'completed' ? responsesUsage(n) : null,
});
const responsesMessage = (text: string) => ({ id: 'msg_bench', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
export const responsesJson = Buffer.from(JSON.stringify(responsesObject('completed', [responsesMessage(TEXT)], 6)));

export interface MockStreams { openai: string[]; anthropic: string[]; gemini: string[]; responses: string[] }

/** Exactly `events` SSE events per stream (Gemini's separated by \r\n\r\n, with no [DONE]). */
export function mockStreams(events: number): MockStreams {
  const openaiChunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-5.4', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const aev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  return {
    openai: [
      openaiChunk({ role: 'assistant', content: '' }, null),
      ...Array.from({ length: events - 3 }, (_, i) => openaiChunk({ content: `tok${i}@%TS% ` }, null)),
      openaiChunk({}, 'stop'),
      'data: [DONE]\n\n',
    ],
    anthropic: [
      aev('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-opus-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } }),
      aev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ...Array.from({ length: events - 5 }, (_, i) => aev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `tok${i}@%TS% ` } })),
      aev('content_block_stop', { type: 'content_block_stop', index: 0 }),
      aev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: events - 5 } }),
      aev('message_stop', { type: 'message_stop' }),
    ],
    gemini: Array.from({ length: events }, (_, i) => `data: ${JSON.stringify(geminiResponse(`tok${i}@%TS% `, i + 1, i === events - 1 ? 'STOP' : undefined))}\r\n\r\n`),
    responses: responsesStream(Math.max(1, events - 8)),
  };
}

/** OpenAI's Responses stream: 8 lifecycle events around `deltas` output_text deltas. */
function responsesStream(deltas: number): string[] {
  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
  const item = { item_id: 'msg_bench', output_index: 0, content_index: 0 };
  const text = Array.from({ length: deltas }, (_, i) => `tok${i}@0 `).join('');
  return [
    ev('response.created', { response: responsesObject('in_progress', [], 0) }),
    ev('response.in_progress', { response: responsesObject('in_progress', [], 0) }),
    ev('response.output_item.added', { output_index: 0, item: { id: 'msg_bench', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
    ev('response.content_part.added', { ...item, part: { type: 'output_text', text: '', annotations: [] } }),
    ...Array.from({ length: deltas }, (_, i) => ev('response.output_text.delta', { ...item, delta: `tok${i}@%TS% ` })),
    ev('response.output_text.done', { ...item, text }),
    ev('response.content_part.done', { ...item, part: { type: 'output_text', text, annotations: [] } }),
    ev('response.output_item.done', { output_index: 0, item: responsesMessage(text) }),
    ev('response.completed', { response: responsesObject('completed', [responsesMessage(text)], deltas) }),
  ];
}
