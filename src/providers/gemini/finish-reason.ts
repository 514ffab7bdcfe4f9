// Gemini `finishReason` → OpenAI `finish_reason`, the recommendation column of
// provider-reference.md §4.6. A function-call turn ends with STOP (Gemini has no tool-specific
// reason), so any emitted call makes it `tool_calls`.
import type { FinishReason } from '../types.js';

/** Gemini finish reasons that mean a filter cut the answer. */
export const CONTENT_FILTER_REASONS: ReadonlySet<string> = new Set([
  'SAFETY', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT',
  // Sources disagree on RECITATION (LiteLLM: content_filter, Portkey: stop); the text was cut
  // because it repeated protected material, which is a filter as far as the client can tell.
  'RECITATION', 'LANGUAGE', 'NO_IMAGE', 'IMAGE_RECITATION', 'IMAGE_OTHER',
]);

/**
 * `STOP`, `OTHER`, `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`, `TOO_MANY_TOOL_CALLS`,
 * `FINISH_REASON_UNSPECIFIED`, values added later and a missing reason all read as `stop`.
 */
export function mapGeminiFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (hasToolCalls) return 'tool_calls';
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && CONTENT_FILTER_REASONS.has(reason)) return 'content_filter';
  return 'stop';
}
