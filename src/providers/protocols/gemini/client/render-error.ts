// A neutral error → Google's error JSON (provider-reference.md §3.6), the status kept. A retry
// delay in seconds is added as Google's RetryInfo detail, which the SDKs and gemini-cli read.
import { ERROR_KINDS } from '../../../ir/errors.js';
import type { ProviderError } from '../../../ir/types.js';

export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: Array<Record<string, string>> };
}

export function googleErrorBody(error: ProviderError): GoogleErrorBody {
  const body: GoogleErrorBody = { error: { code: error.status, message: error.message, status: ERROR_KINDS[error.kind].google } };
  // An HTTP-date retry-after cannot be turned into a delay without a clock: it is left out.
  if (error.retryAfter !== undefined && /^\d+$/.test(error.retryAfter)) {
    body.error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${error.retryAfter}s` }];
  }
  return body;
}

export function renderGoogleError(error: ProviderError): { status: number; body: GoogleErrorBody } {
  return { status: error.status, body: googleErrorBody(error) };
}
