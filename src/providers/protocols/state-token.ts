// One opaque token for provider state that travels through a client of another protocol: a
// Gemini thoughtSignature inside a Claude thinking block's `signature`, a Claude signature inside
// a Responses reasoning item's `encrypted_content`. Clients keep such fields unmodified and send
// them back, so the token names the provider that minted the state and, for state that belongs
// to a tool call, the call's id. Anything without our prefix is the client's provider's own.
import type { ProviderState } from '../ir/types.js';

export const STATE_TOKEN_PREFIX = 'gw1.';

/** A token carrying `state` (and the tool call it belongs to). */
export function encodeStateToken(state: ProviderState, callId?: string): string {
  const json = JSON.stringify(callId === undefined ? { p: state.provider, d: state.data } : { p: state.provider, d: state.data, c: callId });
  return STATE_TOKEN_PREFIX + Buffer.from(json, 'utf8').toString('base64url');
}

/** The state a token we minted carries; undefined for a provider's own opaque data or anything else. */
export function decodeStateToken(token: string): { state: ProviderState; callId?: string } | undefined {
  if (!token.startsWith(STATE_TOKEN_PREFIX)) return undefined;
  try {
    const o = JSON.parse(Buffer.from(token.slice(STATE_TOKEN_PREFIX.length), 'base64url').toString('utf8')) as { p?: unknown; d?: unknown; c?: unknown };
    if (typeof o.p !== 'string' || typeof o.d !== 'object' || o.d === null) return undefined;
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.d)) if (typeof v === 'string') data[k] = v;
    return { state: { provider: o.p, data }, ...(typeof o.c === 'string' ? { callId: o.c } : {}) };
  } catch {
    return undefined;
  }
}
