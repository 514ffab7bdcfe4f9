// The IR in Chat Completions' vocabulary: finish reasons, usage and log probabilities
// (provider-reference.md §1.4, §4.6, §4.7), shared by the answer and the stream renderers.
import type { FinishReason, TokenLogprob, Usage } from '../../ir/types.js';
import type { FinishReason as ChatFinishReason, OpenAIUsage } from '../../types.js';

export function toChatFinishReason(reason: FinishReason): ChatFinishReason {
  switch (reason) {
    case 'stop':
    case 'stop-sequence':
    case 'pause': // the turn is incomplete, but Chat has no value for "paused"
    case 'other':
      return 'stop';
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
    case 'refusal':
      return 'content_filter';
    default: {
      const never: never = reason;
      return never;
    }
  }
}

/**
 * IR usage → Chat usage: prompt tokens include cached ones (as the IR counts them), completion
 * tokens include reasoning. A detail the provider does not report is left out, not made 0.
 */
export function toChatUsage(u: Usage): OpenAIUsage {
  const out: OpenAIUsage = { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens };
  if (u.cachedInputTokens !== undefined || u.cacheWriteTokens !== undefined) {
    const details: NonNullable<OpenAIUsage['prompt_tokens_details']> = {};
    if (u.cachedInputTokens !== undefined) details.cached_tokens = u.cachedInputTokens;
    if (u.cacheWriteTokens !== undefined) details.cache_write_tokens = u.cacheWriteTokens;
    out.prompt_tokens_details = details;
  }
  if (u.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: u.reasoningTokens };
  return out;
}

export interface ChatTokenLogprob { token: string; logprob: number; bytes: number[] | null }
export interface ChatChoiceLogprobs { content: Array<ChatTokenLogprob & { top_logprobs: ChatTokenLogprob[] }>; refusal: null }

const encoder = new TextEncoder();

function token(t: { token: string; logprob: number; bytes?: number[] | null }): ChatTokenLogprob {
  return { token: t.token, logprob: t.logprob, bytes: t.bytes === undefined ? [...encoder.encode(t.token)] : t.bytes };
}

/** Chat's `logprobs` object; `bytes` are the token's UTF-8 bytes when the provider gave none. */
export function toChatLogprobs(logprobs: readonly TokenLogprob[]): ChatChoiceLogprobs {
  return { content: logprobs.map((t) => ({ ...token(t), top_logprobs: (t.top ?? []).map(token) })), refusal: null };
}
