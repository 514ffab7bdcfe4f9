// The tool-call ids every door shows its clients, and reads back on the next turn. One scheme for
// all doors, so a call gets one id whichever door it went out through:
// - a provider that gave no id gets one minted from the answer's id and the call's position: unique
//   in the answer (Anthropic refuses a conversation whose tool_use ids repeat, and clients pair
//   results with calls by id) and the same in a stream and in the whole answer;
// - opaque provider state on a call (a Gemini thoughtSignature) has no field in Chat or Responses:
//   there it rides in the id, the one thing such a client keeps and sends back (provider-reference.md
//   §3.3, §4.4). The Messages door carries state in thinking blocks instead and mints ids without it.
// Ids we mint use only [A-Za-z0-9_-], so they pass Anthropic's tool_use id pattern too.
//
//   <id>                              a provider's id with no state, that the door's clients take
//                                     as it is: unchanged
//   gmn1_<id field>[_<sig field>]     Gemini's own state, {id?, thoughtSignature?}: the form the
//                                     Gemini translator issued before the hub, kept so ids clients
//                                     already hold decode, and Gemini answers read as before
//   gw1_<id field>[_<state field>]    any other state, or an id that needs escaping
//
//   id field:    r<id>                  an id of [A-Za-z0-9] only, kept readable
//                h<hex of the UTF-8 id> any other id
//                s<fallback id>n<k>     the provider gave none: minted, decodes to none
//   sig field:   b<base64url of the bytes> a canonical base64 signature (what Gemini sends)
//                t<base64url of UTF-8>     any other string, kept verbatim
//   state field: base64url of JSON {"p": provider, "d": data}
// No id field contains `_`, so the first `_` after the prefix starts the state.
import type { ProviderState } from '../ir/types.js';

const GEMINI = 'gmn1_';
const GENERIC = 'gw1_';
/** The provider id and state keys the gmn1 form stands for. */
const GEMINI_PROVIDER = 'gemini';
const ALNUM = /^[A-Za-z0-9]+$/;
const HEX = /^(?:[0-9a-f]{2})+$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Chat and Responses ids are free strings: any provider id can be shown as it is. */
const ANY_ID = /^/;

export interface DecodedToolCallId {
  /** The provider's id, absent when it gave none (the Chat id was minted). */
  id?: string;
  state?: ProviderState;
}

/**
 * The id a client sees for a call. `id` '' means the provider gave none: one is minted from
 * `fallbackId` and the call's position in the answer (count calls the same way in a stream and in
 * a whole answer). `shownAsIs` is the provider ids the door's clients take unchanged.
 */
export function encodeToolCallId(id: string, state: ProviderState | undefined, fallbackId: string, callIndex: number, shownAsIs: RegExp = ANY_ID): string {
  if (state === undefined && id !== '' && !id.startsWith(GEMINI) && !id.startsWith(GENERIC) && shownAsIs.test(id)) return id;
  const idField = id === '' ? `s${fallbackId.replace(/[^A-Za-z0-9]/g, '')}n${callIndex}` : ALNUM.test(id) ? `r${id}` : `h${Buffer.from(id, 'utf8').toString('hex')}`;
  if (state === undefined) return GENERIC + idField;
  if (isGeminiCompact(id, state)) {
    const sig = state.data.thoughtSignature;
    return sig === undefined || sig === '' ? GEMINI + idField : `${GEMINI}${idField}_${encodeSignature(sig)}`;
  }
  const json = JSON.stringify({ p: state.provider, d: state.data });
  return `${GENERIC}${idField}_${Buffer.from(json, 'utf8').toString('base64url')}`;
}

/** What an id we minted carries; `undefined` for any other id (a client's own, or one altered). */
export function decodeToolCallId(chatId: string): DecodedToolCallId | undefined {
  const gemini = chatId.startsWith(GEMINI);
  if (!gemini && !chatId.startsWith(GENERIC)) return undefined;
  const rest = chatId.slice(gemini ? GEMINI.length : GENERIC.length);
  const cut = rest.indexOf('_');
  const id = readIdField(cut === -1 ? rest : rest.slice(0, cut));
  if (id === null) return undefined;
  const field = cut === -1 ? undefined : rest.slice(cut + 1);
  const out: DecodedToolCallId = {};
  if (id !== undefined) out.id = id;
  if (gemini) {
    const data: Record<string, string> = {};
    if (id !== undefined) data.id = id;
    if (field !== undefined) {
      const signature = decodeSignature(field);
      if (signature === undefined) return undefined;
      data.thoughtSignature = signature;
    }
    out.state = { provider: GEMINI_PROVIDER, data };
  } else if (field !== undefined) {
    const state = decodeState(field);
    if (state === undefined) return undefined;
    out.state = state;
  }
  return out;
}

/**
 * The call a client's id names, as the IR knows it: the provider's id and state for an id we
 * issued, else the client's id itself (a minted id stands for its call from then on).
 */
export function readToolCallId(clientId: string): { id: string; state?: ProviderState } {
  const decoded = decodeToolCallId(clientId);
  const id = decoded?.id ?? clientId;
  return decoded?.state === undefined ? { id } : { id, state: decoded.state };
}

/** Gemini's state with nothing but its call id (matching the IR id) and signature. */
function isGeminiCompact(id: string, state: ProviderState): boolean {
  if (state.provider !== GEMINI_PROVIDER) return false;
  for (const key of Object.keys(state.data)) if (key !== 'id' && key !== 'thoughtSignature') return false;
  return state.data.id === undefined ? id === '' : state.data.id === id;
}

/** The id an id field carries, `undefined` for a minted one, `null` when it is not ours. */
function readIdField(field: string): string | undefined | null {
  const body = field.slice(1);
  switch (field[0]) {
    case 'r': return ALNUM.test(body) ? body : null;
    case 'h': return HEX.test(body) ? Buffer.from(body, 'hex').toString('utf8') : null;
    case 's': return body === '' || ALNUM.test(body) ? undefined : null;
    default: return null;
  }
}

function encodeSignature(sig: string): string {
  // Proto `bytes` are sent as canonical padded base64; re-encoding the bytes as base64url keeps
  // them exactly. Anything else is kept as text so decoding always gives back the same string.
  const bytes = Buffer.from(sig, 'base64');
  return bytes.toString('base64') === sig ? `b${bytes.toString('base64url')}` : `t${Buffer.from(sig, 'utf8').toString('base64url')}`;
}

function decodeSignature(field: string): string | undefined {
  const body = field.slice(1);
  if (body === '' || !BASE64URL.test(body)) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  if (field[0] === 'b') return bytes.toString('base64');
  if (field[0] === 't') return bytes.toString('utf8');
  return undefined;
}

function decodeState(field: string): ProviderState | undefined {
  if (field === '' || !BASE64URL.test(field)) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(Buffer.from(field, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { p, d } = (typeof o === 'object' && o !== null ? o : {}) as { p?: unknown; d?: unknown };
  if (typeof p !== 'string' || typeof d !== 'object' || d === null || Array.isArray(d)) return undefined;
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(d)) if (typeof v === 'string') data[k] = v;
  return { provider: p, data };
}
