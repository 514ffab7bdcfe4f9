// OpenAI chat completion request → Anthropic Messages call (provider-reference.md §4.1–4.3).
// Field policy (mapped / ignored / rejected) lives in fields.ts; messages, content and tools in
// their own modules.
import type { ChatCompletionRequest, TranslateContext, UpstreamCall } from '../types.js';
import { TranslationError } from '../types.js';
import { isRecord } from '../shared/lenient-json.js';
import { assertAnthropicCanHonour } from './fields.js';
import { defaultMaxTokens } from './max-tokens.js';
import { toAnthropicMessages } from './messages.js';
import { fixedSampling } from './sampling.js';
import { toAnthropicTools } from './tools.js';

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic has no JSON mode, and structured outputs need a schema, so `response_format:
 * {type:"json_object"}` becomes this instruction as the last system block. (OpenAI's own JSON mode
 * also relies on the prompt asking for JSON; it only adds a guarantee of valid syntax.)
 */
export const JSON_OBJECT_INSTRUCTION =
  'Respond with a single valid JSON object and nothing else: no prose before or after it and no Markdown code fences.';

/** OpenAI `reasoning_effort` → Anthropic `output_config.effort` (same scale; `minimal` → `low`). */
const EFFORT: Record<string, string | null> = {
  none: null, minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max',
};

export function toAnthropicRequest(req: ChatCompletionRequest, ctx: TranslateContext): UpstreamCall {
  assertAnthropicCanHonour(req);
  const { system, messages } = toAnthropicMessages(req.messages);
  const outputConfig: Record<string, unknown> = {};
  const format = req.response_format;
  if (format?.type === 'json_object' || (format?.type === 'json_schema' && !isRecord(format.json_schema?.schema))) {
    system.push({ type: 'text', text: JSON_OBJECT_INSTRUCTION });
  } else if (format?.type === 'json_schema') {
    outputConfig.format = { type: 'json_schema', schema: format.json_schema.schema };
  }
  const effort = toEffort(req.reasoning_effort);
  if (effort !== undefined) outputConfig.effort = effort;

  const body: Record<string, unknown> = {
    model: ctx.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? defaultMaxTokens(ctx.model),
  };
  if (system.length > 0) body.system = system;
  body.messages = messages;
  const fixed = fixedSampling(ctx.model);
  if (req.temperature !== undefined && req.temperature !== null) {
    const t = toTemperature(req.temperature); // out of range is an error for every model
    if (!fixed) body.temperature = t;
  }
  if (!fixed) {
    if (req.top_p !== undefined && req.top_p !== null) body.top_p = req.top_p;
    if (typeof req.top_k === 'number') body.top_k = req.top_k; // non-standard, as LiteLLM/Portkey accept it
  }
  const stop = typeof req.stop === 'string' ? [req.stop] : (req.stop ?? []);
  if (stop.length > 0) body.stop_sequences = stop;
  Object.assign(body, toAnthropicTools(req));
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;
  const userId = firstNonEmpty(req.user, req.safety_identifier);
  if (userId !== undefined) body.metadata = { user_id: userId };
  if (req.stream === true) body.stream = true;

  return { path: '/v1/messages', body, headers: { 'anthropic-version': ANTHROPIC_VERSION } };
}

/** OpenAI allows 0–2; Anthropic 0–1. Rescaling would change the meaning, so say so instead. */
function toTemperature(t: number): number {
  if (t > 1) throw new TranslationError(`temperature ${t} is above 1, the maximum Anthropic models accept.`, 'temperature');
  return t;
}

function toEffort(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const effort = typeof value === 'string' && Object.hasOwn(EFFORT, value) ? EFFORT[value] : undefined;
  if (effort === undefined) throw new TranslationError(`reasoning_effort ${JSON.stringify(value)} has no Anthropic equivalent.`, 'reasoning_effort');
  return effort ?? undefined;
}

function firstNonEmpty(...values: unknown[]): string | undefined {
  return values.find((v): v is string => typeof v === 'string' && v !== '');
}

