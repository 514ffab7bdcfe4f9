// OpenAI Responses' answer vocabulary → the IR's: usage and the finish reason, for both the whole
// answer (read-response.ts) and the stream's terminal event (read-stream.ts).
import type { FinishReason, Usage } from '../../../ir/types.js';
import { asNumber, asRecord, asString } from '../../../shared/lenient-json.js';

/** Responses' `input_tokens` already include cached (and cache-written) tokens, as the IR counts them. */
export function fromResponsesUsage(usage: unknown): Usage | undefined {
  const u = asRecord(usage);
  const input = asNumber(u.input_tokens);
  const output = asNumber(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const out: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const details = asRecord(u.input_tokens_details);
  const cached = asNumber(details.cached_tokens);
  if (cached) out.cachedInputTokens = cached;
  const written = asNumber(details.cache_write_tokens);
  if (written) out.cacheWriteTokens = written;
  const reasoning = asNumber(asRecord(u.output_tokens_details).reasoning_tokens);
  if (reasoning) out.reasoningTokens = reasoning;
  return out;
}

/**
 * Responses has no finish reason: a response is `completed` or `incomplete` (with a reason), and
 * the rest is read from its output: a refusal, or function calls the client must run.
 */
export function finishOf(response: Record<string, unknown>, seen: { calls: boolean; refusal: boolean }): FinishReason {
  if (response.status === 'failed' || response.status === 'cancelled') return 'other';
  if (response.status === 'incomplete') {
    switch (asString(asRecord(response.incomplete_details).reason)) {
      case 'max_output_tokens': return 'length';
      case 'content_filter': return 'content-filter';
      default: return 'other';
    }
  }
  if (seen.refusal) return 'refusal';
  return seen.calls ? 'tool-calls' : 'stop';
}
