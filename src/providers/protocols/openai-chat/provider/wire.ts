// OpenAI Chat's finish reasons → the IR's (provider-reference.md §1.4, §4.6); its usage is read by ../usage.ts.
import type { FinishReason } from '../../../ir/types.js';

export function fromFinishReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop': return 'stop';
    case 'length': return 'length';
    case 'tool_calls': case 'function_call': return 'tool-calls';
    case 'content_filter': return 'content-filter';
    default: return 'other';
  }
}
