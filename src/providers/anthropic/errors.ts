// Anthropic errors (HTTP or a mid-stream `error` event) → OpenAI error bodies, keeping Anthropic's
// message (provider-reference.md §2.8 and §4.9).
import type { OpenAIErrorBody } from '../types.js';
import { asRecord, asString, tryParseJson } from '../shared/lenient-json.js';

interface ErrorMapping { status: number; type: string; code: string | null }

/** Keyed by Anthropic `error.type`; `status` is what the client sees. */
const BY_ANTHROPIC_TYPE: Record<string, ErrorMapping> = {
  invalid_request_error: { status: 400, type: 'invalid_request_error', code: null },
  authentication_error: { status: 401, type: 'authentication_error', code: 'upstream_auth_failed' },
  // 402 stays 402 rather than OpenAI's 429 `insufficient_quota`: OpenAI SDKs retry every 429 with
  // backoff, and retrying an empty Anthropic balance only delays the failure.
  billing_error: { status: 402, type: 'insufficient_quota', code: 'insufficient_quota' },
  permission_error: { status: 403, type: 'permission_error', code: null },
  // The only path we call is /v1/messages, so a 404 means the model id is unknown.
  not_found_error: { status: 404, type: 'invalid_request_error', code: 'model_not_found' },
  request_too_large: { status: 413, type: 'invalid_request_error', code: 'request_too_large' },
  rate_limit_error: { status: 429, type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' },
  api_error: { status: 500, type: 'server_error', code: null },
  timeout_error: { status: 504, type: 'server_error', code: 'timeout' },
  // 529 is Anthropic-only; 503 is OpenAI's "overloaded" status and every client retries it.
  overloaded_error: { status: 503, type: 'server_error', code: 'overloaded' },
};

/** The Anthropic error type each documented status stands for (§2.8). */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error',
  403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large',
  429: 'rate_limit_error', 500: 'api_error', 504: 'timeout_error', 529: 'overloaded_error',
};

export const UPSTREAM_AUTH_HINT =
  'Anthropic rejected the API key stored in the gateway (this is not about your proxy key). ' +
  'Run `gateway providers set anthropic` to store a valid Anthropic key.';

function body(message: string, mapping: ErrorMapping): OpenAIErrorBody {
  return { error: { message, type: mapping.type, param: null, code: mapping.code } };
}

function fallbackMapping(status: number): ErrorMapping {
  return status >= 500
    ? { status, type: 'server_error', code: null }
    : { status, type: 'invalid_request_error', code: null };
}

function messageFor(anthropicType: string | undefined, message: string): string {
  return anthropicType === 'authentication_error' ? `${UPSTREAM_AUTH_HINT} Anthropic said: ${message}` : message;
}

/** Reads `{type:"error", error:{type, message}}` leniently. */
function readAnthropicError(value: unknown): { type?: string; message?: string } {
  const error = asRecord(asRecord(value).error);
  return { type: asString(error.type), message: asString(error.message) };
}

/** An Anthropic non-2xx response → the OpenAI status and error body the client receives. */
export function fromAnthropicError(status: number, bodyText: string): { status: number; body: OpenAIErrorBody } {
  const parsed = readAnthropicError(tryParseJson(bodyText));
  const statusType = TYPE_BY_STATUS[status];
  const anthropicType = statusType ?? parsed.type;
  const known = anthropicType === undefined ? undefined : BY_ANTHROPIC_TYPE[anthropicType];
  // A documented status decides the client status; any other status is kept as it came.
  const mapping = known === undefined ? fallbackMapping(status) : statusType === undefined ? { ...known, status } : known;
  const message = messageFor(anthropicType, parsed.message ?? `Anthropic returned HTTP ${status} with no readable error message.`);
  return { status: mapping.status, body: body(message, mapping) };
}

/** The data of a mid-stream `event: error` → the OpenAI error body sent as the stream's last frame. */
export function fromAnthropicStreamError(data: unknown): OpenAIErrorBody {
  const parsed = readAnthropicError(data);
  const mapping = (parsed.type === undefined ? undefined : BY_ANTHROPIC_TYPE[parsed.type]) ?? fallbackMapping(500);
  return body(messageFor(parsed.type, parsed.message ?? 'Anthropic reported an error mid-stream with no message.'), mapping);
}

/** Sent when Anthropic's stream stops after `message_start` but before `message_stop`. */
export function streamEndedEarlyError(): OpenAIErrorBody {
  return {
    error: {
      message: 'upstream stream ended early: Anthropic closed the stream before message_stop.',
      type: 'server_error',
      param: null,
      code: 'upstream_stream_ended',
    },
  };
}
