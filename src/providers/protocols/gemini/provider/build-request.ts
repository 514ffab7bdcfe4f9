// IR request → a Gemini `generateContent` / `streamGenerateContent?alt=sse` call
// (provider-reference.md §3.1, §3.2, §4.1). Contents in build-contents.ts, tools in build-tools.ts;
// here the generation config. The end-user id has no Gemini field and is dropped.
import type { Target } from '../../../ir/protocol.js';
import type { Effort, Request } from '../../../ir/types.js';
import { TranslationError, type UpstreamCall } from '../../../types.js';
import type { GeminiGenerationConfig, GeminiRequestBody, GeminiThinkingLevel } from '../wire.js';
import { toGeminiContents } from './build-contents.js';
import { toGeminiTools } from './build-tools.js';

/** The efforts Gemini has a thinking level for (its policy at the Chat door says the same). */
export const GEMINI_THINKING_LEVELS: Readonly<Partial<Record<Effort, GeminiThinkingLevel>>> = { minimal: 'MINIMAL', low: 'LOW', medium: 'MEDIUM', high: 'HIGH' };

export function buildGeminiRequest(req: Request, target: Target): UpstreamCall {
  const body: GeminiRequestBody = toGeminiContents(req.system, req.messages, target);
  Object.assign(body, toGeminiTools(req, target.displayName));
  const config = generationConfig(req, target.displayName);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  const model = encodeURIComponent(target.model.replace(/^models\//, ''));
  const path = req.stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
  return { path, body: body as unknown as Record<string, unknown> };
}

function generationConfig(req: Request, provider: string): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.topP !== undefined) config.topP = req.topP;
  if (req.topK !== undefined) config.topK = req.topK;
  if (req.maxOutputTokens !== undefined) config.maxOutputTokens = req.maxOutputTokens;
  if (req.candidates !== undefined) config.candidateCount = req.candidates;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.frequencyPenalty !== undefined) config.frequencyPenalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) config.presencePenalty = req.presencePenalty;
  if (req.stopSequences.length > 0) config.stopSequences = req.stopSequences;
  if (req.logprobs !== undefined) {
    config.responseLogprobs = true;
    if (req.logprobs.top > 0) config.logprobs = req.logprobs.top;
  }
  if (req.output?.type === 'json') {
    config.responseMimeType = 'application/json';
    if (req.output.schema !== undefined) {
      // `responseJsonSchema` takes standard JSON Schema; `$schema` is the one key it refuses.
      const { $schema: _ignored, ...schema } = req.output.schema;
      config.responseJsonSchema = schema;
    }
  }
  const r = req.reasoning;
  if (r !== undefined) {
    const thinking: NonNullable<GeminiGenerationConfig['thinkingConfig']> = {};
    if (r.effort !== undefined) {
      const level = GEMINI_THINKING_LEVELS[r.effort];
      if (level === undefined) throw new TranslationError(`reasoning effort "${r.effort}" has no ${provider} thinking level; use minimal, low, medium or high.`, 'reasoning.effort');
      thinking.thinkingLevel = level;
    }
    if (r.budgetTokens !== undefined) thinking.thinkingBudget = r.budgetTokens;
    else if (r.enabled === false) thinking.thinkingBudget = 0;
    if (r.includeText === true) thinking.includeThoughts = true;
    if (Object.keys(thinking).length > 0) config.thinkingConfig = thinking;
  }
  return config;
}
