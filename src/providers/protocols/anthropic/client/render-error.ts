// A neutral error → Anthropic's error JSON (provider-reference.md §2.8), the status kept.
import { ERROR_KINDS } from '../../../ir/errors.js';
import type { ProviderError } from '../../../ir/types.js';

export function renderAnthropicError(error: ProviderError): { status: number; body: { type: 'error'; error: { type: string; message: string } } } {
  return { status: error.status, body: { type: 'error', error: { type: ERROR_KINDS[error.kind].anthropic, message: error.message } } };
}
