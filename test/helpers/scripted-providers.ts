// Conversational mock behaviour for unified end-to-end tests: each provider answers a request that
// offers tools with a weather tool call (in its own wire format, streamed or not), and answers a
// request that carries the tool result with a final text. Everything else gets plain text.
import type { MockHandler, MockReply, Recorded } from './mock-provider.js';

export const FINAL_TEXT = 'It is 18°C in Paris — sunny.';
export const GEMINI_SIGNATURE = 'CiQB4/H/Xt5' + 'a'.repeat(280) + '==';

const sse = (chunks: string[], delayMs = 0): MockReply => ({ headers: { 'content-type': 'text/event-stream' }, chunks, delayMs });
const json = (body: unknown): MockReply => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const body = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;

export const anthropicScript: MockHandler = (r) => {
  if (!r.url.startsWith('/v1/messages')) return undefined;
  const b = body(r);
  const last = b.messages.at(-1);
  const hasResult = Array.isArray(last.content) && last.content.some((c: any) => c.type === 'tool_result');
  const wantsTool = Array.isArray(b.tools) && b.tools.length > 0 && !hasResult;
  const usage = { input_tokens: 20, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 1 };
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...(data as object) })}\n\n`;
  if (!b.stream) {
    const content = wantsTool
      ? [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } }]
      : [{ type: 'text', text: FINAL_TEXT }];
    return json({ id: 'msg_e2e', type: 'message', role: 'assistant', model: b.model, content, stop_reason: wantsTool ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { ...usage, output_tokens: 9 } });
  }
  const blocks = wantsTool
    ? [
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: {} } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Par' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: 'is"}' } }),
      ev('content_block_stop', { index: 0 }),
    ]
    : [
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ...FINAL_TEXT.split(/(?<= )/).map((t) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } })),
      ev('content_block_stop', { index: 0 }),
    ];
  return sse([
    ev('message_start', { message: { id: 'msg_e2e', type: 'message', role: 'assistant', model: b.model, content: [], stop_reason: null, stop_sequence: null, usage } }),
    ev('ping', {}),
    ...blocks,
    ev('message_delta', { delta: { stop_reason: wantsTool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }),
    ev('message_stop', {}),
  ]);
};

export const geminiScript: MockHandler = (r) => {
  const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
  if (!m) return undefined;
  const b = body(r);
  const last = b.contents.at(-1);
  const hasResult = last.parts.some((p: any) => p.functionResponse);
  const wantsTool = Array.isArray(b.tools) && b.tools.length > 0 && !hasResult;
  const usageMetadata = { promptTokenCount: 30, cachedContentTokenCount: 10, candidatesTokenCount: 8, thoughtsTokenCount: 4, totalTokenCount: 42 };
  const parts = wantsTool
    ? [{ functionCall: { id: 'fc_91', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: GEMINI_SIGNATURE }]
    : [{ text: FINAL_TEXT }];
  const resp = (ps: unknown[], finish?: string) => ({ candidates: [{ content: { role: 'model', parts: ps }, ...(finish ? { finishReason: finish } : {}), index: 0 }], usageMetadata, modelVersion: decodeURIComponent(m[1]!), responseId: 'resp-e2e' });
  if (m[2] === 'generateContent') return json(resp(parts, 'STOP'));
  const events = wantsTool ? [resp(parts, 'STOP')] : FINAL_TEXT.split(/(?<= )/).map((t, i, all) => resp([{ text: t }], i === all.length - 1 ? 'STOP' : undefined));
  return sse(events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`));
};

export const openaiScript: MockHandler = (r) => {
  if (!r.url.startsWith('/v1/chat/completions')) return undefined;
  const b = body(r);
  const last = b.messages.at(-1);
  const wantsTool = Array.isArray(b.tools) && b.tools.length > 0 && last.role !== 'tool';
  const usage = { prompt_tokens: 25, completion_tokens: 9, total_tokens: 34, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
  const call = { id: 'call_7Qa', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
  if (!b.stream) {
    return json({ id: 'chatcmpl-e2e', object: 'chat.completion', created: 1767225600, model: b.model, choices: [{ index: 0, message: { role: 'assistant', content: wantsTool ? null : FINAL_TEXT, refusal: null, ...(wantsTool ? { tool_calls: [call] } : {}) }, logprobs: null, finish_reason: wantsTool ? 'tool_calls' : 'stop' }], usage });
  }
  const withUsage = b.stream_options?.include_usage === true;
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: 1767225600, model: b.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
  const deltas = wantsTool
    ? [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: 'get_weather', arguments: '' } }] }, null), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null), chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null)]
    : [chunk({ role: 'assistant', content: '' }, null), ...FINAL_TEXT.split(/(?<= )/).map((t) => chunk({ content: t }, null))];
  return sse([
    ...deltas,
    chunk({}, wantsTool ? 'tool_calls' : 'stop'),
    ...(withUsage ? [`data: ${JSON.stringify({ id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: 1767225600, model: b.model, choices: [], usage })}\n\n`] : []),
    'data: [DONE]\n\n',
  ]);
};
