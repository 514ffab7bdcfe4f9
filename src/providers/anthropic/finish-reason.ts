// Anthropic `stop_reason` → OpenAI `finish_reason`, following the recommendation column of
// provider-reference.md §4.6.
import type { FinishReason } from '../types.js';

/** The stop reasons listed in the Aug 2026 SDK (§2.6), plus `compaction` seen in LiteLLM's map. */
export type AnthropicStopReason =
  | 'end_turn' | 'stop_sequence' | 'pause_turn' | 'max_tokens' | 'model_context_window_exceeded'
  | 'compaction' | 'tool_use' | 'refusal';

/** Unknown or missing values map to `stop`: the turn ended and nothing says otherwise. */
export function mapAnthropicStopReason(stopReason: unknown): FinishReason {
  if (typeof stopReason !== 'string') return 'stop';
  const reason = stopReason as AnthropicStopReason;
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn': // the turn is incomplete, but OpenAI has no value for "paused"
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
    case 'compaction':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default: {
      const unknown: never = reason;
      void unknown;
      return 'stop';
    }
  }
}
