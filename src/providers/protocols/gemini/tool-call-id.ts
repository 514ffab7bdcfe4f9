// Carries a Gemini function-call `id` and its `thoughtSignature` inside the OpenAI tool-call id we
// hand to clients, because an OpenAI client can only echo the id (provider-reference.md §3.3, §4.4).
// Gemini 3 rejects a replayed call without its signature and a response whose id does not match.
//
// Format (only [A-Za-z0-9_-], so the id also survives Anthropic's tool_use id pattern):
//   gmn1_<id field>[_<signature field>]
//   id field:        r<id>                     Gemini id made of [A-Za-z0-9] only, kept readable
//                    h<hex of the UTF-8 id>    any other Gemini id
//                    s<fallback id>n<k>        Gemini sent no id (2.x): synthesized, decodes to none
//   signature field: b<base64url of the bytes> canonical base64 signature (what Gemini sends)
//                    t<base64url of UTF-8>     any other string, kept verbatim
// The id field never contains `_`, so the first `_` after the prefix starts the signature field.

const PREFIX = 'gmn1_';
const ALNUM = /^[A-Za-z0-9]+$/;
const HEX = /^(?:[0-9a-f]{2})+$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** What Gemini attached to one function call. */
export interface GeminiCallRef { id?: string; thoughtSignature?: string }

export interface EncodeInput extends GeminiCallRef {
  /** `ctx.fallbackId`, used only when Gemini sent no id. */
  fallbackId: string;
  /** The call's position in the response, used only when Gemini sent no id. */
  callIndex: number;
}

export function encodeGeminiToolCallId(input: EncodeInput): string {
  const idField = input.id !== undefined && input.id !== ''
    ? (ALNUM.test(input.id) ? `r${input.id}` : `h${Buffer.from(input.id, 'utf8').toString('hex')}`)
    : `s${input.fallbackId.replace(/[^A-Za-z0-9]/g, '')}n${input.callIndex}`;
  const sig = input.thoughtSignature;
  if (sig === undefined || sig === '') return PREFIX + idField;
  return `${PREFIX}${idField}_${encodeSignature(sig)}`;
}

/**
 * The Gemini id and signature carried by an id we issued; `undefined` for any other id (another
 * provider's `toolu_…`/`call_…`, or one of ours that was altered), which must not reach Gemini.
 */
export function decodeGeminiToolCallId(toolCallId: string): GeminiCallRef | undefined {
  if (!toolCallId.startsWith(PREFIX)) return undefined;
  const rest = toolCallId.slice(PREFIX.length);
  const cut = rest.indexOf('_');
  const idField = cut === -1 ? rest : rest.slice(0, cut);
  const ref: GeminiCallRef = {};
  const idBody = idField.slice(1);
  switch (idField[0]) {
    case 'r':
      if (!ALNUM.test(idBody)) return undefined;
      ref.id = idBody;
      break;
    case 'h':
      if (!HEX.test(idBody)) return undefined;
      ref.id = Buffer.from(idBody, 'hex').toString('utf8');
      break;
    case 's':
      if (idBody !== '' && !ALNUM.test(idBody)) return undefined;
      break;
    default:
      return undefined;
  }
  if (cut !== -1) {
    const signature = decodeSignature(rest.slice(cut + 1));
    if (signature === undefined) return undefined;
    ref.thoughtSignature = signature;
  }
  return ref;
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
