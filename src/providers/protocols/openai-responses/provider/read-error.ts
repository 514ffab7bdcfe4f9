// OpenAI errors for the Responses API. A non-2xx answer has the same `{error:{message,type,param,
// code}}` body as Chat Completions, so the Chat reader reads it (its 401 wording included). In a
// stream, a `response.failed` event carries `response.error {code, message}` and an `error` event
// `{code, message, param}` (some servers nest them under `error`): the kind comes from the code,
// through the table of kinds (ir/errors.ts) for the codes it names, and from the codes only
// Responses has here.
import type { Target } from '../../../ir/protocol.js';
import { ERROR_KINDS } from '../../../ir/errors.js';
import type { ErrorKind, ProviderError } from '../../../ir/types.js';
import { asRecord, asString } from '../../../shared/lenient-json.js';

export { readChatError as readResponsesError } from '../../openai-chat/provider/read-error.js';

/** The status a client sees for a kind a stream reported (before its headers went out). */
const STATUS: Readonly<Partial<Record<ErrorKind, number>>> = {
  invalid_request: 400, authentication: 401, permission: 403, not_found: 404, request_too_large: 413,
  rate_limit: 429, billing: 429, overloaded: 503, timeout: 504,
};

/** Codes of Responses' `ResponseError` that the table of kinds does not name. */
const RESPONSES_CODES: Readonly<Record<string, ErrorKind>> = {
  server_error: 'server', vector_store_timeout: 'timeout', context_length_exceeded: 'invalid_request',
  invalid_prompt: 'invalid_request', bio_policy: 'invalid_request', data_residency_mismatch: 'invalid_request',
};

function kindOf(code: string | undefined, type: string | undefined): ErrorKind {
  if (code !== undefined) {
    if (Object.hasOwn(RESPONSES_CODES, code)) return RESPONSES_CODES[code]!;
    for (const kind of Object.keys(ERROR_KINDS) as ErrorKind[]) if (ERROR_KINDS[kind].openai.code === code) return kind;
    // The image and file codes (`invalid_image_url`, `image_too_large`, `unsupported_image_media_type`…).
    if (code.startsWith('invalid_') || code.includes('image')) return 'invalid_request';
  }
  if (type !== undefined) for (const kind of Object.keys(ERROR_KINDS) as ErrorKind[]) if (ERROR_KINDS[kind].openai.type === type) return kind;
  return 'server';
}

/** `error`: the error object of a `response.failed` response, or the data of an `error` event. */
export function readResponsesStreamError(error: unknown, target: Target): ProviderError {
  let e = asRecord(error);
  if (e.message === undefined && typeof e.error === 'object') e = asRecord(e.error);
  const code = asString(e.code);
  const kind = kindOf(code, asString(e.type));
  const out: ProviderError = { status: STATUS[kind] ?? 500, kind, message: asString(e.message) ?? `${target.displayName} reported an error mid-stream with no message.` };
  if (code !== undefined) out.code = code;
  const param = asString(e.param);
  if (param) out.param = param;
  return out;
}
