// Anthropic usage → OpenAI usage (provider-reference.md §4.7). Anthropic's `input_tokens` excludes
// cached and cache-written tokens ("total input = input + cache_creation + cache_read"), so
// prompt_tokens adds them back and prompt + completion = total holds.
import type { OpenAIUsage } from '../types.js';
import { asNumber, asRecord } from '../shared/lenient-json.js';

/** The token counts we track, as Anthropic names them; every field defaults to 0. */
export interface AnthropicTokenCounts {
  input: number;
  cacheCreation: number;
  cacheRead: number;
  output: number;
  thinking: number;
}

export const ZERO_TOKEN_COUNTS: AnthropicTokenCounts = { input: 0, cacheCreation: 0, cacheRead: 0, output: 0, thinking: 0 };

/**
 * Overlays the counts present in an Anthropic `usage` object onto `base`. Fields that are absent
 * or `null` keep the base value: `message_delta` usage is cumulative but may carry `null` input
 * and cache counts, which must not erase the ones from `message_start`.
 */
export function mergeAnthropicUsage(base: AnthropicTokenCounts, usage: unknown): AnthropicTokenCounts {
  const u = asRecord(usage);
  return {
    input: asNumber(u.input_tokens) ?? base.input,
    cacheCreation: asNumber(u.cache_creation_input_tokens) ?? base.cacheCreation,
    cacheRead: asNumber(u.cache_read_input_tokens) ?? base.cacheRead,
    output: asNumber(u.output_tokens) ?? base.output,
    thinking: asNumber(asRecord(u.output_tokens_details).thinking_tokens) ?? base.thinking,
  };
}

export function toOpenAIUsage(counts: AnthropicTokenCounts): OpenAIUsage {
  const prompt = counts.input + counts.cacheCreation + counts.cacheRead;
  return {
    prompt_tokens: prompt,
    completion_tokens: counts.output, // already includes thinking tokens
    total_tokens: prompt + counts.output,
    prompt_tokens_details: { cached_tokens: counts.cacheRead, cache_write_tokens: counts.cacheCreation },
    completion_tokens_details: { reasoning_tokens: counts.thinking },
  };
}

/** An Anthropic `usage` object → OpenAI usage; missing fields count as 0. */
export function fromAnthropicUsage(usage: unknown): OpenAIUsage {
  return toOpenAIUsage(mergeAnthropicUsage(ZERO_TOKEN_COUNTS, usage));
}
