// OpenAI Chat usage → IR usage (provider-reference.md §1.4, §4.7): the protocol's one usage reader,
// for the provider-side readers and the daemon's tap on relayed answers alike. `prompt_tokens`
// already include cached and cache-written tokens and `completion_tokens` the reasoning ones, as
// the IR counts them. A detail the answer reports is kept, 0 included; one it leaves out is unknown.
import type { Usage } from '../../ir/types.js';
import type { UsageReader, UsageStreamTap } from '../../ir/usage-reader.js';
import { asNumber, asRecord, tryParseJson } from '../../shared/lenient-json.js';
import { holdsObject } from '../../shared/json-scan.js';
import { fromResponsesUsage } from '../openai-responses/usage.js';

export function fromChatUsage(usage: unknown): Usage | undefined {
  const u = asRecord(usage);
  const input = asNumber(u.prompt_tokens);
  const output = asNumber(u.completion_tokens);
  // The /openai/ prefix relays OpenAI's other endpoints too (images, audio), whose answers count
  // input and output tokens as Responses does.
  if (input === undefined && output === undefined) return fromResponsesUsage(usage);
  const out: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const prompt = asRecord(u.prompt_tokens_details);
  // DeepSeek counts cache hits in its own prompt_cache_hit_tokens (api-docs.deepseek.com/guides/kv_cache).
  const cached = asNumber(prompt.cached_tokens) ?? asNumber(u.prompt_cache_hit_tokens);
  if (cached !== undefined) out.cachedInputTokens = cached;
  // Cache writes, from servers that bill them (OpenRouter, and the gateway's own Chat door).
  const written = asNumber(prompt.cache_write_tokens);
  if (written !== undefined) out.cacheWriteTokens = written;
  const reasoning = asNumber(asRecord(u.completion_tokens_details).reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

const MODEL = /"model":\s*"([^"]+)"/;

/**
 * Chat chunks carry the model from the first one on; usage comes in one chunk near the end (the
 * others say `"usage":null` when usage was asked for), the only one parsed; `[DONE]` ends it.
 */
function createChatUsageTap(): UsageStreamTap {
  let usage: Usage | undefined;
  let model: string | undefined;
  let complete = false;
  return {
    push(event) {
      if (event.data === '[DONE]') { complete = true; return; }
      if (model === undefined) model = MODEL.exec(event.data)?.[1];
      if (!holdsObject(event.data, '"usage"')) return;
      usage = fromChatUsage(asRecord(tryParseJson(event.data)).usage) ?? usage;
    },
    usage: () => usage,
    model: () => model,
    responseId: () => undefined,
    complete: () => complete,
  };
}

export const chatUsageReader: UsageReader = {
  fromUsage: fromChatUsage,
  usageKey: 'usage',
  modelKey: 'model',
  modelId: (name) => name,
  createStreamTap: createChatUsageTap,
};
