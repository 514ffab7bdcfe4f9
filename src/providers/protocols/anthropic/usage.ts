// Anthropic usage → IR usage (provider-reference.md §4.7): the protocol's one usage reader, for the
// provider-side readers and the daemon's tap on relayed answers alike. Anthropic's `input_tokens`
// leaves out cached and cache-written tokens; the IR counts the whole prompt, so they are added back.
// Cache writes come as a total (`cache_creation_input_tokens`) and by TTL (`cache_creation`); the
// IR keeps the total and the 1-hour part, the rest being 5-minute writes.
import type { Usage } from '../../ir/types.js';
import type { UsageReader, UsageStreamTap } from '../../ir/usage-reader.js';
import { asNumber, asRecord, asString, isRecord, tryParseJson } from '../../shared/lenient-json.js';

/** The token counts we track, as Anthropic names them; every field defaults to 0. */
export interface AnthropicTokenCounts {
  input: number;
  cacheCreation: number;
  /** Of cacheCreation: the 1-hour writes (`cache_creation.ephemeral_1h_input_tokens`). */
  cacheCreation1h: number;
  cacheRead: number;
  output: number;
  thinking: number;
}

export const ZERO_TOKEN_COUNTS: AnthropicTokenCounts = { input: 0, cacheCreation: 0, cacheCreation1h: 0, cacheRead: 0, output: 0, thinking: 0 };

/**
 * Overlays the counts present in an Anthropic `usage` object onto `base`. Fields that are absent
 * or `null` keep the base value: `message_delta` usage is cumulative but may carry `null` input
 * and cache counts, which must not erase the ones from `message_start`.
 */
export function mergeAnthropicUsage(base: AnthropicTokenCounts, usage: unknown): AnthropicTokenCounts {
  const u = asRecord(usage);
  const byTtl = asRecord(u.cache_creation);
  return {
    input: asNumber(u.input_tokens) ?? base.input,
    cacheCreation: asNumber(u.cache_creation_input_tokens) ?? base.cacheCreation,
    cacheCreation1h: asNumber(byTtl.ephemeral_1h_input_tokens) ?? base.cacheCreation1h,
    cacheRead: asNumber(u.cache_read_input_tokens) ?? base.cacheRead,
    output: asNumber(u.output_tokens) ?? base.output,
    thinking: asNumber(asRecord(u.output_tokens_details).thinking_tokens) ?? base.thinking,
  };
}

export function toIrUsage(c: AnthropicTokenCounts): Usage {
  return {
    inputTokens: c.input + c.cacheCreation + c.cacheRead,
    outputTokens: c.output, // already includes thinking tokens
    cachedInputTokens: c.cacheRead,
    cacheWriteTokens: c.cacheCreation,
    cacheWrite1hTokens: Math.min(c.cacheCreation1h, c.cacheCreation),
    reasoningTokens: c.thinking,
  };
}

/** A whole Message's `usage` → IR usage. */
export function fromAnthropicUsage(usage: unknown): Usage | undefined {
  return isRecord(usage) ? toIrUsage(mergeAnthropicUsage(ZERO_TOKEN_COUNTS, usage)) : undefined;
}

/**
 * A stream's usage comes in `message_start` (the message, with the input counts and model) and
 * `message_delta` (cumulative output); `message_stop` ends it. Anthropic names every event, so
 * the others are never parsed.
 */
function createAnthropicUsageTap(): UsageStreamTap {
  let counts: AnthropicTokenCounts | undefined;
  let model: string | undefined;
  let complete = false;
  return {
    push(event) {
      switch (event.event) {
        case 'message_start': {
          const message = asRecord(asRecord(tryParseJson(event.data)).message);
          counts = mergeAnthropicUsage(counts ?? ZERO_TOKEN_COUNTS, message.usage);
          model ??= asString(message.model);
          break;
        }
        case 'message_delta':
          counts = mergeAnthropicUsage(counts ?? ZERO_TOKEN_COUNTS, asRecord(tryParseJson(event.data)).usage);
          break;
        case 'message_stop':
          complete = true;
          break;
        default:
          break;
      }
    },
    usage: () => (counts === undefined ? undefined : toIrUsage(counts)),
    model: () => model,
    responseId: () => undefined,
    complete: () => complete,
  };
}

export const anthropicUsageReader: UsageReader = {
  fromUsage: fromAnthropicUsage,
  usageKey: 'usage',
  modelKey: 'model',
  modelId: (name) => name,
  createStreamTap: createAnthropicUsageTap,
};
