// The Chat Completions door: a /v1/chat/completions body → the IR (provider-reference.md §1).
// Strict: the body is first checked as the unified endpoint always has (providers/validate.ts),
// then against what the target's protocol can express (field-policy.ts); every refusal is a
// TranslationError naming the field. What only a provider knows (its media types, its temperature
// range) its builder checks, naming the field through the parts' `param`.
import type { Target } from '../../../ir/protocol.js';
import type { Effort, OutputFormat, Request, Tool, ToolChoice } from '../../../ir/types.js';
import { TranslationError, type ChatCompletionRequest } from '../../../types.js';
import { validateChatRequest } from '../../../validate.js';
import { refusedField } from './field-policy.js';
import { parseMessages } from './parse-messages.js';

type Body = ChatCompletionRequest & Record<string, unknown>;

const EFFORTS: readonly Effort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/** A tool without parameters takes none: an empty object schema, which every provider accepts. */
const NO_PARAMETERS = { type: 'object', properties: {} };

function fail(param: string, message: string): never {
  throw new TranslationError(`${param}: ${message}`, param, 'invalid_value');
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function parseChatRequest(raw: unknown, target: Target): Request {
  const body = validateChatRequest(raw) as Body;
  const refused = refusedField(body, target.protocol, target.displayName);
  if (refused !== undefined) throw new TranslationError(refused.message, refused.field);
  const { system, messages } = parseMessages(body.messages, target.displayName);

  const req: Request = { model: target.model, system, messages, tools: tools(body), stopSequences: stop(body.stop), stream: body.stream === true };
  const choice = toolChoice(body.tool_choice);
  if (choice !== undefined) req.toolChoice = choice;
  if (typeof body.parallel_tool_calls === 'boolean') req.parallelToolCalls = body.parallel_tool_calls;
  const maxTokens = num(body.max_completion_tokens) ?? num(body.max_tokens);
  if (maxTokens !== undefined) req.maxOutputTokens = maxTokens;
  const temperature = num(body.temperature);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = num(body.top_p);
  if (topP !== undefined) req.topP = topP;
  const topK = num(body.top_k); // not OpenAI's, but LiteLLM and Portkey accept it
  if (topK !== undefined) req.topK = topK;
  const output = outputFormat(body.response_format);
  if (output !== undefined) req.output = output;
  const effort = reasoningEffort(body.reasoning_effort);
  if (effort !== undefined) req.reasoning = { effort };
  const user = [body.user, body.safety_identifier].find((v): v is string => typeof v === 'string' && v !== '');
  if (user !== undefined) req.user = user;
  sampling(body, req);
  return req;
}

function stop(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? (value as string[]) : [];
}

function tools(body: Body): Tool[] {
  return (body.tools ?? []).map((t) => {
    const fn = t.function;
    const tool: Tool = { name: fn.name, inputSchema: fn.parameters ?? NO_PARAMETERS };
    if (typeof fn.description === 'string') tool.description = fn.description;
    if (fn.strict === true) tool.strict = true;
    return tool;
  });
}

function toolChoice(choice: ChatCompletionRequest['tool_choice'] | null): ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { type: choice };
  return { type: 'tool', name: choice.function.name };
}

function outputFormat(format: ChatCompletionRequest['response_format'] | null): OutputFormat | undefined {
  if (format === undefined || format === null) return undefined;
  if (format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json' };
  const spec = format.json_schema;
  const out: OutputFormat = { type: 'json', name: spec.name };
  if (typeof spec.schema === 'object' && spec.schema !== null) out.schema = spec.schema;
  if (typeof spec.description === 'string') out.description = spec.description;
  if (typeof spec.strict === 'boolean') out.strict = spec.strict;
  return out;
}

function reasoningEffort(value: unknown): Effort | undefined {
  if (value === undefined || value === null) return undefined;
  if (!EFFORTS.includes(value as Effort)) fail('reasoning_effort', `must be one of ${EFFORTS.join(', ')}; got ${JSON.stringify(value)}`);
  return value as Effort;
}

/** Knobs only some providers have: each builder uses or drops them (field-policy.ts refuses what would change the answer). */
function sampling(body: Body, req: Request): void {
  if (typeof body.n === 'number') req.candidates = body.n;
  const seed = body.seed;
  if (seed !== undefined && seed !== null) {
    if (typeof seed !== 'number' || !Number.isInteger(seed)) fail('seed', 'must be an integer');
    req.seed = seed;
  }
  const frequency = num(body.frequency_penalty);
  if (frequency !== undefined) req.frequencyPenalty = frequency;
  const presence = num(body.presence_penalty);
  if (presence !== undefined) req.presencePenalty = presence;
  if (body.logprobs !== undefined && body.logprobs !== null && typeof body.logprobs !== 'boolean') fail('logprobs', 'must be a boolean');
  const top = body.top_logprobs;
  if (top !== undefined && top !== null && (typeof top !== 'number' || !Number.isInteger(top) || top < 0 || top > 20)) fail('top_logprobs', 'must be an integer between 0 and 20');
  if (body.logprobs === true) req.logprobs = { top: typeof top === 'number' ? top : 0 };
}
