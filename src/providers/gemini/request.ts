// OpenAI chat request → Gemini `generateContent` / `streamGenerateContent?alt=sse` call
// (provider-reference.md §3.1, §3.2, §4.1). Every request field is either translated, listed in
// GEMINI_IGNORED_FIELDS (no effect on what the model writes, or no Gemini equivalent and safe to
// drop), or listed in GEMINI_UNSUPPORTED_FIELDS and refused with a TranslationError.
import { TranslationError, type ChatCompletionRequest, type TranslateContext, type UpstreamCall } from '../types.js';
import { asRecord, isRecord } from '../shared/lenient-json.js';
import { toGeminiContents } from './contents.js';
import { toGeminiToolConfig, toGeminiTools } from './tools.js';
import type { GeminiGenerationConfig, GeminiRequestBody } from './wire-types.js';

/**
 * Accepted and dropped. `parallel_tool_calls: false` is here although it is not quite harmless:
 * Gemini has no switch for it, so the model may still answer with several calls in one turn (and
 * then expects one result per call). Refusing it would break clients that send it by default,
 * and every OpenAI client already has to read `tool_calls` as an array.
 */
export const GEMINI_IGNORED_FIELDS: readonly string[] = [
  'user', 'safety_identifier', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'prompt_cache_options',
  'stream_options', 'parallel_tool_calls', 'verbosity',
];

/** Fields whose meaning Gemini cannot honour: a request using them is refused. */
export const GEMINI_UNSUPPORTED_FIELDS: readonly string[] = [
  'logit_bias', 'audio', 'prediction', 'web_search_options', 'functions', 'function_call',
];

const THINKING_LEVELS = { minimal: 'MINIMAL', low: 'LOW', medium: 'MEDIUM', high: 'HIGH' } as const;

export function toGeminiRequest(req: ChatCompletionRequest, ctx: TranslateContext): UpstreamCall {
  rejectUnsupported(req);
  const body: GeminiRequestBody = toGeminiContents(req.messages);
  const tools = toGeminiTools(req.tools);
  if (tools !== undefined) body.tools = tools;
  const toolConfig = toGeminiToolConfig(req.tool_choice, tools !== undefined);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  const generationConfig = toGenerationConfig(req);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  const model = encodeURIComponent(ctx.model.replace(/^models\//, ''));
  const path = req.stream === true
    ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
    : `/v1beta/models/${model}:generateContent`;
  return { path, body: body as unknown as Record<string, unknown> };
}

function rejectUnsupported(req: ChatCompletionRequest): void {
  for (const field of GEMINI_UNSUPPORTED_FIELDS) {
    const value = req[field];
    if (value === undefined || value === null || (isRecord(value) && Object.keys(value).length === 0)) continue;
    throw new TranslationError(`${field} is not supported for Gemini models.`, field);
  }
  const modalities = req.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) {
    throw new TranslationError('modalities other than "text" are not supported for Gemini models.', 'modalities');
  }
}

function toGenerationConfig(req: ChatCompletionRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const num = (field: string): number | undefined => {
    const value = req[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new TranslationError(`${field} must be a number.`, field);
    return value;
  };
  const set = <K extends keyof GeminiGenerationConfig>(key: K, value: GeminiGenerationConfig[K] | undefined): void => {
    if (value !== undefined) config[key] = value;
  };
  set('temperature', num('temperature'));
  set('topP', num('top_p'));
  set('topK', num('top_k'));
  set('maxOutputTokens', num('max_completion_tokens') ?? num('max_tokens'));
  set('candidateCount', num('n'));
  set('seed', num('seed'));
  set('frequencyPenalty', num('frequency_penalty'));
  set('presencePenalty', num('presence_penalty'));
  if (typeof req.stop === 'string') config.stopSequences = [req.stop];
  else if (Array.isArray(req.stop) && req.stop.length > 0) config.stopSequences = req.stop;
  if (req.logprobs === true) {
    config.responseLogprobs = true;
    set('logprobs', num('top_logprobs'));
  }
  applyResponseFormat(req, config);
  applyReasoningEffort(req, config);
  return config;
}

function applyResponseFormat(req: ChatCompletionRequest, config: GeminiGenerationConfig): void {
  const format = req.response_format;
  if (format === undefined || format === null || format.type === 'text') return;
  if (format.type === 'json_object') {
    config.responseMimeType = 'application/json';
    return;
  }
  if (format.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = asRecord(format.json_schema).schema;
    if (isRecord(schema)) {
      // `responseJsonSchema` takes standard JSON Schema; `$schema` is the one key it refuses.
      const { $schema: _ignored, ...rest } = schema;
      config.responseJsonSchema = rest;
    }
    return;
  }
  throw new TranslationError(`response_format.type "${String((format as { type: unknown }).type)}" is not supported for Gemini models.`, 'response_format.type');
}

function applyReasoningEffort(req: ChatCompletionRequest, config: GeminiGenerationConfig): void {
  const effort = req.reasoning_effort;
  if (effort === undefined || effort === null) return;
  const level = typeof effort === 'string' && Object.hasOwn(THINKING_LEVELS, effort) ? THINKING_LEVELS[effort as keyof typeof THINKING_LEVELS] : undefined;
  if (level === undefined) {
    throw new TranslationError(
      `reasoning_effort "${String(effort)}" has no Gemini thinking level; use minimal, low, medium or high.`,
      'reasoning_effort',
    );
  }
  config.thinkingConfig = { thinkingLevel: level };
}
