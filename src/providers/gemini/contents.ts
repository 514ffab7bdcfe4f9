// OpenAI `messages` → Gemini `systemInstruction` + `contents` (provider-reference.md §4.1, §4.3,
// §4.4). System and developer messages all go to `systemInstruction`, in order; tool results are
// `user` turns; adjacent turns of the same role are merged, since Gemini wants user and model to
// alternate; empty text is dropped, since Gemini rejects empty text parts and empty turns.
import { TranslationError, type ChatMessage, type ContentPart } from '../types.js';
import { asRecord, asString, tryParseJson, isRecord } from '../shared/lenient-json.js';
import { parseToolArguments } from '../shared/tool-arguments.js';
import { toGeminiContentPart } from './media.js';
import { decodeGeminiToolCallId } from './tool-call-id.js';
import type { GeminiContent, GeminiPart, GeminiRequestBody } from './wire-types.js';

export function toGeminiContents(messages: ChatMessage[]): Pick<GeminiRequestBody, 'contents' | 'systemInstruction'> {
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  /** tool_call id → function name, from the assistant messages seen so far. */
  const callNames = new Map<string, string>();
  const push = (role: GeminiContent['role'], parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content, `${param}.content`);
        if (text !== '') system.push({ text });
        break;
      }
      case 'user':
        push('user', userParts(message.content, `${param}.content`));
        break;
      case 'assistant':
        push('model', assistantParts(message, param, callNames));
        break;
      case 'tool':
        push('user', [toolResultPart(message, param, callNames)]);
        break;
      default: {
        const role: unknown = (message as { role: unknown }).role;
        throw new TranslationError(`${param}.role "${String(role)}" is not supported for Gemini models.`, `${param}.role`);
      }
    }
  });

  if (contents.length === 0) {
    throw new TranslationError('Gemini needs at least one user or assistant message with content.', 'messages');
  }
  return system.length > 0 ? { systemInstruction: { parts: system }, contents } : { contents };
}

/** Text of a string or text-part content; refusal parts of assistant messages count as text. */
function textOf(content: unknown, param: string): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new TranslationError(`${param} must be a string or an array of text parts.`, param);
  return content.map((part, j) => {
    const p = asRecord(part);
    const text = p.type === 'text' ? asString(p.text) : p.type === 'refusal' ? asString(p.refusal) : undefined;
    if (text === undefined) {
      throw new TranslationError(`${param}[${j}] must be a text part here (type "${String(p.type)}" is not allowed).`, `${param}[${j}]`);
    }
    return text;
  }).join('\n');
}

function userParts(content: string | ContentPart[], param: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) throw new TranslationError(`${param} must be a string or an array of content parts.`, param);
  return content.flatMap((part, j) => {
    const converted = toGeminiContentPart(part, `${param}[${j}]`);
    return converted === undefined ? [] : [converted];
  });
}

function assistantParts(message: Extract<ChatMessage, { role: 'assistant' }>, param: string, callNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const text = textOf(message.content, `${param}.content`);
  if (text !== '') parts.push({ text });
  (message.tool_calls ?? []).forEach((call, j) => {
    const callParam = `${param}.tool_calls[${j}]`;
    const name = asString(call.function?.name);
    if (name === undefined || name === '') throw new TranslationError(`${callParam}.function.name is required.`, `${callParam}.function.name`);
    const args = parseToolArguments(call.function.arguments, `${callParam}.function.arguments`, 'Gemini');
    // Only ids we issued carry a Gemini id and signature; other providers' ids are dropped.
    const ref = typeof call.id === 'string' ? decodeGeminiToolCallId(call.id) ?? {} : {};
    if (typeof call.id === 'string') callNames.set(call.id, name);
    const part: GeminiPart = { functionCall: ref.id === undefined ? { name, args } : { id: ref.id, name, args } };
    if (ref.thoughtSignature !== undefined) part.thoughtSignature = ref.thoughtSignature;
    parts.push(part);
  });
  return parts;
}

function toolResultPart(message: Extract<ChatMessage, { role: 'tool' }>, param: string, callNames: Map<string, string>): GeminiPart {
  const callId = message.tool_call_id;
  const name = typeof callId === 'string' ? callNames.get(callId) : undefined;
  if (name === undefined) {
    throw new TranslationError(
      `${param}.tool_call_id "${String(callId)}" does not match any tool_calls[].id of an earlier assistant message; ` +
        'Gemini needs the function name, which only that call carries.',
      `${param}.tool_call_id`,
    );
  }
  const text = textOf(message.content, `${param}.content`);
  const parsed = tryParseJson(text);
  const output = isRecord(parsed) ? parsed : text;
  const id = decodeGeminiToolCallId(callId)?.id;
  return { functionResponse: id === undefined ? { name, response: { output } } : { id, name, response: { output } } };
}
