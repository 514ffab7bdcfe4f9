// Chat `messages` → the IR's system prompt and turns (provider-reference.md §1.3, §4.3). Every
// system and developer message, wherever it is, joins the system prompt in order; `tool` messages
// become user turns holding one tool result (builders merge turns as their protocol needs); the
// ids of tool calls we issued give back the provider state they carry (../../tool-call-id.ts).
import type { AssistantPart, Message, TextPart, ToolCallPart, ToolResultPart } from '../../../ir/types.js';
import type { ChatMessage } from '../../../types.js';
import { asRecord, asString } from '../../../shared/lenient-json.js';
import { textParts, userParts } from './parse-content.js';
import { readToolCallId } from '../../tool-call-id.js';

/** A Chat tool-call id → the IR id and the function's name (tool results need both). */
interface CallRef { id: string; name: string }

export function parseMessages(messages: readonly ChatMessage[], provider: string): { system: TextPart[]; messages: Message[] } {
  const system: TextPart[] = [];
  const out: Message[] = [];
  const calls = new Map<string, CallRef>();
  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textParts(message.content, `${param}.content`));
        break;
      case 'user':
        out.push({ role: 'user', parts: userParts(message.content, `${param}.content`, provider) });
        break;
      case 'assistant':
        out.push({ role: 'assistant', parts: assistantParts(message, param, calls) });
        break;
      case 'tool':
        out.push({ role: 'user', parts: [toolResult(message, param, calls)] });
        break;
      default: {
        const never: never = message;
        return never;
      }
    }
  });
  return { system, messages: out };
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

function assistantParts(message: AssistantMessage, param: string, calls: Map<string, CallRef>): AssistantPart[] {
  const parts: AssistantPart[] = textParts(message.content, `${param}.content`);
  // A refusal stands in for the text when the message has none (Chat keeps it in its own field).
  const refusal = asString(message.refusal);
  if (refusal !== undefined && refusal !== '' && !parts.some((p) => p.type === 'text' && p.text !== '')) parts.push({ type: 'text', text: refusal });
  (message.tool_calls ?? []).forEach((call, j) => {
    const fn = asRecord(call.function);
    const name = asString(fn.name) ?? '';
    const { id, state } = readToolCallId(call.id);
    const part: ToolCallPart = { type: 'tool-call', id, name, arguments: asString(fn.arguments) ?? '', param: `${param}.tool_calls[${j}].function.arguments` };
    if (state !== undefined) part.state = state;
    calls.set(call.id, { id: part.id, name });
    parts.push(part);
  });
  return parts;
}

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

function toolResult(message: ToolMessage, param: string, calls: Map<string, CallRef>): ToolResultPart {
  const ref = calls.get(message.tool_call_id);
  const callId = ref?.id ?? readToolCallId(message.tool_call_id).id;
  const part: ToolResultPart = { type: 'tool-result', callId, content: textParts(message.content, `${param}.content`), param: `${param}.tool_call_id` };
  if (ref !== undefined) part.name = ref.name;
  if (typeof message.content === 'string') part.plain = true;
  return part;
}
