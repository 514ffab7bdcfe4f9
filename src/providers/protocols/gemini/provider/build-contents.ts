// IR system prompt and turns → Gemini `systemInstruction` and `contents` (provider-reference.md
// §3.2, §4.3, §4.4). Tool results are user turns; adjacent turns of the same role are merged, since
// Gemini wants user and model to alternate; empty text is dropped (Gemini rejects empty parts and
// turns). A call's Gemini id and thoughtSignature, and a signature on text, go back only to the
// provider that minted them: another provider's ids and state mean nothing to Gemini. Results go in
// the order of their calls.
import type { Target } from '../../../ir/protocol.js';
import type { DocumentPart, ImagePart, Message, ProviderState, TextPart, ToolCallPart, ToolResultPart } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { isRecord, tryParseJson } from '../../../shared/lenient-json.js';
import { KNOWN_EXTENSIONS, mimeFromUrl } from '../../../shared/media-types.js';
import { parseToolArguments } from '../../../shared/tool-arguments.js';
import type { GeminiContent, GeminiPart, GeminiRequestBody } from '../wire.js';

/** The state this provider minted, else nothing. */
const own = (state: ProviderState | undefined, target: Target): Record<string, string> | undefined =>
  state !== undefined && state.provider === target.provider ? state.data : undefined;

/**
 * Gemini 3 refuses a step of the current turn whose first function call carries no signature of
 * its own ("Function call is missing a thought_signature"), which every call another provider or
 * the client made lacks: a conversation that moved here mid tool loop (a fallback). Google's
 * documented dummy for calls it did not generate stands in (provider-reference.md §3.3). Older
 * models never ask for one, and get none.
 */
const FOREIGN_CALL_SIGNATURE = 'skip_thought_signature_validator';
const validatesSignatures = (model: string): boolean => Number(/^gemini-(\d+)/.exec(model)?.[1] ?? 0) >= 3;

export function toGeminiContents(system: readonly TextPart[], messages: readonly Message[], target: Target): Pick<GeminiRequestBody, 'contents' | 'systemInstruction'> {
  const contents: GeminiContent[] = [];
  // The current turn: what follows the last user message that is not only tool results.
  const turnStart = validatesSignatures(target.model)
    ? messages.findLastIndex((m) => m.role === 'user' && m.parts.some((p) => p.type !== 'tool-result')) + 1
    : messages.length;
  const callIds = new Map<string, string>(); // IR call id → the id Gemini gave that call
  const callNames = new Map<string, string>(); // IR call id → the function's name, for results that lack it
  const callOrder = new Map<string, number>(); // IR call id → its place among all calls
  const resultOrder = new Map<GeminiPart, number>(); // a functionResponse → its call's place
  messages.forEach((message, i) => {
    const role = message.role === 'user' ? 'user' : 'model';
    const parts: GeminiPart[] = [];
    let text: string | undefined; // a model turn's text parts are joined into one, as one Chat message's were
    let firstCall = true; // of this step: the one Gemini 3 wants a signature on
    const flush = (): void => {
      if (text !== undefined && text !== '') parts.push({ text });
      text = undefined;
    };
    message.parts.forEach((part, j) => {
      const where = `messages[${i}].parts[${j}]`;
      switch (part.type) {
        case 'text': {
          const signature = own(part.state, target)?.thoughtSignature;
          if (role === 'model' && signature === undefined) { text = text === undefined ? part.text : `${text}\n${part.text}`; return; }
          flush();
          if (part.text !== '' || signature !== undefined) parts.push(signature === undefined ? { text: part.text } : { text: part.text, thoughtSignature: signature });
          return;
        }
        case 'image': case 'document': flush(); parts.push(mediaPart(part, where, target.displayName)); return;
        case 'tool-call': {
          flush();
          callNames.set(part.id, part.name);
          callOrder.set(part.id, callOrder.size);
          parts.push(callPart(part, where, target, callIds, firstCall && i >= turnStart));
          firstCall = false;
          return;
        }
        case 'tool-result': {
          flush();
          const result = resultPart(part.name === undefined && callNames.has(part.callId) ? { ...part, name: callNames.get(part.callId)! } : part, where, target, callIds);
          resultOrder.set(result, callOrder.get(part.callId) ?? Number.MAX_SAFE_INTEGER);
          parts.push(result);
          return;
        }
        case 'reasoning': return; // Gemini takes no thoughts back; their signatures ride on calls and text
        default: { const never: never = part; return never; }
      }
    });
    flush();
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  });
  if (contents.length === 0) throw new TranslationError(`${target.displayName} needs at least one user or assistant message with content.`, 'messages');
  for (const content of contents) if (content.role === 'user') inCallOrder(content.parts, resultOrder);
  const instruction = system.filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  return instruction.length > 0 ? { systemInstruction: { parts: instruction }, contents } : { contents };
}

