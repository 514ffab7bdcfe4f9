// IR turns → Responses `input` items (stateless: the whole conversation is sent each time, as the
// gateway keeps nothing at OpenAI). A user turn's tool results become `function_call_output` items
// ahead of the rest of that turn (right after the calls they answer); an assistant turn keeps its
// order: reasoning items, text as an assistant message, calls as `function_call` items.
// Reasoning goes back only when this provider minted it and it carries `encrypted_content`: with
// `store: false` an item OpenAI cannot decrypt or look up is a 400, and another provider's state
// means nothing to OpenAI, so those are dropped on purpose.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, DocumentPart, ImagePart, Message, ReasoningPart, TextPart, ToolResultPart, UserPart } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';

export type Item = Record<string, unknown>;

const PDF = 'application/pdf';

const dataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`;

/** An image or file → an input content part; `where` names the part when its door gave no field. */
function mediaPart(p: ImagePart | DocumentPart, where: string, target: Target): Item {
  const s = p.source;
  const param = p.param ?? where;
  if (p.type === 'image') {
    if (s.kind === 'text') throw new TranslationError(`${param} must be an image, not text.`, param);
    return { type: 'input_image', image_url: s.kind === 'base64' ? dataUrl(s.mediaType, s.data) : s.url, detail: p.detail ?? 'auto' };
  }
  switch (s.kind) {
    case 'text': return { type: 'input_text', text: s.text };
    case 'url': return p.title === undefined ? { type: 'input_file', file_url: s.url } : { type: 'input_file', file_url: s.url, filename: p.title };
    case 'base64':
      // Responses takes no audio input (Chat's `input_audio` has no counterpart here).
      if (s.mediaType.startsWith('audio/')) throw new TranslationError(`Audio input is not supported for ${target.displayName} models through the Responses API.`, param);
      return { type: 'input_file', filename: p.title ?? (s.mediaType === PDF ? 'document.pdf' : 'document'), file_data: dataUrl(s.mediaType, s.data) };
    default: { const never: never = s; return never; }
  }
}

function userContent(parts: Array<TextPart | ImagePart | DocumentPart>, where: (k: number) => string, target: Target): Item[] {
  return parts.map((p, k) => (p.type === 'text' ? { type: 'input_text', text: p.text } : mediaPart(p, where(k), target)));
}

/** Plain text output stays a string; anything with media is a list of input parts. */
function callOutput(r: ToolResultPart, where: string, target: Target): Item {
  let output: string | Item[];
  if (r.content.every((c) => c.type === 'text')) {
    const text = (r.content as TextPart[]).map((c) => c.text).join('');
    // Responses has no error flag on an output: say it in the text, as the Chat builder does.
    output = r.isError === true ? `Error: ${text}` : text;
  } else {
    output = userContent(r.content, (k) => `${where}.content[${k}]`, target);
    if (r.isError === true) output.unshift({ type: 'input_text', text: 'Error:' });
  }
  return { type: 'function_call_output', call_id: r.callId, output };
}

function reasoningItem(p: ReasoningPart, target: Target): Item | undefined {
  const state = p.state;
  if (state === undefined || state.provider !== target.provider) return undefined;
  const encrypted = state.data.encryptedContent;
  if (encrypted === undefined || encrypted === '') return undefined;
  const item: Item = { type: 'reasoning' };
  if (state.data.id !== undefined && state.data.id !== '') item.id = state.data.id;
  item.summary = p.text === '' ? [] : [{ type: 'summary_text', text: p.text }];
  item.encrypted_content = encrypted;
  return item;
}

function assistantItems(parts: AssistantPart[], target: Target, out: Item[]): void {
  let text: Item[] | undefined; // the open assistant message's content, merging adjacent text
  for (const p of parts) {
    if (p.type === 'text') {
      if (p.text === '') continue;
      if (text === undefined) {
        text = [];
        out.push({ type: 'message', role: 'assistant', content: text });
      }
      text.push({ type: 'output_text', text: p.text, annotations: [] });
      continue;
    }
    text = undefined;
    if (p.type === 'tool-call') out.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments });
    else {
      const item = reasoningItem(p, target);
      if (item !== undefined) out.push(item);
    }
  }
}

export function toResponsesInput(messages: readonly Message[], target: Target): Item[] {
  const out: Item[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      assistantItems(m.parts, target, out);
      return;
    }
    const rest: Array<{ part: Exclude<UserPart, ToolResultPart>; j: number }> = [];
    m.parts.forEach((p, j) => {
      if (p.type === 'tool-result') out.push(callOutput(p, p.param ?? `messages[${i}].parts[${j}]`, target));
      else rest.push({ part: p, j });
    });
    if (rest.length === 0) return;
    const content = userContent(rest.map((r) => r.part), (k) => `messages[${i}].parts[${rest[k]!.j}]`, target);
    out.push({ type: 'message', role: 'user', content });
  });
  return out;
}
