// The 401 for a proxy key the gateway will not take, worded for the client's protocol. OpenAI's
// clients tell a wrong key by OpenAI's own words: LiteLLM, for one, maps a 401
// `invalid_request_error` to BadRequestError unless its message says "Incorrect API key provided".
// So /v1 and /openai answer in OpenAI's shape (naming the proxy key, showing at most its masked
// form, pointing at `gateway keys list`); /anthropic and /gemini keep the gateway's own words.
import { GatewayError, type ErrorCode, type Protocol } from '../http/errors.js';
import { maskKey, type KeyRecord } from '../store/keys.js';

export type KeyRefusal =
  | { reason: 'missing' }
  | { reason: 'not_proxy' | 'admin_key' | 'unknown'; presented: string }
  | { reason: 'revoked' | 'expired'; presented: string; record: KeyRecord };

const CODES: Record<KeyRefusal['reason'], ErrorCode> = {
  missing: 'missing_api_key',
  not_proxy: 'invalid_api_key',
  admin_key: 'invalid_api_key',
  unknown: 'invalid_api_key',
  revoked: 'key_revoked',
  expired: 'key_expired',
};

/** Shorter keys are not real keys: show nothing of them rather than most of them. */
const MIN_MASKABLE = 20;

/** What the message may show of a presented key: `sk-proxy-…wxyz` (first 9 and last 4 at most). */
function shown(presented: string): string {
  return presented.length >= MIN_MASKABLE ? maskKey(presented) : '…';
}

/** What went wrong, in the gateway's words. */
function detail(r: KeyRefusal): string {
  switch (r.reason) {
    case 'missing': return 'missing proxy key: send "Authorization: Bearer sk-proxy-…" (create one with: gateway keys create)';
    case 'not_proxy': return 'not a proxy key: the gateway takes sk-proxy-… keys (create one with: gateway keys create), never a provider key';
    case 'admin_key': return 'an admin key is not a proxy key: it opens the admin API only; clients use sk-proxy-… keys (create one with: gateway keys create)';
    case 'unknown': return 'unknown proxy key (see: gateway keys list)';
    case 'revoked': return `proxy key "${r.record.name}" has been revoked`;
    case 'expired': return `proxy key "${r.record.name}" expired at ${r.record.expiresAt}`;
    default: { const never: never = r; return never; }
  }
}

const sentence = (s: string): string => `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;

/** The same, in the shape of OpenAI's messages for a missing or wrong key. */
function openaiMessage(r: KeyRefusal): string {
  if (r.reason === 'missing') {
    return 'You didn\'t provide an API key (missing proxy key). You need to provide your proxy key in an Authorization header ' +
      'using Bearer auth (i.e. Authorization: Bearer sk-proxy-…). You can find your proxy keys with `gateway keys list` and create one with `gateway keys create`.';
  }
  const why = r.reason === 'not_proxy' ? 'This is not a proxy key: the gateway takes sk-proxy-… keys (create one with `gateway keys create`), never a provider key.'
    : r.reason === 'admin_key' ? 'This is an admin key, which opens the admin API only: clients use sk-proxy-… keys (create one with `gateway keys create`).'
    : r.reason === 'unknown' ? 'This is an unknown proxy key.'
    : sentence(detail(r));
  return `Incorrect API key provided: ${shown(r.presented)}. ${why} You can find your proxy keys with \`gateway keys list\`.`;
}

export function keyRefusal(r: KeyRefusal, protocol: Protocol): GatewayError {
  return new GatewayError(CODES[r.reason], protocol === 'openai' ? openaiMessage(r) : detail(r));
}
