// IR → Anthropic's answer vocabulary: stop reasons and usage (provider-reference.md §2.6, §4.6, §4.7).
import type { FinishReason, Usage } from '../../../ir/types.js';

export function toStopReason(reason: FinishReason): string {
  switch (reason) {
    case 'stop': return 'end_turn';
    case 'length': return 'max_tokens';
    case 'tool-calls': return 'tool_use';
    case 'stop-sequence': return 'stop_sequence';
    case 'content-filter': case 'refusal': return 'refusal';
    case 'pause': return 'pause_turn';
    case 'other': return 'end_turn';
    default: { const never: never = reason; return never; }
  }
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The cache writes by TTL, as Anthropic reports them beside their total. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/**
 * IR usage → Anthropic's: `input_tokens` leaves out the cache reads and writes the IR's counts, which
 * go in their own fields (Anthropic's "total input tokens" is the sum of the three). Writes the
 * provider did not say the TTL of were 5-minute ones (the default TTL).
 */
export function toAnthropicUsage(u: Usage | undefined): AnthropicUsage {
  const cached = u?.cachedInputTokens ?? 0;
  const written = u?.cacheWriteTokens ?? 0;
  const hour = Math.min(u?.cacheWrite1hTokens ?? 0, written);
  return {
    input_tokens: Math.max(0, (u?.inputTokens ?? 0) - cached - written),
    output_tokens: u?.outputTokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: written - hour, ephemeral_1h_input_tokens: hour },
  };
}
