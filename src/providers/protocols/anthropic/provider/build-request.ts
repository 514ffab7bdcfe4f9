// IR request → an Anthropic Messages call (provider-reference.md §2.1–2.5, §4.1–4.3). Turns and
// content in build-messages.ts, tools in build-tools.ts; here the system prompt, limits, sampling,
// output format and reasoning settings; the gateway's own cache breakpoints, when the target asks
// for them, in cache-breakpoints.ts.
import type { Target } from '../../../ir/protocol.js';
import type { Effort, ReasoningSettings, Request } from '../../../ir/types.js';
import { TranslationError, type UpstreamCall } from '../../../types.js';
import { ANTHROPIC_VERSION, JSON_OBJECT_INSTRUCTION } from '../constants.js';
import { defaultMaxTokens } from '../max-tokens.js';
import { fixedSampling } from '../sampling.js';
import { textBlocks, type Block } from './build-content.js';
import { toAnthropicMessages } from './build-messages.js';
import { placeCacheBreakpoints } from './cache-breakpoints.js';
import { toAnthropicTools } from './build-tools.js';
import { toAnthropicOutputSchema } from './output-schema.js';
import { jsonSchemaInstruction } from '../../../shared/json-instruction.js';

/** The IR effort scale → `output_config.effort` (`minimal` is `low`; `none` sends nothing). */
const EFFORT: Readonly<Record<Effort, string | undefined>> = {
  none: undefined, minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max',
};

export function buildAnthropicRequest(req: Request, target: Target): UpstreamCall {
  const provider = target.displayName;
  // Doors refuse these with their own field names first; this guards the others.
  if (req.candidates !== undefined && req.candidates > 1) throw new TranslationError(`${req.candidates} candidates were asked for: ${provider} returns exactly one choice per request.`, 'candidates');
  if (req.logprobs !== undefined) throw new TranslationError(`logprobs are not supported: ${provider} does not return token log probabilities.`, 'logprobs');

  const system = req.system.flatMap(textBlocks);
  const outputConfig: Record<string, unknown> = {};
  const output = req.output;
  // Anthropic has no JSON mode, and structured outputs need a schema (one they can express,
  // output-schema.ts): JSON without one is asked for in words.
  if (output?.type === 'json' && output.schema === undefined) system.push({ type: 'text', text: JSON_OBJECT_INSTRUCTION });
  else if (output?.type === 'json' && output.schema !== undefined) {
    const schema = toAnthropicOutputSchema(output.schema);
    if (schema !== undefined) outputConfig.format = { type: 'json_schema', schema };
    else system.push({ type: 'text', text: jsonSchemaInstruction(output.schema) });
  }
  const effort = req.reasoning?.effort === undefined ? undefined : EFFORT[req.reasoning.effort];
  if (effort !== undefined) outputConfig.effort = effort;

  const model = target.model;
  const body: Record<string, unknown> = { model, max_tokens: req.maxOutputTokens ?? defaultMaxTokens(model) };
  if (system.length > 0) body.system = system;
  body.messages = toAnthropicMessages(req.messages, target);
  // Claude models after Opus 4.6 fix their own sampling and refuse other values (sampling.ts).
  const fixed = fixedSampling(model);
  if (req.temperature !== undefined) {
    // Chat allows 0–2, Anthropic 0–1; rescaling would change the meaning, so say so instead.
    if (req.temperature > 1) throw new TranslationError(`temperature ${req.temperature} is above 1, the maximum ${provider} models accept.`, 'temperature');
    if (!fixed) body.temperature = req.temperature;
  }
  if (!fixed && req.topP !== undefined) body.top_p = req.topP;
  if (!fixed && req.topK !== undefined) body.top_k = req.topK;
  if (req.stopSequences.length > 0) body.stop_sequences = req.stopSequences;
  Object.assign(body, toAnthropicTools(req));
  const thinking = toThinking(req.reasoning);
  if (thinking !== undefined) body.thinking = thinking;
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;
  if (req.user !== undefined && req.user !== '') body.metadata = { user_id: req.user };
  if (req.stream) body.stream = true;
  if (target.cache !== undefined) placeCacheBreakpoints(body, target.cache);
  return { path: '/v1/messages', body, headers: { 'anthropic-version': ANTHROPIC_VERSION } };
}

/** An explicit budget or switch → `thinking`; effort alone goes to output_config. */
function toThinking(r: ReasoningSettings | undefined): Block | undefined {
  if (r === undefined) return undefined;
  let thinking: Block;
  if (r.enabled === false) return { type: 'disabled' };
  if (r.budgetTokens !== undefined) thinking = { type: 'enabled', budget_tokens: r.budgetTokens };
  else if (r.enabled === true) thinking = { type: 'adaptive' };
  else return undefined;
  if (r.includeText === false) thinking.display = 'omitted';
  return thinking;
}
