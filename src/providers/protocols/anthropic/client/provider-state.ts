// Opaque provider state inside Anthropic's wire format. A foreign provider's state (a Gemini
// thoughtSignature) has no field of its own in Messages, so it rides in the one place Anthropic
// clients keep opaque data and send back unmodified: a thinking block's `signature`. The block
// names the provider that minted it and, for state that belongs to a tool call, the call's id.
import type { ProviderState } from '../../../ir/types.js';
import { STATE_TOKEN_PREFIX as PREFIX } from '../../state-token.js';
import { encodeToolCallId, readToolCallId } from '../../tool-call-id.js';

/** What a body carrying such a signature contains, to find one without parsing. */
export const FOREIGN_STATE_MARK = Buffer.from(`"${PREFIX}`);

/**
 * The request without the thinking blocks that carry a foreign provider's state: when a
 * conversation moves to Anthropic itself, that state means nothing there (Anthropic would refuse a
 * signature it did not mint), so it is dropped, on purpose. Undefined when there were none.
 */
export function withoutForeignThinking(body: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!Array.isArray(body.messages)) return undefined;
  let dropped = false;
  const messages = body.messages.map((m: unknown) => {
    const content = (m as { content?: unknown }).content;
    if (!Array.isArray(content)) return m;
    const kept = content.filter((b: unknown) => {
      const sig = (b as { type?: unknown; signature?: unknown }).signature;
      const foreign = (b as { type?: unknown }).type === 'thinking' && typeof sig === 'string' && sig.startsWith(PREFIX);
      if (foreign) dropped = true;
      return !foreign;
    });
    return kept.length === content.length ? m : { ...(m as object), content: kept };
  });
  return dropped ? { ...body, messages } : undefined;
}

export { encodeStateToken as encodeStateSignature, decodeStateToken as decodeStateSignature } from '../../state-token.js';

// Tool-use ids a client sends back must match ^[a-zA-Z0-9_-]+$ (Claude Code checks) and be unique
// in a conversation (Anthropic refuses one whose ids repeat; clients pair results with calls by
// id). The doors' shared scheme (../../tool-call-id.ts) shows a provider id that fits as it is,
// escapes any other, and mints one for a call the provider gave none (Gemini often gives none).
// `toolu_gw_<base64url>` is the form this door issued before: still read, so conversations clients
// already hold go on, and a provider id of that form is escaped so it is never misread.
const LEGACY_PREFIX = 'toolu_gw_';
const SHOWN_AS_IS = /^(?!toolu_gw_)[a-zA-Z0-9_-]+$/;

/** The tool_use id of the `callIndex`th call of an answer (counted alike in streams and whole answers). */
export function toClientToolId(id: string, fallbackId: string, callIndex: number): string {
  return encodeToolCallId(id, undefined, fallbackId, callIndex, SHOWN_AS_IS);
}

/** The call a client's tool_use id names, as the IR knows it (with state, for an id the Chat or Responses door issued). */
export function fromClientToolId(clientId: string): { id: string; state?: ProviderState } {
  if (clientId.startsWith(LEGACY_PREFIX)) return { id: Buffer.from(clientId.slice(LEGACY_PREFIX.length), 'base64url').toString('utf8') };
  return readToolCallId(clientId);
}
