// Gemini `candidate.logprobsResult` → OpenAI `choices[].logprobs` (asked for with `logprobs` /
// `top_logprobs`, sent as `responseLogprobs` / `logprobs`). types.ts declares `logprobs: null`,
// so the translators widen that one field with the type below.
import { asArray, asNumber, asRecord, asString } from '../shared/lenient-json.js';

export interface OpenAITokenLogprob { token: string; logprob: number; bytes: number[] }
export interface OpenAIChoiceLogprobs {
  content: Array<OpenAITokenLogprob & { top_logprobs: OpenAITokenLogprob[] }>;
  refusal: null;
}

const encoder = new TextEncoder();

/** `null` when the candidate carries no log probabilities. */
export function fromGeminiLogprobs(logprobsResult: unknown): OpenAIChoiceLogprobs | null {
  const result = asRecord(logprobsResult);
  const chosen = asArray(result.chosenCandidates);
  if (chosen.length === 0) return null;
  const top = asArray(result.topCandidates);
  return {
    content: chosen.map((c, i) => ({
      ...tokenLogprob(c),
      top_logprobs: asArray(asRecord(top[i]).candidates).map(tokenLogprob),
    })),
    refusal: null,
  };
}

function tokenLogprob(value: unknown): OpenAITokenLogprob {
  const c = asRecord(value);
  const token = asString(c.token) ?? '';
  return { token, logprob: asNumber(c.logProbability) ?? 0, bytes: [...encoder.encode(token)] };
}
