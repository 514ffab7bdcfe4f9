// One error type for everything the daemon itself refuses, one code table with fixed statuses, and
// one serializer per client protocol: OpenAI's error object (unified and /openai), Anthropic's
// error JSON (/anthropic), Google's error JSON (/gemini).
import type { ServerResponse } from 'node:http';
import type { ErrorShape } from '../../providers/protocol-facts.js';
import { sendJson } from './send.js';

/** The error shape a route answers in (its protocol's; see protocol-facts.ts). */
export type Protocol = ErrorShape;

export const ERROR_CODES = {
  invalid_request: { status: 400, openai: 'invalid_request_error', anthropic: 'invalid_request_error', google: 'INVALID_ARGUMENT' },
  model_not_found: { status: 400, openai: 'invalid_request_error', anthropic: 'invalid_request_error', google: 'INVALID_ARGUMENT' },
  missing_api_key: { status: 401, openai: 'invalid_request_error', anthropic: 'authentication_error', google: 'UNAUTHENTICATED' },
  invalid_api_key: { status: 401, openai: 'invalid_request_error', anthropic: 'authentication_error', google: 'UNAUTHENTICATED' },
  key_revoked: { status: 401, openai: 'invalid_request_error', anthropic: 'authentication_error', google: 'UNAUTHENTICATED' },
  key_expired: { status: 401, openai: 'invalid_request_error', anthropic: 'authentication_error', google: 'UNAUTHENTICATED' },
  model_not_allowed: { status: 403, openai: 'permission_error', anthropic: 'permission_error', google: 'PERMISSION_DENIED' },
  // A key with a budget asked for a model the price list does not name (limits/limiter.ts).
  model_unpriced: { status: 403, openai: 'permission_error', anthropic: 'permission_error', google: 'PERMISSION_DENIED' },
  // A key's own rpm, tpm or concurrency limit; `retry-after` says when the request fits.
  rate_limited: { status: 429, openai: 'rate_limit_error', anthropic: 'rate_limit_error', google: 'RESOURCE_EXHAUSTED', openaiCode: 'rate_limit_exceeded' },
  // A key's budget is spent: OpenAI's quota error, Anthropic's billing error, Google's exhausted resource.
  budget_exceeded: { status: 429, openai: 'insufficient_quota', anthropic: 'billing_error', google: 'RESOURCE_EXHAUSTED', openaiCode: 'insufficient_quota' },
  // Limits are set on the key but their store cannot be opened: refused rather than served unlimited.
  limits_unavailable: { status: 503, openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  // Team mode: a change to the keys (a session key of chat or run) while the shared store cannot be reached.
  store_unavailable: { status: 503, openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  // GET /v1/models/{id} for an id no alias or provider list knows: OpenAI's 404 `model_not_found`.
  unknown_model: { status: 404, openai: 'invalid_request_error', anthropic: 'not_found_error', google: 'NOT_FOUND', openaiCode: 'model_not_found' },
  // A previous_response_id the gateway's store does not hold (OpenAI answers the same).
  previous_response_not_found: { status: 400, openai: 'invalid_request_error', anthropic: 'invalid_request_error', google: 'INVALID_ARGUMENT' },
  // GET/DELETE /v1/responses/{id} for an id this key cannot see: OpenAI's 404, whose code is null.
  response_not_found: { status: 404, openai: 'invalid_request_error', anthropic: 'not_found_error', google: 'NOT_FOUND', openaiCode: null },
  // Team mode: a stored answer (or a previous_response_id chain) only the shared store holds, while it is unreachable.
  response_store_unavailable: { status: 503, openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  not_found: { status: 404, openai: 'invalid_request_error', anthropic: 'not_found_error', google: 'NOT_FOUND' },
  method_not_allowed: { status: 405, openai: 'invalid_request_error', anthropic: 'invalid_request_error', google: 'INVALID_ARGUMENT' },
  // A WebSocket asked for where only HTTP is served (Codex falls back to HTTP at once on a 426).
  upgrade_required: { status: 426, openai: 'invalid_request_error', anthropic: 'invalid_request_error', google: 'FAILED_PRECONDITION' },
  request_too_large: { status: 413, openai: 'invalid_request_error', anthropic: 'request_too_large', google: 'INVALID_ARGUMENT' },
  internal_error: { status: 500, openai: 'server_error', anthropic: 'api_error', google: 'INTERNAL' },
  upstream_unreachable: { status: 502, openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  // The provider answered, then broke off its response (a stream cut mid-way), as opposed to unreachable.
  upstream_interrupted: { status: 502, openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  provider_not_configured: { status: 503, openai: 'server_error', anthropic: 'api_error', google: 'UNAVAILABLE' },
  shutting_down: { status: 503, openai: 'server_error', anthropic: 'overloaded_error', google: 'UNAVAILABLE' },
  upstream_timeout: { status: 504, openai: 'server_error', anthropic: 'timeout_error', google: 'DEADLINE_EXCEEDED' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class GatewayError extends Error {
  readonly status: number;
  /** Headers the error answer carries (a limit's `retry-after` and `x-gateway-limit`). */
  headers?: Record<string, string>;
  constructor(readonly code: ErrorCode, message: string, readonly param: string | null = null) {
    super(message);
    this.name = 'GatewayError';
    this.status = ERROR_CODES[code].status;
  }
}

export function toErrorBody(err: GatewayError, protocol: Protocol): unknown {
  const row = ERROR_CODES[err.code];
  switch (protocol) {
    case 'openai':
      return { error: { message: err.message, type: row.openai, param: err.param, code: 'openaiCode' in row ? row.openaiCode : err.code } };
    case 'anthropic':
      return { type: 'error', error: { type: row.anthropic, message: err.message } };
    case 'gemini':
      return { error: { code: err.status, message: err.message, status: row.google } };
    default: {
      const never: never = protocol;
      return never;
    }
  }
}

/** Writes an error response (headers not yet sent). */
export function sendError(res: ServerResponse, err: GatewayError, protocol: Protocol): void {
  if (err.headers) for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  sendJson(res, err.status, toErrorBody(err, protocol));
}
