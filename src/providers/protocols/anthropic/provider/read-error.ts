// Anthropic errors (an HTTP answer or a mid-stream `error` event) → neutral errors, keeping
// Anthropic's message (provider-reference.md §2.8, §4.9). A 401 says it is the key stored in the
// gateway that was refused, not the client's proxy key, and how to replace it.
import type { Target } from '../../../ir/protocol.js';
import type { ErrorKind, ProviderError } from '../../../ir/types.js';
import { asRecord, asString, tryParseJson } from '../../../shared/lenient-json.js';

interface Mapping { status: number; kind: ErrorKind }

/** Keyed by Anthropic `error.type`; `status` is what the client sees. */
const BY_TYPE: Readonly<Record<string, Mapping>> = {
  invalid_request_error: { status: 400, kind: 'invalid_request' },
  authentication_error: { status: 401, kind: 'authentication' },
  // 402 stays 402 rather than OpenAI's 429 `insufficient_quota`: OpenAI SDKs retry every 429 with
  // backoff, and retrying an empty balance only delays the failure.
  billing_error: { status: 402, kind: 'billing' },
  permission_error: { status: 403, kind: 'permission' },
  // The only path we call is /v1/messages, so a 404 means the model id is unknown.
  not_found_error: { status: 404, kind: 'not_found' },
  request_too_large: { status: 413, kind: 'request_too_large' },
  rate_limit_error: { status: 429, kind: 'rate_limit' },
  api_error: { status: 500, kind: 'server' },
  timeout_error: { status: 504, kind: 'timeout' },
  // 529 is Anthropic's own; 503 is the "overloaded" status every client retries.
  overloaded_error: { status: 503, kind: 'overloaded' },
};

/** The error type each documented status stands for (§2.8). */
const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error',
  403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large',
  429: 'rate_limit_error', 500: 'api_error', 504: 'timeout_error', 529: 'overloaded_error',
};

const known = (type: string | undefined): Mapping | undefined => (type !== undefined && Object.hasOwn(BY_TYPE, type) ? BY_TYPE[type] : undefined);

/** Reads `{type:"error", error:{type, message}}` leniently. */
function readBody(value: unknown): { type?: string; message?: string } {
  const error = asRecord(asRecord(value).error);
  return { type: asString(error.type), message: asString(error.message) };
}

function messageFor(type: string | undefined, message: string, target: Target): string {
  if (type !== 'authentication_error') return message;
  return `${target.displayName} rejected the API key stored in the gateway (this is not about your proxy key). ` +
    `Run \`gateway providers set ${target.provider}\` to store a valid ${target.displayName} key. ${target.displayName} said: ${message}`;
}

/** A non-2xx answer: a documented status decides the client's status; any other is kept as it came. */
export function readAnthropicError(status: number, bodyText: string, target: Target): ProviderError {
  const parsed = readBody(tryParseJson(bodyText));
  const statusType = Object.hasOwn(TYPE_BY_STATUS, status) ? TYPE_BY_STATUS[status] : undefined;
  const type = statusType ?? parsed.type;
  const mapping = known(type);
  const kind = mapping?.kind ?? (status >= 500 ? 'server' : 'invalid_request');
  const message = parsed.message ?? `${target.displayName} returned HTTP ${status} with no readable error message.`;
  return { status: statusType === undefined || mapping === undefined ? status : mapping.status, kind, message: messageFor(type, message, target) };
}

/** The data of a mid-stream `event: error`. */
export function readAnthropicStreamError(data: unknown, target: Target): ProviderError {
  const parsed = readBody(data);
  const mapping = known(parsed.type) ?? { status: 500, kind: 'server' };
  const message = parsed.message ?? `${target.displayName} reported an error mid-stream with no message.`;
  return { status: mapping.status, kind: mapping.kind, message: messageFor(parsed.type, message, target) };
}
