// Gemini `finishReason` → the IR's finish reason (provider-reference.md §3.4, §4.6). A turn that
// called functions ends with STOP (Gemini has no tool-specific reason), so any call makes it
// `tool-calls`.
import type { FinishReason } from '../../ir/types.js';

const CONTENT_FILTER = new Set([
  'SAFETY', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT',
  // Sources disagree on RECITATION (LiteLLM: content_filter, Portkey: stop); the text was cut
  // because it repeated protected material, which is a filter as far as the client can tell.
  'RECITATION', 'LANGUAGE', 'NO_IMAGE', 'IMAGE_RECITATION', 'IMAGE_OTHER',
]);

/** A missing reason, STOP and FINISH_REASON_UNSPECIFIED end the turn; OTHER, MALFORMED_FUNCTION_CALL and newer values are `other`. */
export function fromGeminiFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (hasToolCalls) return 'tool-calls';
  if (reason === undefined || reason === 'STOP' || reason === 'FINISH_REASON_UNSPECIFIED') return 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  return CONTENT_FILTER.has(reason) ? 'content-filter' : 'other';
}

/**
 * The IR's finish reason → Gemini's, for the Gemini door. A turn that called tools ends with STOP
 * as Gemini's own do, and so does a stop sequence (Gemini does not tell them apart).
 */
export function toGeminiFinishReason(reason: FinishReason): string {
  switch (reason) {
    case 'stop': case 'tool-calls': case 'stop-sequence': return 'STOP';
    case 'length': return 'MAX_TOKENS';
    case 'content-filter': case 'refusal': return 'SAFETY';
    case 'pause': case 'other': return 'OTHER';
    default: { const never: never = reason; return never; }
  }
}
