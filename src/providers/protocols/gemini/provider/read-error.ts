// Gemini's error answers → neutral errors, Google's message kept (provider-reference.md §3.6, §4.9).
// Gemini answers a wrong key with 400 API_KEY_INVALID and a missing one with 403, never 401: both
// become an authentication error that says whose key failed. A 429's RetryInfo delay is kept.
import type { Target } from '../../../ir/protocol.js';
import type { ErrorKind, ProviderError } from '../../../ir/types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson } from '../../../shared/lenient-json.js';

const HTTP_BY_STATUS_NAME: Record<string, number> = {
  INVALID_ARGUMENT: 400, FAILED_PRECONDITION: 400, OUT_OF_RANGE: 400, UNAUTHENTICATED: 401, PERMISSION_DENIED: 403,
  NOT_FOUND: 404, RESOURCE_EXHAUSTED: 429, INTERNAL: 500, UNAVAILABLE: 503, DEADLINE_EXCEEDED: 504,
};

function kindOf(status: number): ErrorKind {
  switch (status) {
    case 400: return 'invalid_request';
    case 401: return 'authentication';
    case 402: return 'billing';
    case 403: return 'permission';
    case 404: return 'not_found';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit';
    case 503: return 'overloaded';
    case 504: return 'timeout';
    default: return status >= 500 ? 'server' : 'invalid_request';
  }
}

/** Google's `error` object → a neutral error; `status` is the HTTP status it came with. */
export function readGeminiErrorObject(error: unknown, status: number, target: Target): ProviderError {
  const e = asRecord(error);
  const statusName = asString(e.status);
  const httpStatus = status >= 400 ? status : (statusName ? HTTP_BY_STATUS_NAME[statusName] : undefined) ?? asNumber(e.code) ?? 500;
  const details = asArray(e.details).map(asRecord);
  const said = asString(e.message) ?? `${target.displayName} answered HTTP ${httpStatus}`;
  const badKey = details.some((d) => d.reason === 'API_KEY_INVALID') || /api key/i.test(said);
  if (badKey && (httpStatus === 400 || httpStatus === 401 || httpStatus === 403)) {
    return { status: 401, kind: 'authentication', message: `${target.displayName} rejected the API key stored in the gateway (${said}); replace it with: gateway providers set ${target.provider}` };
  }
  const out: ProviderError = { status: httpStatus, kind: kindOf(httpStatus), message: said };
  const retry = details.find((d) => typeof d['@type'] === 'string' && (d['@type'] as string).endsWith('RetryInfo'));
  const delay = asString(retry?.retryDelay);
  if (delay && /^\d+(\.\d+)?s$/.test(delay)) out.retryAfter = String(Math.ceil(Number(delay.slice(0, -1))));
  return out;
}

export function readGeminiError(status: number, bodyText: string, target: Target): ProviderError {
  let parsed = tryParseJson(bodyText);
  if (Array.isArray(parsed)) parsed = parsed[0]; // the non-SSE stream form wraps it in an array
  if (!isRecord(parsed) || !isRecord(parsed.error)) return { status, kind: kindOf(status), message: `${target.displayName} answered HTTP ${status} with no readable error message` };
  return readGeminiErrorObject(parsed.error, status, target);
}
