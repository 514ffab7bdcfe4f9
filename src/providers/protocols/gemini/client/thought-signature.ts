// Opaque provider state inside Gemini's wire format. A Gemini client keeps one opaque field and
// sends it back as it got it: a part's `thoughtSignature`. Another provider's state (a Claude
// thinking signature, an OpenAI encrypted reasoning item) rides there, tagged with the provider
// that minted it, the way the Messages door uses a thinking block's signature
// (anthropic/client/provider-state.ts) and the Chat door a tool-call id (../../tool-call-id.ts).
//
// Two things make it a form of its own rather than theirs:
// - `thoughtSignature` is proto `bytes`: js-genai keeps the base64 text, but Python `google-genai`
//   decodes it to bytes and may send back another base64 alphabet (url-safe) of the same bytes.
//   So the signature is canonical base64 of the payload's bytes, and decoding reads the bytes.
// - gemini-cli drops `thought: true` parts from its history (it keeps function calls and text).
//   Claude needs its thinking text back with the signature in a tool loop, so reasoning that has
//   state travels whole (text and state) in the signature of the next part the client keeps: the
//   text or function call after it (Gemini itself puts its signatures there).
//
//   bytes: "gw1g" + JSON { r?: [{ t: text, p: provider, d: data, x?: 1 (redacted) }], s?: { p, d } }
//     r: reasoning carried ahead of this part, in order; s: the state of the part itself.
import type { ProviderState, ReasoningPart } from '../../../ir/types.js';

const MAGIC = 'gw1g';
/** Base64 of "gw1": every signature we mint starts with it (a cheap test before decoding). */
const MARK = Buffer.from('gw1').toString('base64');

export interface Carried {
  reasoning: ReasoningPart[];
  state?: ProviderState;
}

interface Wire { p: string; d: Record<string, string> }
interface WireReasoning extends Wire { t: string; x?: 1 }

export function encodeThoughtSignature(carried: Carried): string {
  const o: { r?: WireReasoning[]; s?: Wire } = {};
  if (carried.reasoning.length > 0) {
    o.r = carried.reasoning.map((r) => {
      const w: WireReasoning = { t: r.text, p: r.state?.provider ?? '', d: r.state?.data ?? {} };
      if (r.redacted === true) w.x = 1;
      return w;
    });
  }
  if (carried.state !== undefined) o.s = { p: carried.state.provider, d: carried.state.data };
  return Buffer.from(MAGIC + JSON.stringify(o), 'utf8').toString('base64');
}

/** What a signature we minted carries; `undefined` for Gemini's own signatures and anything else. */
export function decodeThoughtSignature(signature: string): Carried | undefined {
  if (!signature.startsWith(MARK)) return undefined;
  const text = Buffer.from(signature, 'base64').toString('utf8'); // reads url-safe base64 too
  if (!text.startsWith(`${MAGIC}{`)) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(text.slice(MAGIC.length));
  } catch {
    return undefined;
  }
  if (!isObj(o)) return undefined;
  const out: Carried = { reasoning: [] };
  if (Array.isArray(o.r)) {
    for (const w of o.r) {
      const state = readState(w);
      if (!isObj(w) || state === undefined || typeof w.t !== 'string') return undefined;
      const part: ReasoningPart = { type: 'reasoning', text: w.t, state };
      if (w.x === 1) part.redacted = true;
      out.reasoning.push(part);
    }
  }
  if (o.s !== undefined) {
    const state = readState(o.s);
    if (state === undefined) return undefined;
    out.state = state;
  }
  return out;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readState(w: unknown): ProviderState | undefined {
  if (!isObj(w) || typeof w.p !== 'string' || !isObj(w.d)) return undefined;
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(w.d)) if (typeof v === 'string') data[k] = v;
  return { provider: w.p, data };
}

/** What a body carrying a signature we minted contains, to find one without parsing. */
export const FOREIGN_SIGNATURE_MARK = Buffer.from(`"${MARK}`);

/**
 * The request without the signatures we minted: when a conversation moves to a Gemini model (the
 * fast path), another provider's state means nothing there and Gemini would refuse a signature it
 * did not mint, so it is dropped on purpose, with the empty thoughts that only carried it.
 * Undefined when there were none.
 */
export function withoutForeignSignatures(body: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!Array.isArray(body.contents)) return undefined;
  let dropped = false;
  const contents = body.contents.map((c: unknown) => {
    const parts = isObj(c) && Array.isArray(c.parts) ? c.parts : undefined;
    if (parts === undefined) return c;
    const kept: unknown[] = [];
    let changed = false;
    for (const p of parts) {
      const sig = isObj(p) ? p.thoughtSignature ?? p.thought_signature : undefined;
      if (!isObj(p) || typeof sig !== 'string' || decodeThoughtSignature(sig) === undefined) { kept.push(p); continue; }
      dropped = changed = true;
      if (p.thought === true && p.text === '') continue; // a carrier and nothing else
      const { thoughtSignature: _a, thought_signature: _b, ...rest } = p;
      kept.push(rest);
    }
    return changed ? { ...(c as object), parts: kept } : c;
  });
  return dropped ? { ...body, contents } : undefined;
}
