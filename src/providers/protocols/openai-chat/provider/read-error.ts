// An OpenAI-format error answer → a neutral error, OpenAI's message kept (provider-reference.md
// §1.6, §4.9). A 401 is about the key the gateway holds, never the client's proxy key: it says so.
import type { Target } from '../../../ir/protocol.js';
import type { ErrorKind, ProviderError } from '../../../ir/types.js';
import { asRecord, asString, tryParseJson } from '../../../shared/lenient-json.js';

function kindOf(status: number, code: string | undefined): ErrorKind {
  if (status === 429) return code === 'insufficient_quota' ? 'billing' : 'rate_limit';
  switch (status) {
    case 400: case 422: return 'invalid_request';
    case 401: return 'authentication';
    case 402: return 'billing';
    case 403: return 'permission';
    case 404: return 'not_found';
    case 413: return 'request_too_large';
    case 503: return 'overloaded';
    case 504: return 'timeout';
    default: return status >= 500 ? 'server' : 'invalid_request';
  }
}

/**
 * What a body without OpenAI's `error` wrapper says: Mistral answers `{"object":"error","message":
 * "…"}`, or for a schema error `{"message":{"detail":[{"loc":["body","store"],"msg":"Extra inputs
 * are not permitted"}]}}` (FastAPI's shape, which vLLM and others share at the top level).
 */
export function unwrappedMessage(o: Record<string, unknown>): string | undefined {
  const m = o.message;
  if (typeof m === 'string') return m;
  const detail = asRecord(m).detail ?? o.detail;
  if (!Array.isArray(detail)) return undefined;
  const parts = detail.map((d) => {
    const r = asRecord(d);
    const loc = Array.isArray(r.loc) ? r.loc.filter((x) => x !== 'body').join('.') : '';
    return `${loc ? `${loc}: ` : ''}${asString(r.msg) ?? ''}`;
  }).filter((x) => x !== '');
  return parts.length > 0 ? parts.join('; ') : undefined;
}

export function readChatError(status: number, bodyText: string, target: Target): ProviderError {
  const body = asRecord(tryParseJson(bodyText));
  const e = asRecord(body.error);
  const code = asString(e.code);
  const kind = kindOf(status, code);
  const said = asString(e.message) ?? (body.error === undefined ? unwrappedMessage(body) : undefined) ?? `${target.displayName} answered HTTP ${status}`;
  const message = kind === 'authentication'
    ? `${target.displayName} rejected the API key stored in the gateway (${said}); replace it with: gateway providers set ${target.provider}`
    : said;
  const error: ProviderError = { status, kind, message };
  const param = asString(e.param);
  if (param) error.param = param;
  if (code && kind !== 'authentication') error.code = code;
  return error;
}
