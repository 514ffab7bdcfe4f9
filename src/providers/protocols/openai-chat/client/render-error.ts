// A neutral error → OpenAI's error body (provider-reference.md §1.5), the status kept: the JSON
// answered before any byte of a stream, and the one `data:` frame that ends a stream that failed.
import { ERROR_KINDS } from '../../../ir/errors.js';
import type { ProviderError } from '../../../ir/types.js';
import type { OpenAIErrorBody } from '../../../types.js';

export function renderChatError(error: ProviderError): { status: number; body: OpenAIErrorBody } {
  const names = ERROR_KINDS[error.kind].openai;
  return {
    status: error.status,
    body: { error: { message: error.message, type: names.type, param: error.param ?? null, code: error.code !== undefined ? error.code : names.code } },
  };
}
