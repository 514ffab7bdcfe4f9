// Gemini `usageMetadata` → OpenAI usage (provider-reference.md §3.4, §4.7). Gemini counts thoughts
// apart from candidates, and OpenAI counts reasoning inside completion_tokens, so completion adds
// them; tool-use prompt tokens are prompt input. That keeps prompt + completion = total.
import type { OpenAIUsage } from '../types.js';
import { asNumber, isRecord } from '../shared/lenient-json.js';

/** `undefined` when the value is not a usage object (a chunk without `usageMetadata`). */
export function fromGeminiUsage(usageMetadata: unknown): OpenAIUsage | undefined {
  if (!isRecord(usageMetadata)) return undefined;
  const count = (key: string): number => asNumber(usageMetadata[key]) ?? 0;
  const prompt = count('promptTokenCount') + count('toolUsePromptTokenCount');
  const thoughts = count('thoughtsTokenCount');
  const completion = count('candidatesTokenCount') + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count('cachedContentTokenCount') },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}
