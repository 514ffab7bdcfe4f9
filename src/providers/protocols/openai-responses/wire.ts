// The IR in the Responses API's vocabulary (platform.openai.com/docs/api-reference/responses):
// usage as the door writes it (usage.ts reads it), and how an answer's end reads as a response
// `status` with `incomplete_details`, both ways: the door's renderers write them, the provider
// side's readers read them.
import type { FinishReason, Usage } from '../../ir/types.js';
import { asRecord, asString } from '../../shared/lenient-json.js';

export interface ResponsesUsage {
  input_tokens: number;
  /** `cache_write_tokens`: the gateway's (and OpenRouter's) addition, when the provider reported writes. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * IR usage → Responses usage: input includes cache reads and writes, output includes reasoning (as
 * both count them); cache writes are told as the Chat door tells them, when the provider reported any.
 */
export function toResponsesUsage(u: Usage | undefined): ResponsesUsage {
  const input = u?.inputTokens ?? 0;
  const output = u?.outputTokens ?? 0;
  const details: ResponsesUsage['input_tokens_details'] = { cached_tokens: u?.cachedInputTokens ?? 0 };
  if (u?.cacheWriteTokens !== undefined) details.cache_write_tokens = u.cacheWriteTokens;
  return {
    input_tokens: input,
    input_tokens_details: details,
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.reasoningTokens ?? 0 },
    total_tokens: input + output,
  };
}

export type ResponseStatus = 'completed' | 'incomplete' | 'failed' | 'in_progress';

/**
 * How an answer's end reads in a response object: `incomplete` with a reason when the model was
 * cut off (max tokens, a content filter), else `completed` (tool calls, stops and refusals too:
 * OpenAI reports those by the output items, not the status).
 */
export function toResponseStatus(reason: FinishReason): { status: ResponseStatus; incomplete: { reason: string } | null } {
  switch (reason) {
    case 'length': return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
    case 'content-filter': return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
    default: return { status: 'completed', incomplete: null };
  }
}

/**
 * Responses has no finish reason: a response is `completed` or `incomplete` (with a reason), and
 * the rest is read from its output: a refusal, or function calls the client must run.
 */
export function finishOf(response: Record<string, unknown>, seen: { calls: boolean; refusal: boolean }): FinishReason {
  if (response.status === 'failed' || response.status === 'cancelled') return 'other';
  if (response.status === 'incomplete') {
    switch (asString(asRecord(response.incomplete_details).reason)) {
      case 'max_output_tokens': return 'length';
      case 'content_filter': return 'content-filter';
      default: return 'other';
    }
  }
  if (seen.refusal) return 'refusal';
  return seen.calls ? 'tool-calls' : 'stop';
}
