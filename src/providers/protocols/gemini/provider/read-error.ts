// Gemini errors (an HTTP answer or an in-stream `{"error":…}` fragment) → neutral errors, keeping
// Google's message (provider-reference.md §3.6, §4.9). Gemini answers a wrong key with 400
// `API_KEY_INVALID` and a missing one with 403 PERMISSION_DENIED, never 401 (MACHINE-NOTES), so
// both are recognised and turned into a 401 that says whose key failed.
import type { Target } from '../../../ir/protocol.js';
import type { ErrorKind, ProviderError } from '../../../ir/types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson } from '../../../shared/lenient-json.js';

/** `retrySeconds`: a RetryInfo detail's delay (`"12s"` → `"12"`), what a retry-after header would say. */
interface GoogleError { message?: string; status?: string; reasons: string[]; retrySeconds?: string }
interface Mapping { status: number; kind: ErrorKind }

const HTTP_BY_GRPC_STATUS: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400, FAILED_PRECONDITION: 400, OUT_OF_RANGE: 400, UNAUTHENTICATED: 401, PERMISSION_DENIED: 403,
  NOT_FOUND: 404, RESOURCE_EXHAUSTED: 429, CANCELLED: 499, INTERNAL: 500, UNAVAILABLE: 503, DEADLINE_EXCEEDED: 504,
};

const BY_STATUS: Readonly<Record<number, Mapping>> = {
  400: { status: 400, kind: 'invalid_request' },
  401: { status: 401, kind: 'authentication' },
  // 402 is Gemini's prepaid credit running out: OpenAI's analogue is 429 `insufficient_quota`.
  402: { status: 429, kind: 'billing' },
  403: { status: 403, kind: 'permission' },
  404: { status: 404, kind: 'not_found' },
  429: { status: 429, kind: 'rate_limit' },
  500: { status: 500, kind: 'server' },
  503: { status: 503, kind: 'overloaded' },
  504: { status: 504, kind: 'timeout' },
};

/** A non-2xx answer. */
export function readGeminiError(status: number, bodyText: string, target: Target): ProviderError {
  let parsed = tryParseJson(bodyText);
  if (Array.isArray(parsed)) parsed = parsed[0]; // the non-SSE stream form wraps it in an array
  if (!isRecord(parsed) || !isRecord(parsed.error)) {
    const mapping = mappingFor(status, { reasons: [] });
    return { status: mapping.status, kind: mapping.kind, message: `${target.displayName} returned HTTP ${status} with no readable error message.` };
  }
  return map(status, readGoogleError(parsed.error), target);
}

/** The `error` object of an in-stream `{"error":{code,message,status}}` fragment. */
export function readGeminiStreamError(error: unknown, target: Target): ProviderError {
  const e = readGoogleError(error);
  const grpc = e.status !== undefined && Object.hasOwn(HTTP_BY_GRPC_STATUS, e.status) ? HTTP_BY_GRPC_STATUS[e.status] : undefined;
  return map(asNumber(asRecord(error).code) ?? grpc ?? 500, e, target);
}

function map(status: number, e: GoogleError, target: Target): ProviderError {
  const mapping = mappingFor(status, e);
  const name = target.displayName;
  const message = e.message ?? `${name} returned HTTP ${status} (${e.status ?? 'no status'}) with no message.`;
  const out: ProviderError = {
    status: mapping.status,
    kind: mapping.kind,
    message: mapping.kind === 'authentication'
      ? `${name} rejected the API key stored in the gateway (this is not about your proxy key). Run \`gateway providers set ${target.provider}\` to store a valid ${name} key. ${name} said: ${message}`
      : message,
  };
  if (e.retrySeconds !== undefined) out.retryAfter = e.retrySeconds;
  return out;
}

function mappingFor(status: number, e: GoogleError): Mapping {
  if (isKeyRejected(status, e)) return BY_STATUS[401]!;
  return (Object.hasOwn(BY_STATUS, status) ? BY_STATUS[status] : undefined) ?? { status, kind: status >= 500 ? 'server' : 'invalid_request' };
}

/** Wrong key: 400 with reason API_KEY_INVALID; missing or unusable key: 403 about the key. */
function isKeyRejected(status: number, e: GoogleError): boolean {
  const message = e.message ?? '';
  if (status === 401 || e.status === 'UNAUTHENTICATED') return true;
  if (status === 400) return e.reasons.includes('API_KEY_INVALID') || /API key not valid/i.test(message);
  if (status === 403) return e.reasons.some((r) => r.startsWith('API_KEY_') || r === 'CONSUMER_INVALID') || /unregistered callers|API key/i.test(message);
  return false;
}

function readGoogleError(value: unknown): GoogleError {
  const error = asRecord(value);
  const reasons = asArray(error.details).flatMap((d) => {
    const reason = asString(asRecord(d).reason);
    return reason === undefined ? [] : [reason];
  });
  const delay = asArray(error.details).map(asRecord).find((d) => asString(d['@type'])?.endsWith('RetryInfo') === true)?.retryDelay;
  const e: GoogleError = { message: asString(error.message), status: asString(error.status), reasons };
  if (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay)) e.retrySeconds = String(Math.ceil(Number(delay.slice(0, -1))));
  return e;
}
