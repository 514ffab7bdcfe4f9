// One table of neutral error kinds with a column per protocol: how each door names a kind in its
// own error shape (OpenAI `type`/`code`, Anthropic `error.type`, Google `status`). The status the
// client sees travels with the error itself.
import type { ErrorKind } from './types.js';

export interface ErrorNames {
  openai: { type: string; code: string | null };
  anthropic: string;
  google: string;
}

export const ERROR_KINDS: Record<ErrorKind, ErrorNames> = {
  invalid_request: { openai: { type: 'invalid_request_error', code: null }, anthropic: 'invalid_request_error', google: 'INVALID_ARGUMENT' },
  authentication: { openai: { type: 'authentication_error', code: 'upstream_auth_failed' }, anthropic: 'authentication_error', google: 'UNAUTHENTICATED' },
  permission: { openai: { type: 'permission_error', code: null }, anthropic: 'permission_error', google: 'PERMISSION_DENIED' },
  not_found: { openai: { type: 'invalid_request_error', code: 'model_not_found' }, anthropic: 'not_found_error', google: 'NOT_FOUND' },
  request_too_large: { openai: { type: 'invalid_request_error', code: 'request_too_large' }, anthropic: 'request_too_large', google: 'INVALID_ARGUMENT' },
  rate_limit: { openai: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' }, anthropic: 'rate_limit_error', google: 'RESOURCE_EXHAUSTED' },
  billing: { openai: { type: 'insufficient_quota', code: 'insufficient_quota' }, anthropic: 'billing_error', google: 'RESOURCE_EXHAUSTED' },
  server: { openai: { type: 'server_error', code: null }, anthropic: 'api_error', google: 'INTERNAL' },
  overloaded: { openai: { type: 'server_error', code: 'overloaded' }, anthropic: 'overloaded_error', google: 'UNAVAILABLE' },
  timeout: { openai: { type: 'server_error', code: 'timeout' }, anthropic: 'timeout_error', google: 'DEADLINE_EXCEEDED' },
  unreachable: { openai: { type: 'server_error', code: 'upstream_unreachable' }, anthropic: 'api_error', google: 'UNAVAILABLE' },
  stream_ended: { openai: { type: 'server_error', code: 'upstream_stream_ended' }, anthropic: 'api_error', google: 'INTERNAL' },
  stream_broken: { openai: { type: 'server_error', code: 'upstream_stream_broken' }, anthropic: 'api_error', google: 'UNAVAILABLE' },
  empty_response: { openai: { type: 'server_error', code: 'upstream_empty_response' }, anthropic: 'api_error', google: 'INTERNAL' },
};