/**
 * A turn's results in the order of their calls, whatever order the client answered in (other parts
 * stay where they are): a result for a call without a Gemini id carries only the function's name,
 * so for two calls of one function its place is all that tells which call it answers.
 */
function inCallOrder(parts: GeminiPart[], order: ReadonlyMap<GeminiPart, number>): void {
  const slots = parts.flatMap((p, i) => (order.has(p) ? [i] : []));
  const sorted = slots.map((i) => parts[i]!).sort((a, b) => order.get(a)! - order.get(b)!);
  slots.forEach((slot, k) => { parts[slot] = sorted[k]!; });
}

/** `signed`: the call must carry a signature (the first of a step of Gemini 3's current turn). */
function callPart(part: ToolCallPart, where: string, target: Target, callIds: Map<string, string>, signed: boolean): GeminiPart {
  const args = parseToolArguments(part.arguments, part.param ?? `${where}.arguments`, target.displayName);
  const state = own(part.state, target);
  if (state?.id !== undefined) callIds.set(part.id, state.id);
  const out: GeminiPart = { functionCall: state?.id === undefined ? { name: part.name, args } : { id: state.id, name: part.name, args } };
  const signature = state?.thoughtSignature ?? (signed ? FOREIGN_CALL_SIGNATURE : undefined);
  if (signature !== undefined) out.thoughtSignature = signature;
  return out;
}

function resultPart(part: ToolResultPart, where: string, target: Target, callIds: Map<string, string>): GeminiPart {
  const param = part.param ?? `${where}.callId`;
  if (part.name === undefined) {
    throw new TranslationError(
      `${param} "${part.callId}" does not match any tool call of an earlier assistant message; ${target.displayName} needs the function name, which only that call carries.`,
      param,
    );
  }
  const text = part.content.map((c) => {
    if (c.type !== 'text') throw new TranslationError(`${param}: a tool result for ${target.displayName} can only hold text.`, param);
    return c.text;
  }).join('\n');
  const parsed = tryParseJson(text);
  const output = isRecord(parsed) ? parsed : text;
  const id = callIds.get(part.callId);
  return { functionResponse: id === undefined ? { name: part.name, response: { output } } : { id, name: part.name, response: { output } } };
}

/** Inline data as is; a URL needs a MIME type, which only its extension can tell (the gateway never downloads). */
function mediaPart(part: ImagePart | DocumentPart, where: string, provider: string): GeminiPart {
  const source = part.source;
  switch (source.kind) {
    case 'base64':
      return { inlineData: { mimeType: source.mediaType, data: source.data } };
    case 'text':
      return { inlineData: { mimeType: source.mediaType, data: Buffer.from(source.text, 'utf8').toString('base64') } };
    case 'url': {
      const mimeType = source.mediaType ?? mimeFromUrl(source.url);
      if (mimeType === undefined) {
        const param = part.param ?? where;
        throw new TranslationError(
          `${param}: cannot tell the type of ${source.url} from its file extension, and ${provider} needs one for URLs ` +
            `(known: ${KNOWN_EXTENSIONS.join(', ')}). Send it as a data URL (data:image/png;base64,…) instead.`,
          param,
        );
      }
      return { fileData: { mimeType, fileUri: source.url } };
    }
    default: { const never: never = source; return never; }
  }
}
