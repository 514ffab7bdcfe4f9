// Anthropic requires `max_tokens`; OpenAI does not, and the Vercel AI SDK and LangChain send none
// by default. When the client gives no limit we pick one per model family.
//
// Each default is the largest value every model of that family accepts, so the request is never
// rejected for asking too much, while answers are not cut short in practice:
//   claude-3-<tier>-…    (Claude 3 Haiku/Sonnet/Opus)  4,096  — their maximum output
//   claude-3-5-…         (Claude 3.5 Haiku/Sonnet)     8,192  — their maximum output
//   claude-3-7-… and every later `claude-` id          32,000 — Claude Opus 4 / 4.1 stop at 32,000;
//                                                              3.7 Sonnet and all other 4.x+ models allow ≥64,000
//   anything else (an id we cannot place)              4,096  — LiteLLM's default; safe for every model
// A client that wants more (e.g. 64k on Sonnet 4.5) sets max_tokens / max_completion_tokens itself.

const FAMILY_DEFAULTS: ReadonlyArray<{ prefix: string; maxTokens: number }> = [
  { prefix: 'claude-3-5-', maxTokens: 8_192 },
  { prefix: 'claude-3-7-', maxTokens: 32_000 },
  { prefix: 'claude-3-', maxTokens: 4_096 },
  { prefix: 'claude-', maxTokens: 32_000 },
];

export const FALLBACK_MAX_TOKENS = 4_096;

/** The `max_tokens` sent when the client set none, for the upstream model id (no routing prefix). */
export function defaultMaxTokens(model: string): number {
  const id = model.toLowerCase();
  return FAMILY_DEFAULTS.find((f) => id.startsWith(f.prefix))?.maxTokens ?? FALLBACK_MAX_TOKENS;
}
