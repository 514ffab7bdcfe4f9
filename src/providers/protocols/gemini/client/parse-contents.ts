// `contents` of a generateContent request → IR turns (provider-reference.md §3.2, §3.3).
//
// Tool-call ids. A functionCall may carry no id (older Gemini models gave none, and a client may
// drop it); the IR needs one, so a call without id gets `call_<n>_<name>`, n its position among
// the conversation's calls: the history is sent whole every turn, so the same call gets the same
// id each time. A functionResponse pairs with a call this way:
//   1. its `id` names a call of the conversation → that call;
//   2. with no id, the oldest call of the same name not yet answered (id-less responses answer
//      calls in order); with an id no call has, the oldest such call that had no id either
//      (gemini-cli makes up an id for a call that came without one);
//   3. otherwise its `id` as is (the provider judges), or, with no id, a 400 naming the part.
// Provider ids the client got from us (`toolu_…`, `call_…`) come back in `id` as they were sent.
//
// Opaque state. A `thoughtSignature` we minted gives back the reasoning and state it carries
// (thought-signature.ts); any other is Gemini's own: state of the provider `gemini` (the target's
// id when the target speaks Gemini), which other providers' builders leave out. A thought part
// without a signature is a display copy of reasoning (ours ride in signatures) and is dropped.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, DocumentPart, ImagePart, Message, ProviderState, ToolResultPart, UserPart } from '../../../ir/types.js';
import { fail, get, isObj, str, type Obj } from './fields.js';
import { decodeThoughtSignature } from './thought-signature.js';

/** Part fields that modify a part rather than hold its data. */
const MODIFIERS = new Set(['thought', 'thoughtSignature', 'thought_signature', 'videoMetadata', 'video_metadata', 'mediaResolution', 'media_resolution', 'partMetadata', 'part_metadata']);

interface Calls {
  count: number;
  /** Every call id seen, so a response's id can be checked. */
  known: Set<string>;
  /** Function name → its calls not answered yet, oldest first (`minted`: the call came without an id). */
  open: Map<string, Array<{ id: string; minted: boolean }>>;
}

export function parseContents(v: unknown, target: Target): Message[] {
  if (!Array.isArray(v)) fail('contents', v === undefined ? 'is required' : 'must be an array');
  if (v.length === 0) fail('contents', 'must contain at least one content');
  const native = target.protocol === 'gemini' ? target.provider : 'gemini';
  const calls: Calls = { count: 0, known: new Set(), open: new Map() };
  const messages: Message[] = [];
  v.forEach((c, i) => {
    const param = `contents[${i}]`;
    if (!isObj(c)) fail(param, 'must be an object');
    const role = c.role ?? 'user';
    if (role !== 'user' && role !== 'model') fail(`${param}.role`, 'must be "user" or "model"');
    const parts = c.parts;
    if (!Array.isArray(parts)) fail(`${param}.parts`, parts === undefined ? 'is required' : 'must be an array');
    const out = role === 'user' ? userParts(parts, param, calls, target) : modelParts(parts, param, calls, native, target);
    if (out.length > 0) messages.push(role === 'user' ? { role: 'user', parts: out as UserPart[] } : { role: 'assistant', parts: out as AssistantPart[] });
  });
  return messages;
}

/** The part's data field: text, inlineData, fileData, functionCall, functionResponse or another (refused). */
function kindOf(p: Obj, param: string, provider: string): string {
  if (typeof p.text === 'string') return 'text';
  for (const k of ['functionCall', 'functionResponse', 'inlineData', 'fileData']) if (get(p, k) !== undefined) return k;
  const other = Object.keys(p).find((k) => !MODIFIERS.has(k));
  if (other === undefined) fail(param, 'has no data (text, inlineData, fileData, functionCall or functionResponse)');
  return fail(`${param}.${other}`, `"${other}" parts are not supported for ${provider} models (only Gemini runs code execution and its own tools)`);
}

function userParts(parts: unknown[], param: string, calls: Calls, target: Target): UserPart[] {
  return parts.map((p, j): UserPart => {
    const where = `${param}.parts[${j}]`;
    if (!isObj(p)) fail(where, 'must be an object');
    const kind = kindOf(p, where, target.displayName);
    switch (kind) {
      case 'text': return { type: 'text', text: p.text as string };
      case 'inlineData': case 'fileData': return media(get(p, kind), `${where}.${kind}`, kind, target.displayName);
      case 'functionResponse': return toolResult(get(p, kind), `${where}.functionResponse`, calls, target.displayName);
      default: return fail(`${where}.functionCall`, 'function calls belong in a "model" turn');
    }
  });
}

function modelParts(parts: unknown[], param: string, calls: Calls, native: string, target: Target): AssistantPart[] {
  const out: AssistantPart[] = [];
  parts.forEach((p, j) => {
    const where = `${param}.parts[${j}]`;
    if (!isObj(p)) fail(where, 'must be an object');
    const kind = kindOf(p, where, target.displayName);
    const signature = get(p, 'thoughtSignature');
    if (signature !== undefined && typeof signature !== 'string') fail(`${where}.thoughtSignature`, 'must be a string');
    const carried = signature === undefined || signature === '' ? undefined : decodeThoughtSignature(signature);
    if (carried !== undefined) out.push(...carried.reasoning);
    const raw = signature !== undefined && signature !== '' && carried === undefined ? signature : undefined;
    const state = carried?.state ?? (raw === undefined ? undefined : { provider: native, data: { thoughtSignature: raw } });
    switch (kind) {
      case 'text': {
        const text = p.text as string;
        if (p.thought === true) {
          // Gemini's own thought with its signature is kept; display copies and our carriers are not.
          if (raw !== undefined) out.push({ type: 'reasoning', text, state: state! });
        } else if (text !== '' || state !== undefined) {
          out.push(state === undefined ? { type: 'text', text } : { type: 'text', text, state });
        }
        return;
      }
      case 'functionCall': out.push(toolCall(get(p, kind), `${where}.functionCall`, calls, raw === undefined ? state : withId(state!, get(p, kind)))); return;
      default: fail(`${where}.${kind}`, kind === 'functionResponse' ? 'function responses belong in a "user" turn' : `a "model" turn can only hold text, thoughts and function calls for ${target.displayName} models`);
    }
  });
  return out;
}

