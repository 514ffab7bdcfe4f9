// IR → an OpenAI Responses call (`POST /v1/responses`) for a request that came in by another door.
// Stateless on purpose: `store: false` (the gateway keeps nothing at OpenAI for a translated
// request), the whole conversation in `input`, and reasoning state asked back encrypted
// (`include: ['reasoning.encrypted_content']`) so the next turn can give it back.
//
// What Responses has no field for:
// - refused (the answer would differ from what the client asked for): stop sequences (the model
//   would write past them), more than one candidate, log probabilities;
// - dropped (sampling nudges, as the Chat door's field policy drops them for targets without the
//   knob; the answer is still an answer to the same request): topK, seed, frequency and presence
//   penalties; and a thinking token budget (OpenAI sets reasoning by effort only).
import { openaiJsonInWords } from '../../../shared/json-instruction.js';
import type { Target } from '../../../ir/protocol.js';
import type { Effort, ReasoningSettings, Request } from '../../../ir/types.js';
import { TranslationError, type UpstreamCall } from '../../../types.js';
import { maxOutputTokens } from '../../../registry.js';
import { toResponsesInput } from './build-input.js';

type Json = Record<string, unknown>;

/** The IR effort scale → Responses `reasoning.effort`; `max` is sent as `xhigh`, the top most models take. */
const EFFORT: Readonly<Record<Effort, string>> = {
  none: 'none', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh',
};

function refuseUnexpressible(req: Request, provider: string): void {
  if (req.stopSequences.length > 0) throw new TranslationError(`Stop sequences are not supported for ${provider} models through the Responses API.`, 'stopSequences');
  if (req.candidates !== undefined && req.candidates > 1) throw new TranslationError(`${req.candidates} candidates were asked for: ${provider} returns exactly one answer per Responses request.`, 'candidates');
  if (req.logprobs !== undefined) throw new TranslationError(`logprobs are not supported for ${provider} models through the Responses API.`, 'logprobs');
}

/** Reasoning is asked for (and its state kept) unless it was turned off or set to no effort. */
function reasoningOn(r: ReasoningSettings | undefined): boolean {
  if (r === undefined || r.enabled === false || r.effort === 'none') return false;
  return r.enabled === true || r.effort !== undefined || r.budgetTokens !== undefined || r.includeText === true;
}

export function buildResponsesRequest(req: Request, target: Target): UpstreamCall {
  refuseUnexpressible(req, target.displayName);
  const body: Json = { model: target.model, store: false };
  const inWords = openaiJsonInWords(req.output);
  const system = inWords === undefined ? req.system.map((p) => p.text) : [...req.system.map((p) => p.text), inWords];
  if (system.length > 0) body.instructions = system.join('\n\n');
  const input = toResponsesInput(req.messages, target);
  body.input = input;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const tool: Json = { type: 'function', name: t.name };
      if (t.description !== undefined) tool.description = t.description;
      tool.parameters = t.inputSchema;
      // Responses defaults `strict` to true, which rejects most hand-written schemas: only on request.
      tool.strict = t.strict === true;
      return tool;
    });
  }
  const tc = req.toolChoice;
  if (tc) body.tool_choice = tc.type === 'tool' ? { type: 'function', name: tc.name } : tc.type;
  if (req.parallelToolCalls !== undefined && req.tools.length > 0) body.parallel_tool_calls = req.parallelToolCalls;
  if (req.maxOutputTokens !== undefined) {
    const limit = maxOutputTokens(target.provider, target.model);
    body.max_output_tokens = limit === undefined ? req.maxOutputTokens : Math.min(req.maxOutputTokens, limit);
  }
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  const output = req.output;
  if (output?.type === 'json' && inWords === undefined) {
    if (output.schema === undefined) body.text = { format: { type: 'json_object' } };
    else {
      const format: Json = { type: 'json_schema', name: output.name ?? 'response', schema: output.schema, strict: output.strict === true };
      if (output.description !== undefined) format.description = output.description;
      body.text = { format };
    }
  }
  const r = req.reasoning;
  // Effort only where the client gave one; an explicit "off" sends nothing (as the Chat builder).
  if (r !== undefined && r.enabled !== false) {
    const reasoning: Json = {};
    if (r.effort !== undefined) reasoning.effort = EFFORT[r.effort];
    if (r.includeText === true && r.effort !== 'none') reasoning.summary = 'auto';
    if (Object.keys(reasoning).length > 0) body.reasoning = reasoning;
  }
  // Also when this provider's reasoning is given back (a reasoning model, with the client's own defaults).
  if (reasoningOn(r) || input.some((item) => item.type === 'reasoning')) body.include = ['reasoning.encrypted_content'];
  if (req.user !== undefined && req.user !== '') body.safety_identifier = req.user;
  if (req.promptCacheKey !== undefined) body.prompt_cache_key = req.promptCacheKey;
  if (req.stream) body.stream = true;
  return { path: '/v1/responses', body };
}
