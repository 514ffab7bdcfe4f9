// Mock providers for the coding-tool end-to-end tests (gemini-cli, Codex CLI): each model calls
// the MCP weather tool when the conversation asks about the weather and the tool is offered (Claude
// after a signed thinking block, Gemini with a thought signature, GPT with its arguments streamed
// in pieces), then repeats what the tool returned; gemini-cli's model router asks in JSON mode how
// hard the task is, and gets an answer. `tool` is the tool's name as the client offers it.
import type { MockHandler, MockReply, Recorded } from './mock-provider.js';

const sse = (events: string[]): MockReply => ({ headers: { 'content-type': 'text/event-stream' }, chunks: events });
const json = (v: unknown): MockReply => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(v) });
export const body = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;
const asksWeather = (conversation: unknown) => /weather/i.test(JSON.stringify(conversation));

/** What gemini-cli's model router (its "classifier") asks for in JSON mode: how hard the task is. */
export const CLASSIFIED = JSON.stringify({ complexity_reasoning: 'A greeting.', complexity_score: 10 });
export const wantsComplexity = (schema: unknown) => JSON.stringify(schema ?? null).includes('complexity_score');

/** The three mock providers for a client that names the weather tool `tool`. */
export function weatherProviders(tool: string): { anthropic: MockHandler; openai: MockHandler; gemini: MockHandler } {
  /** Claude: calls the tool when asked about weather and it is offered, then repeats its result. */
  const anthropic: MockHandler = (r) => {
    if (!r.url.startsWith('/v1/messages')) return undefined;
    const b = body(r);
    const last = b.messages.at(-1);
    const result = Array.isArray(last.content) ? last.content.find((c: any) => c.type === 'tool_result') : undefined;
    const call = !result && (b.tools ?? []).some((t: any) => t.name === tool) && asksWeather(b.messages);
    const text = wantsComplexity(b.output_config?.format?.schema) ? CLASSIFIED : result ? `Claude says: ${JSON.stringify(result.content)}` : 'Hello from Claude.';
    const usage = { input_tokens: 40, output_tokens: 7 };
    const message = { id: 'msg_gc', type: 'message', role: 'assistant', model: b.model, stop_sequence: null };
    if (b.stream !== true) {
      return json({ ...message, content: call ? [{ type: 'tool_use', id: 'toolu_gc1', name: tool, input: { city: 'Paris' } }] : [{ type: 'text', text }], stop_reason: call ? 'tool_use' : 'end_turn', usage });
    }
    const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    const start = ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 40, output_tokens: 1 } } });
    const end = (reason: string) => [ev('message_delta', { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 7 } }), ev('message_stop', {})];
    if (call) {
      return sse([start,
        ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'I should call the weather tool.' } }),
        ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqCLAUDESIG' } }),
        ev('content_block_stop', { index: 0 }),
        ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_gc1', name: tool, input: {} } }),
        ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
        ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }),
        ev('content_block_stop', { index: 1 }), ...end('tool_use')]);
    }
    return sse([start, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }), ev('content_block_stop', { index: 0 }), ...end('end_turn')]);
  };

  /** GPT (Chat Completions): the same, with the call's arguments streamed in pieces. */
  const openai: MockHandler = (r) => {
    if (!r.url.startsWith('/v1/chat/completions')) return undefined;
    const b = body(r);
    const last = b.messages.at(-1);
    const result = last.role === 'tool' ? String(typeof last.content === 'string' ? last.content : JSON.stringify(last.content)) : undefined;
    const call = result === undefined && (b.tools ?? []).some((t: any) => t.function?.name === tool) && asksWeather(b.messages);
    const text = wantsComplexity(b.response_format?.json_schema?.schema) ? CLASSIFIED : result !== undefined ? `GPT says: ${result}` : 'Hello from GPT.';
    const usage = { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 };
    const toolCall = { id: 'call_gc1', type: 'function', function: { name: tool, arguments: '{"city":"Paris"}' } };
    if (b.stream !== true) {
      return json({ id: 'chatcmpl-gc', object: 'chat.completion', created: 1, model: b.model, choices: [{ index: 0, message: { role: 'assistant', content: call ? null : text, ...(call ? { tool_calls: [toolCall] } : {}) }, finish_reason: call ? 'tool_calls' : 'stop' }], usage });
    }
    const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-gc', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const tail = [`data: ${JSON.stringify({ id: 'chatcmpl-gc', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [], usage })}\n\n`, 'data: [DONE]\n\n'];
    if (call) {
      return sse([chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_gc1', type: 'function', function: { name: tool, arguments: '' } }] }, null),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null), chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null),
        chunk({}, 'tool_calls'), ...tail]);
    }
    return sse([chunk({ role: 'assistant', content: '' }, null), chunk({ content: text }, null), chunk({}, 'stop'), ...tail]);
  };

  /** Gemini: the same in Gemini's protocol (a whole function call with a thought signature). */
  const gemini: MockHandler = (r) => {
    const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
    if (!m) return undefined;
    const b = body(r);
    const result = b.contents.at(-1).parts.find((p: any) => p.functionResponse)?.functionResponse;
    const offered = (b.tools ?? []).some((t: any) => (t.functionDeclarations ?? []).some((f: any) => f.name === tool)) && asksWeather(b.contents);
    const parts = wantsComplexity(b.generationConfig?.responseJsonSchema ?? b.generationConfig?.responseSchema) ? [{ text: CLASSIFIED }]
      : result ? [{ text: `Gemini says: ${JSON.stringify(result.response)}` }]
      : offered ? [{ functionCall: { name: tool, args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' }]
      : [{ text: 'Hello from Gemini.' }];
    const resp = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 7, totalTokenCount: 47 }, modelVersion: m[1], responseId: 'resp-gc' };
    return m[2] === 'generateContent' ? json(resp) : sse([`data: ${JSON.stringify(resp)}\r\n\r\n`]);
  };
  return { anthropic, openai, gemini };
}
