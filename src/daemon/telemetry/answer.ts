// What a request's span says about its answer and (opt-in) its content, read once the request has
// ended, from the bytes the client got: the response id, the finish reasons and the output
// messages, through the door protocol's own reader (the same module that reads that protocol from
// a provider); the input through the door's own parser. In the conventions' message structure
// (gen-ai-input-messages.json / gen-ai-output-messages.json of semantic conventions 1.41.1).
import type { ClientProtocol, ProviderProtocol, Target } from '../../providers/ir/protocol.js';
import type { AssistantPart, FinishReason, Message, Request, Response, StreamEvent, TextPart } from '../../providers/ir/types.js';
import { SseParser } from '../http/sse.js';

type Part = Record<string, unknown>;
export interface ChatMessage { role: string; parts: Part[]; finish_reason?: string }

export interface AnswerFacts {
  id?: string;
  finishReasons: string[];
  output: ChatMessage[];
}

/** IR finish reasons as the conventions' output messages name them. */
const FINISH: Readonly<Record<FinishReason, string>> = {
  stop: 'stop', 'stop-sequence': 'stop', length: 'length', 'tool-calls': 'tool_call', 'content-filter': 'content_filter',
  refusal: 'content_filter', pause: 'pause', other: 'other',
};

const args = (s: string): unknown => { try { return JSON.parse(s); } catch { return s; } };

function assistantParts(parts: readonly AssistantPart[]): Part[] {
  return parts.map((p) => p.type === 'text' ? { type: 'text', content: p.text }
    : p.type === 'tool-call' ? { type: 'tool_call', id: p.id, name: p.name, arguments: args(p.arguments) }
    : { type: 'reasoning', content: p.text });
}

/**
 * A whole answer's facts from its IR, as the pipeline has it (a translated answer, never read back
 * from its bytes); `id`: the one the client was shown (renderedId); the output only when `content`.
 */
export function factsOf(r: Response, id: string | undefined, content: boolean): AnswerFacts {
  return {
    ...(id ? { id } : {}),
    finishReasons: r.choices.map((c) => FINISH[c.finish] ?? c.finish),
    output: content ? r.choices.map((c) => ({ role: 'assistant', parts: assistantParts(c.parts), finish_reason: FINISH[c.finish] ?? c.finish })) : [],
  };
}

/**
 * The id a rendered whole answer shows its client: `id` in the Chat, Messages and Responses
 * shapes, `responseId` in Gemini's (each door renders its own, not always the provider's).
 */
export function renderedId(rendered: unknown): string | undefined {
  const r = rendered as { id?: unknown; responseId?: unknown };
  const id = r.id ?? r.responseId;
  return typeof id === 'string' ? id : undefined;
}

/** A stream's events folded into the answer they made (text, reasoning and tool calls per choice). */
function fromEvents(events: readonly StreamEvent[]): AnswerFacts {
  let id: string | undefined;
  const choices = new Map<number, { parts: Part[]; finish?: string }>();
  const choice = (i = 0) => { let c = choices.get(i); if (!c) { c = { parts: [] }; choices.set(i, c); } return c; };
  const calls = new Map<string, Part>();
  const append = (i: number | undefined, type: 'text' | 'reasoning', text: string) => {
    const parts = choice(i).parts;
    const last = parts[parts.length - 1];
    if (last?.type === type) last.content = `${last.content as string}${text}`;
    else parts.push({ type, content: text });
  };
  for (const e of events) {
    if (e.type === 'start' && e.id) id = e.id;
    else if (e.type === 'text' || e.type === 'reasoning') append(e.choice, e.type, e.text);
    else if (e.type === 'tool-call-start') {
      const part: Part = { type: 'tool_call', id: e.id, name: e.name, arguments: e.arguments ?? '' };
      calls.set(e.id, part);
      choice(e.choice).parts.push(part);
    } else if (e.type === 'tool-call-arguments') {
      const part = calls.get(e.id);
      if (part) part.arguments = `${part.arguments as string}${e.delta}`;
    } else if (e.type === 'finish') choice(e.choice).finish = FINISH[e.reason] ?? e.reason;
  }
  for (const part of calls.values()) part.arguments = args(part.arguments as string);
  const ordered = [...choices.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
  return {
    ...(id ? { id } : {}),
    finishReasons: ordered.flatMap((c) => (c.finish ? [c.finish] : [])),
    output: ordered.map((c) => ({ role: 'assistant', parts: c.parts, ...(c.finish ? { finish_reason: c.finish } : {}) })),
  };
}

/**
 * The answer in `text` (a whole JSON answer, an SSE stream, or Gemini's JSON-array stream) read by
 * its protocol's module `side`; undefined when it cannot be read (an error answer, a body cut at
 * the capture cap). The output messages only when `content`.
 */
export function readAnswer(side: ProviderProtocol, text: string, target: Target, content: boolean): AnswerFacts | undefined {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    let json: unknown;
    try { json = JSON.parse(trimmed); } catch { return undefined; }
    if ((json as { error?: unknown }).error !== undefined) return undefined;
    try { const r = side.readResponse(json, target); return factsOf(r, r.id, content); } catch { return undefined; }
  }
  const reader = side.createStreamReader(target);
  const events: StreamEvent[] = [];
  if (trimmed.startsWith('[')) {
    let items: unknown;
    try { items = JSON.parse(trimmed); } catch { return undefined; }
    if (!Array.isArray(items)) return undefined;
    for (const item of items) events.push(...reader.push({ data: JSON.stringify(item) }));
  } else {
    for (const e of new SseParser().push(text)) events.push(...reader.push(e));
  }
  events.push(...reader.end());
  return fromEvents(events);
}

const userPart = (p: Message['parts'][number]): Part => p.type === 'text' ? { type: 'text', content: p.text }
  : p.type === 'tool-result' ? { type: 'tool_call_response', id: p.callId, response: p.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('') }
  : p.type === 'image' || p.type === 'document' ? { type: p.type }
  : assistantParts([p as AssistantPart])[0]!;

/** A request's input in the conventions' shape: the messages (tool results as `tool` turns) and the system instructions. */
export function inputOf(ir: Request): { messages: ChatMessage[]; system: Part[] } {
  const messages: ChatMessage[] = [];
  for (const m of ir.messages) {
    if (m.role === 'assistant') { messages.push({ role: 'assistant', parts: assistantParts(m.parts) }); continue; }
    const results = m.parts.filter((p) => p.type === 'tool-result');
    if (results.length > 0) messages.push({ role: 'tool', parts: results.map(userPart) });
    const rest = m.parts.filter((p) => p.type !== 'tool-result');
    if (rest.length > 0) messages.push({ role: 'user', parts: rest.map(userPart) });
  }
  return { messages, system: ir.system.map((p: TextPart) => ({ type: 'text', content: p.text })) };
}

/** The door's request parsed to IR, or undefined when its parser refuses it (a token count, a body it cannot read). */
export function parseInput(client: ClientProtocol, body: unknown, target: Target): Request | undefined {
  try { return client.parseRequest(body, target); } catch { return undefined; }
}
