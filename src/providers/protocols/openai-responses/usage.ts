// Responses usage → IR usage (platform.openai.com/docs/api-reference/responses/object#usage): the
// protocol's one usage reader, for the provider-side readers and the daemon's tap on relayed answers
// alike. `input_tokens` already include cached and cache-written tokens and `output_tokens` the
// reasoning ones, as the IR counts them. A detail the answer reports is kept, 0 included.
import type { Usage } from '../../ir/types.js';
import type { UsageReader, UsageStreamTap } from '../../ir/usage-reader.js';
import { asNumber, asRecord, tryParseJson } from '../../shared/lenient-json.js';

export function fromResponsesUsage(usage: unknown): Usage | undefined {
  const u = asRecord(usage);
  const input = asNumber(u.input_tokens);
  const output = asNumber(u.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const out: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const details = asRecord(u.input_tokens_details);
  const cached = asNumber(details.cached_tokens);
  if (cached !== undefined) out.cachedInputTokens = cached;
  const written = asNumber(details.cache_write_tokens);
  if (written !== undefined) out.cacheWriteTokens = written;
  const reasoning = asNumber(asRecord(u.output_tokens_details).reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** The lifecycle events that end a stream; each carries the whole response, with its usage. */
const FINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** A response's own id, the first `"id"` of a response object (or of `response.created`). */
const RESPONSE_ID = /"id":\s*"(resp_[^"]{1,200})"/;
const MODEL = /"model":\s*"([^"]+)"/;

/**
 * The response object rides on the lifecycle events: `response.created` names the id and the
 * model, and only the final event has usage, so it is the one event parsed.
 */
function createResponsesUsageTap(): UsageStreamTap {
  let usage: Usage | undefined;
  let model: string | undefined;
  let responseId: string | undefined;
  let complete = false;
  return {
    push(event) {
      if (model === undefined) model = MODEL.exec(event.data)?.[1];
      if (responseId === undefined && event.event === 'response.created') responseId = RESPONSE_ID.exec(event.data)?.[1];
      if (event.event === undefined || !FINAL_EVENTS.has(event.event)) return;
      complete = true;
      usage = fromResponsesUsage(asRecord(asRecord(tryParseJson(event.data)).response).usage) ?? usage;
    },
    usage: () => usage,
    model: () => model,
    responseId: () => responseId,
    complete: () => complete,
  };
}

export const responsesUsageReader: UsageReader = {
  fromUsage: fromResponsesUsage,
  usageKey: 'usage',
  modelKey: 'model',
  modelId: (name) => name,
  answerId: (head) => RESPONSE_ID.exec(head)?.[1],
  createStreamTap: createResponsesUsageTap,
};
