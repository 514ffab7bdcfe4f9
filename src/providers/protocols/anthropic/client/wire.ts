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
}

/** Anthropic's `input_tokens` leaves out cached and cache-written tokens; the IR's counts them. */
export function toAnthropicUsage(u: Usage | undefined): AnthropicUsage {
  const cached = u?.cachedInputTokens ?? 0;
  const written = u?.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, (u?.inputTokens ?? 0) - cached - written),
    output_tokens: u?.outputTokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}