/** Gemini's state on its own call also keeps the call's id, as the Gemini provider reads it. */
function withId(state: ProviderState, call: unknown): ProviderState {
  const id = isObj(call) ? call.id : undefined;
  return typeof id === 'string' && id !== '' ? { provider: state.provider, data: { id, ...state.data } } : state;
}

function toolCall(v: unknown, param: string, calls: Calls, state: ProviderState | undefined): AssistantPart {
  if (!isObj(v)) fail(param, 'must be an object');
  const name = str(v.name, `${param}.name`);
  const args = v.args ?? {};
  if (!isObj(args)) fail(`${param}.args`, 'must be an object');
  if (v.id !== undefined && v.id !== null && typeof v.id !== 'string') fail(`${param}.id`, 'must be a string');
  const n = calls.count++;
  const minted = typeof v.id !== 'string' || v.id === '';
  const id = minted ? `call_${n}_${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48)}` : (v.id as string);
  calls.known.add(id);
  const open = calls.open.get(name);
  if (open === undefined) calls.open.set(name, [{ id, minted }]);
  else open.push({ id, minted });
  const part: AssistantPart = { type: 'tool-call', id, name, arguments: JSON.stringify(args) };
  if (state !== undefined) part.state = state;
  return part;
}

function toolResult(v: unknown, param: string, calls: Calls, provider: string): ToolResultPart {
  if (!isObj(v)) fail(param, 'must be an object');
  const name = str(v.name, `${param}.name`);
  const given = v.id === undefined || v.id === null || v.id === '' ? undefined : str(v.id, `${param}.id`);
  const open = calls.open.get(name) ?? [];
  const known = given !== undefined && calls.known.has(given);
  let k: number;
  if (known) k = open.findIndex((c) => c.id === given);
  else if (given === undefined) k = open.length > 0 ? 0 : -1;
  else k = open.findIndex((c) => c.minted);
  let callId: string;
  if (k !== -1) callId = open.splice(k, 1)[0]!.id;
  else if (given !== undefined) callId = given;
  else return fail(param, `answers no earlier functionCall named "${name}": send the call's id, or the call in a "model" turn before it`);
  const response = v.response ?? {};
  if (!isObj(response)) fail(`${param}.response`, 'must be an object');
  const part: ToolResultPart = { type: 'tool-result', callId, name, content: [], param };
  const { text, isError } = resultText(response);
  if (text !== undefined) part.content.push({ type: 'text', text });
  if (isError) part.isError = true;
  const extra = get(v, 'parts');
  if (extra !== undefined) {
    if (!Array.isArray(extra)) fail(`${param}.parts`, 'must be an array');
    extra.forEach((x, k) => {
      const where = `${param}.parts[${k}]`;
      if (!isObj(x)) fail(where, 'must be an object');
      const kind = get(x, 'inlineData') !== undefined ? 'inlineData' : get(x, 'fileData') !== undefined ? 'fileData' : fail(where, 'must hold inlineData or fileData');
      part.content.push(media(get(x, kind), `${where}.${kind}`, kind, provider));
    });
  }
  if (part.content.length === 1 && part.content[0]!.type === 'text') part.plain = true;
  return part;
}

/**
 * Gemini's convention (FunctionResponse docs): `output` holds the function's output, `error` its
 * failure, and with neither the whole object is the output. A lone string is sent as the text;
 * anything else as its JSON text.
 */
function resultText(response: Obj): { text?: string; isError: boolean } {
  const keys = Object.keys(response);
  if (keys.length === 0) return { isError: false };
  const only = keys.length === 1 && (keys[0] === 'output' || keys[0] === 'error') ? keys[0] : undefined;
  const value = only === undefined ? response : response[only];
  return { text: typeof value === 'string' ? value : JSON.stringify(value), isError: only === 'error' };
}

function media(v: unknown, param: string, kind: 'inlineData' | 'fileData', provider: string): ImagePart | DocumentPart {
  if (!isObj(v)) fail(param, 'must be an object');
  let part: ImagePart | DocumentPart;
  if (kind === 'inlineData') {
    const mediaType = str(get(v, 'mimeType'), `${param}.mimeType`);
    const source = { kind: 'base64' as const, mediaType, data: str(v.data, `${param}.data`) };
    part = mediaType.startsWith('image/') ? { type: 'image', source } : { type: 'document', source };
  } else {
    const url = str(get(v, 'fileUri'), `${param}.fileUri`);
    if (url.startsWith('gs://') || /^https:\/\/generativelanguage\.googleapis\.com\//.test(url)) {
      fail(`${param}.fileUri`, `files uploaded to Google (Files API, Cloud Storage) can only be read by Gemini models, not ${provider} models; send the file inline (inlineData) instead`);
    }
    const mediaType = get(v, 'mimeType');
    if (mediaType !== undefined && typeof mediaType !== 'string') fail(`${param}.mimeType`, 'must be a string');
    const source = mediaType === undefined ? { kind: 'url' as const, url } : { kind: 'url' as const, url, mediaType };
    part = typeof mediaType === 'string' && mediaType.startsWith('image/') ? { type: 'image', source } : { type: 'document', source };
  }
  part.param = param;
  return part;
}
