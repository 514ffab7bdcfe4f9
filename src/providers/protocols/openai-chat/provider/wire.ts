// OpenAI Chat's answer vocabulary → the IR's: finish reasons and usage (provider-reference.md §1.4, §4.6, §4.7).
import type { FinishReason, Usage } from '../../../ir/types.js';
import { asNumber, asRecord } from '../../../shared/lenient-json.js';

export function fromFinishReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop': return 'stop';
    case 'length': return 'length';
    case 'tool_calls': case 'function_call': return 'tool-calls';
    case 'content_filter': return 'content-filter';
    default: return 'other';
  }
}

/** OpenAI's prompt_tokens already include cached tokens, as the IR counts them. */
export function fromChatUsage(usage: unknown): Usage | undefined {
  const u = asRecord(usage);
  const input = asNumber(u.prompt_tokens);
  const output = asNumber(u.completion_tokens);
  if (input === undefined && output === undefined) return undefined;
  const out: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  // DeepSeek counts cache hits in its own prompt_cache_hit_tokens (api-docs.deepseek.com/guides/kv_cache).
  const cached = asNumber(asRecord(u.prompt_tokens_details).cached_tokens) ?? asNumber(u.prompt_cache_hit_tokens);
  if (cached) out.cachedInputTokens = cached;
  const reasoning = asNumber(asRecord(u.completion_tokens_details).reasoning_tokens);
  if (reasoning) out.reasoningTokens = reasoning;
  return out;
}
