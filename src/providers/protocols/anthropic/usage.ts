// Anthropic usage → IR usage (provider-reference.md §4.7). Anthropic's `input_tokens` leaves out
// cached and cache-written tokens; the IR counts the whole prompt, so they are added back.
// Counts are merged as the stream goes (message_delta may carry null input counts, which must not
// erase message_start's): see anthropic/usage.ts for the merge.
import type { Usage } from '../../ir/types.js';
import type { AnthropicTokenCounts } from '../../anthropic/usage.js';

export { mergeAnthropicUsage, ZERO_TOKEN_COUNTS, type AnthropicTokenCounts } from '../../anthropic/usage.js';

export function toIrUsage(c: AnthropicTokenCounts): Usage {
  return {
    inputTokens: c.input + c.cacheCreation + c.cacheRead,
    outputTokens: c.output, // already includes thinking tokens
    cachedInputTokens: c.cacheRead,
    cacheWriteTokens: c.cacheCreation,
    reasoningTokens: c.thinking,
  };
}
