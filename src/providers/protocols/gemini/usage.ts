// Gemini `usageMetadata` → IR usage (provider-reference.md §3.4, §4.7). Gemini counts thoughts
// apart from candidates, and the IR counts reasoning inside output, so output adds them; tool-use
// prompt tokens are input. Gemini reports no cache writes, so that count is left unknown.
import type { Usage } from '../../ir/types.js';
import { asNumber, isRecord } from '../../shared/lenient-json.js';

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
