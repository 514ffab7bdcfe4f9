// OpenAI `tools`, `tool_choice` and `parallel_tool_calls` → Anthropic `tools` and `tool_choice`
// (provider-reference.md §2.5 and §4.2).
import type { ChatCompletionRequest } from '../types.js';
import { TranslationError } from '../types.js';
import { asArray, asRecord, asString, isRecord } from '../shared/lenient-json.js';

type Json = Record<string, unknown>;

/** Anthropic requires an object schema; OpenAI's "no parameters" means an empty one. */
const EMPTY_SCHEMA = { type: 'object', properties: {} };

export function toAnthropicTools(req: ChatCompletionRequest): { tools?: Json[]; tool_choice?: Json } {
  const tools = (req.tools ?? []).map((tool, i) => toAnthropicTool(tool, i));
  const choice = req.tool_choice;
  if (tools.length === 0) {
    if (choice === undefined || choice === null || choice === 'none' || choice === 'auto') return {};
    throw new TranslationError('tool_choice requires a non-empty tools list.', 'tool_choice');
  }
  const { names, type, name } = readChoice(choice);
  const kept = names === undefined ? tools : tools.filter((t) => names.has(t.name as string));
  const toolChoice: Json | undefined = type === undefined ? undefined : name === undefined ? { type } : { type, name };
  if (req.parallel_tool_calls === false && type !== 'none') {
    return { tools: kept, tool_choice: { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true } };
  }
  return toolChoice === undefined ? { tools: kept } : { tools: kept, tool_choice: toolChoice };
}

function toAnthropicTool(tool: unknown, i: number): Json {
  const t = asRecord(tool);
  if (t.type !== 'function') {
    throw new TranslationError(`tools[${i}] has type ${JSON.stringify(t.type)}; only function tools can be sent to Anthropic.`, `tools[${i}].type`);
  }
  const fn = asRecord(t.function);
  const out: Json = { name: asString(fn.name) ?? '' };
  const description = asString(fn.description);
  if (description !== undefined) out.description = description;
  out.input_schema = isRecord(fn.parameters) ? fn.parameters : EMPTY_SCHEMA;
  if (fn.strict === true) out.strict = true;
  return out;
}

/**
 * The Anthropic choice type, the tool name for a named choice and, for OpenAI's `allowed_tools`
 * (no Anthropic equivalent), the subset of tools to send.
 */
function readChoice(choice: unknown): { type?: string; name?: string; names?: Set<string> } {
  if (choice === undefined || choice === null) return {};
  if (choice === 'auto' || choice === 'none') return { type: choice };
  if (choice === 'required') return { type: 'any' };
  const c = asRecord(choice);
  if (c.type === 'function') {
    const name = asString(asRecord(c.function).name);
    if (name === undefined) throw new TranslationError('tool_choice.function.name is required.', 'tool_choice.function.name');
    return { type: 'tool', name };
  }
  if (c.type === 'allowed_tools') {
    const allowed = asRecord(c.allowed_tools);
    const names = new Set(asArray(allowed.tools).map((t) => asString(asRecord(asRecord(t).function).name) ?? ''));
    return { type: allowed.mode === 'required' ? 'any' : 'auto', names };
  }
  throw new TranslationError(`tool_choice ${JSON.stringify(choice)} is not supported for Anthropic models.`, 'tool_choice');
}
