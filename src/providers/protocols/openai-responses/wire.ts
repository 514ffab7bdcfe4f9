// The IR in the Responses API's vocabulary (platform.openai.com/docs/api-reference/responses):
// usage, and how an answer's end reads as a response `status` with `incomplete_details`. Shared
// by the door's renderers and the provider side's readers.
import type { FinishReason, Usage } from '../../ir/types.js';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** IR usage → Responses usage: input includes cached tokens, output includes reasoning (as both count them). */
export function toResponsesUsage(u: Usage | undefined): ResponsesUsage {
  const input = u?.inputTokens ?? 0;
  const output = u?.outputTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u?.cachedInputTokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.reasoningTokens ?? 0 },
    total_tokens: input + output,
  };
}

/** Responses usage → IR usage (lenient: a missing count reads as 0, a missing detail as absent). */
export function fromResponsesUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as { input_tokens?: unknown; output_tokens?: unknown; input_tokens_details?: { cached_tokens?: unknown } | null; output_tokens_details?: { reasoning_tokens?: unknown } | null };
  const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: Usage = { inputTokens: num(u.input_tokens) ?? 0, outputTokens: num(u.output_tokens) ?? 0 };
  const cached = num(u.input_tokens_details?.cached_tokens);
  if (cached !== undefined && cached > 0) out.cachedInputTokens = cached;
  const reasoning = num(u.output_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined && reasoning > 0) out.reasoningTokens = reasoning;
  return out;
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
