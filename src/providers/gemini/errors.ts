// Gemini errors (HTTP or an in-stream `{"error":…}` chunk) → OpenAI status + error body, keeping
// Google's message (provider-reference.md §3.6, §4.9). Gemini answers a wrong key with 400
// `API_KEY_INVALID` and a missing one with 403 PERMISSION_DENIED, never 401 (MACHINE-NOTES), so
// both are recognised and turned into a 401 that says whose key failed.
import type { OpenAIErrorBody } from '../types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson } from '../shared/lenient-json.js';

export const GEMINI_AUTH_HINT =
  'Gemini rejected the API key stored in the gateway (this is not about your proxy key). ' +
  'Run `gateway providers set gemini` to store a valid Gemini key.';

interface GoogleError { message?: string; status?: string; reasons: string[] }
interface Mapping { status: number; type: string; code: string | null }

const HTTP_BY_GRPC_STATUS: Record<string, number> = {
  INVALID_ARGUMENT: 400, FAILED_PRECONDITION: 400, OUT_OF_RANGE: 400, UNAUTHENTICATED: 401, PERMISSION_DENIED: 403,
  NOT_FOUND: 404, RESOURCE_EXHAUSTED: 429, CANCELLED: 499, INTERNAL: 500, UNAVAILABLE: 503, DEADLINE_EXCEEDED: 504,
};

const BY_STATUS: Record<number, Mapping> = {
  400: { status: 400, type: 'invalid_request_error', code: null },
  401: { status: 401, type: 'authentication_error', code: 'upstream_auth_failed' },
  // 402 is Gemini's prepaid credit running out: OpenAI's analogue is 429 `insufficient_quota`.
  402: { status: 429, type: 'insufficient_quota', code: 'insufficient_quota' },
  403: { status: 403, type: 'permission_error', code: null },
  404: { status: 404, type: 'invalid_request_error', code: null },
  429: { status: 429, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' },
  500: { status: 500, type: 'server_error', code: null },
  503: { status: 503, type: 'server_error', code: null },
  504: { status: 504, type: 'server_error', code: 'timeout' },
};

/** A Gemini non-2xx response → the OpenAI status and error body the client receives. */
export function fromGeminiError(status: number, bodyText: string): { status: number; body: OpenAIErrorBody } {
  let parsed = tryParseJson(bodyText);
  if (Array.isArray(parsed)) parsed = parsed[0]; // the non-SSE stream form wraps it in an array
  if (!isRecord(parsed) || !isRecord(parsed.error)) {
    const mapping = mappingFor(status, { reasons: [] });
    return { status: mapping.status, body: body(`Gemini returned HTTP ${status} with no readable error message.`, mapping) };
  }
  return map(status, readGoogleError(parsed.error));
}

/** The `error` object of an in-stream `{"error":{code,message,status}}` chunk → OpenAI error body. */
export function fromGeminiStreamError(error: unknown): OpenAIErrorBody {
  const e = readGoogleError(error);
  const status = asNumber(asRecord(error).code) ?? HTTP_BY_GRPC_STATUS[e.status ?? ''] ?? 500;
  return map(status, e).body;
}

function map(status: number, e: GoogleError): { status: number; body: OpenAIErrorBody } {
  const mapping = mappingFor(status, e);
  const message = e.message ?? `Gemini returned HTTP ${status} (${e.status ?? 'no status'}) with no message.`;
  return { status: mapping.status, body: body(mapping.code === 'upstream_auth_failed' ? `${GEMINI_AUTH_HINT} Gemini said: ${message}` : message, mapping) };
}

function mappingFor(status: number, e: GoogleError): Mapping {
  if (isKeyRejected(status, e)) return BY_STATUS[401]!;
  return BY_STATUS[status] ?? {
    status,
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
  };
}

/** Wrong key: 400 with reason API_KEY_INVALID; missing or unusable key: 403 about the key. */
function isKeyRejected(status: number, e: GoogleError): boolean {
  const message = e.message ?? '';
  if (status === 401 || e.status === 'UNAUTHENTICATED') return true;
  if (status === 400) return e.reasons.includes('API_KEY_INVALID') || /API key not valid/i.test(message);
  if (status === 403) {
    return e.reasons.some((r) => r.startsWith('API_KEY_') || r === 'CONSUMER_INVALID')
      || /unregistered callers|API key/i.test(message);
  }
  return false;
}

function readGoogleError(value: unknown): GoogleError {
  const error = asRecord(value);
  const reasons = asArray(error.details).flatMap((d) => {
    const reason = asString(asRecord(d).reason);
    return reason === undefined ? [] : [reason];
  });
  return { message: asString(error.message), status: asString(error.status), reasons };
}

function body(message: string, mapping: Mapping): OpenAIErrorBody {
  return { error: { message, type: mapping.type, param: null, code: mapping.code } };
}
