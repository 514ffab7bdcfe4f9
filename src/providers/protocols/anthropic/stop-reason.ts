// Anthropic `stop_reason` → the IR's finish reason (provider-reference.md §2.6, §4.6).
import type { FinishReason } from '../../ir/types.js';

/** Missing means the turn simply ended; a value newer than this code is `other`. */
export function fromAnthropicStopReason(stopReason: unknown): FinishReason {
  if (typeof stopReason !== 'string') return 'stop';
  switch (stopReason) {
    case 'end_turn': return 'stop';
    case 'stop_sequence': return 'stop-sequence';
    case 'pause_turn': return 'pause';
    // `compaction` (seen in LiteLLM's map): the context was cut to make room, the answer with it.
    case 'max_tokens': case 'model_context_window_exceeded': case 'compaction': return 'length';
    case 'tool_use': return 'tool-calls';
    case 'refusal': return 'refusal';
    default: return 'other';
  }
}
