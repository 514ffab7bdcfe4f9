// Opaque provider state inside Anthropic's wire format. A foreign provider's state (a Gemini
// thoughtSignature) has no field of its own in Messages, so it rides in the one place Anthropic
// clients keep opaque data and send back unmodified: a thinking block's `signature`. The block
// names the provider that minted it and, for state that belongs to a tool call, the call's id.
import { STATE_TOKEN_PREFIX as PREFIX } from '../../state-token.js';

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

// Tool-use ids a client sends back must match ^[a-zA-Z0-9_-]+$ (Claude Code checks). Provider ids
// that fit pass unchanged; any other is carried base64url-encoded behind a prefix and restored on
// the way back, so the provider sees its own id again.
const ID_OK = /^[a-zA-Z0-9_-]+$/;
const ID_PREFIX = 'toolu_gw_';

export function toClientToolId(id: string): string {
  return ID_OK.test(id) && !id.startsWith(ID_PREFIX) ? id : ID_PREFIX + Buffer.from(id, 'utf8').toString('base64url');
}

export function fromClientToolId(id: string): string {
  return id.startsWith(ID_PREFIX) ? Buffer.from(id.slice(ID_PREFIX.length), 'base64url').toString('utf8') : id;
}
