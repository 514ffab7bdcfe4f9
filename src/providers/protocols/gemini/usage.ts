// Gemini `usageMetadata` → IR usage (provider-reference.md §3.4, §4.7): the protocol's one usage
// reader, for the provider-side readers and the daemon's tap on relayed answers alike. Gemini counts
// thoughts apart from candidates, and the IR counts reasoning inside output, so output adds them;
// tool-use prompt tokens are input. Gemini's JSON leaves out counts that are 0, so an absent cached
// or thoughts count is 0; it reports no cache writes, so that count is left unknown.
import type { Usage } from '../../ir/types.js';
import type { UsageReader, UsageStreamTap } from '../../ir/usage-reader.js';
import { asNumber, asRecord, isRecord, tryParseJson } from '../../shared/lenient-json.js';
import { modelVersion, modelVersionId } from './read-parts.js';

/** `undefined` when the value is not a usage object (a fragment without `usageMetadata`). */
export function fromGeminiUsage(usageMetadata: unknown): Usage | undefined {
  if (!isRecord(usageMetadata)) return undefined;
  const count = (key: string): number => asNumber(usageMetadata[key]) ?? 0;
  const thoughts = count('thoughtsTokenCount');
  return {
    inputTokens: count('promptTokenCount') + count('toolUsePromptTokenCount'),
    outputTokens: count('candidatesTokenCount') + thoughts,
    cachedInputTokens: count('cachedContentTokenCount'),
    reasoningTokens: thoughts,
  };
}

/**
 * Every fragment of a Gemini stream carries the cumulative usageMetadata, and the stream has no
 * terminator: only the latest fragment matters, kept as text and parsed when asked.
 */
function createGeminiUsageTap(): UsageStreamTap {
  let latest: string | undefined;
  let usage: Usage | undefined;
  let model: string | undefined;
  const read = (): void => {
    if (latest === undefined) return;
    const fragment = asRecord(tryParseJson(latest));
    latest = undefined;
    usage = fromGeminiUsage(fragment.usageMetadata) ?? usage;
    model = modelVersion(fragment) ?? model;
  };
  return {
    push(event) { latest = event.data; },
    usage() { read(); return usage; },
    model() { read(); return model; },
    responseId: () => undefined,
    complete: () => false,
  };
}

export const geminiUsageReader: UsageReader = {
  fromUsage: fromGeminiUsage,
  usageKey: 'usageMetadata',
  modelKey: 'modelVersion',
  modelId: modelVersionId,
  createStreamTap: createGeminiUsageTap,
};

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** IR usage → `usageMetadata`, for the Gemini door: candidates leave the thoughts out, as Gemini counts them. */
export function toGeminiUsage(u: Usage | undefined): GeminiUsageMetadata {
  const input = u?.inputTokens ?? 0;
  const output = u?.outputTokens ?? 0;
  const thoughts = Math.min(u?.reasoningTokens ?? 0, output);
  const out: GeminiUsageMetadata = { promptTokenCount: input, candidatesTokenCount: output - thoughts, totalTokenCount: input + output };
  if (u?.cachedInputTokens) out.cachedContentTokenCount = u.cachedInputTokens;
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  return out;
}
