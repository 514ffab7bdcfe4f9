// The Responses door: a `POST /v1/responses` body for a model that is not OpenAI's → the internal
// representation. Strict: every problem names the field. A chained request arrives here with the
// stored conversation already in front of its input (the door resolves previous_response_id).
// Freeform (`custom`) tools, such as Codex's apply_patch, become function tools taking one `input`
// string; their calls are rendered back as custom tool calls (render-response.ts).
import type { Target } from '../../../ir/protocol.js';
import type { Effort, ReasoningSettings, Request, TextPart, Tool, ToolChoice } from '../../../ir/types.js';
import { HOSTED_TOOLS, OPTIONAL_TOOLS, REFUSED_FIELDS } from './field-policy.js';
import { fail, isObj, parseInput, str } from './parse-input.js';
import { qualifiedName } from './tool-names.js';

type Obj = Record<string, unknown>;

function optNumber(v: unknown, param: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(param, 'must be a number');
  if (v < min || v > max) fail(param, `must be between ${min} and ${max}, got ${v}`);
  return v;
}

/** The schema a freeform tool's single text argument is given to a model that only has function tools. */
export function customToolSchema(t: Obj): Record<string, unknown> {
  const format = isObj(t.format) ? t.format : undefined;
  const grammar = format?.type === 'grammar' && typeof format.definition === 'string'
    ? ` It must follow this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}` : '';
  return {
    type: 'object',
    properties: { input: { type: 'string', description: `The tool's input, as free text.${grammar}` } },
    required: ['input'],
    additionalProperties: false,
  };
}

function tools(v: unknown, provider: string, forced: string | undefined): Tool[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail('tools', 'must be an array');
  const out: Tool[] = [];
  const one = (t: unknown, p: string, namespace: string | undefined): void => {
    if (!isObj(t)) fail(p, 'must be an object');
    const type = String(t.type);
    if (type === 'namespace' && namespace === undefined) {
      const ns = str(t.name, `${p}.name`);
      if (!Array.isArray(t.tools)) fail(`${p}.tools`, 'must be an array');
      t.tools.forEach((inner, j) => one(inner, `${p}.tools[${j}]`, ns));
    } else if (type === 'function' || type === 'custom') {
      const name = qualifiedName(namespace, str(t.name, `${p}.name`));
      if (!/^[a-zA-Z0-9_-]{1,128}$/.test(name)) fail(`${p}.name`, 'must be 1-128 letters, digits, "_" or "-" (with its namespace)');
      const schema = type === 'custom' ? customToolSchema(t) : t.parameters ?? { type: 'object', properties: {} };
      if (!isObj(schema)) fail(`${p}.parameters`, 'must be a JSON Schema object');
      const tool: Tool = { name, inputSchema: schema };
      if (typeof t.description === 'string') tool.description = t.description;
      if (t.strict === true) tool.strict = true;
      out.push(tool);
    } else if (OPTIONAL_TOOLS.has(type) && forced !== type) {
      // left out: the model answers without it (field-policy.ts)
    } else if (HOSTED_TOOLS.has(type) || OPTIONAL_TOOLS.has(type)) {
      fail(`${p}.type`, `"${type}" is a tool OpenAI runs on its own servers; ${provider} models cannot use it`);
    } else {
      fail(`${p}.type`, `"${type}" tools are not supported for ${provider} models`);
    }
  };
  v.forEach((t, i) => one(t, `tools[${i}]`, undefined));
  return out;
}

/** The tool type `tool_choice` forces, when it names a built-in one (`{"type":"web_search"}`). */
function forcedBuiltIn(v: unknown): string | undefined {
  return isObj(v) && typeof v.type === 'string' && v.type !== 'function' && v.type !== 'custom' && v.type !== 'allowed_tools' ? v.type : undefined;
}

function toolChoice(v: unknown, known: Tool[]): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return { type: v };
  if (!isObj(v)) fail('tool_choice', 'must be "auto", "none", "required" or an object');
  if (v.type === 'function' || v.type === 'custom') {
    const name = qualifiedName(typeof v.namespace === 'string' ? v.namespace : undefined, str(v.name, 'tool_choice.name'));
    if (!known.some((t) => t.name === name)) fail('tool_choice.name', `names no tool in tools: "${name}"`);
    return { type: 'tool', name };
  }
  if (v.type === 'allowed_tools') {
    // Only the mode can be kept: every model here sees all the tools it was given.
    return v.mode === 'required' ? { type: 'required' } : { type: 'auto' };
  }
  return fail('tool_choice.type', `"${String(v.type)}" names a tool this model does not have`);
}

const EFFORTS: readonly Effort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

function reasoning(v: unknown): ReasoningSettings | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) fail('reasoning', 'must be an object');
  const r: ReasoningSettings = {};
  if (v.effort !== undefined && v.effort !== null) {
    if (!EFFORTS.includes(v.effort as Effort)) fail('reasoning.effort', `must be one of ${EFFORTS.join(', ')}`);
    r.effort = v.effort as Effort;
    if (v.effort === 'none') r.enabled = false;
  }
  const summary = v.summary ?? v.generate_summary;
  if (summary !== undefined && summary !== null) {
    if (summary !== 'auto' && summary !== 'concise' && summary !== 'detailed') fail('reasoning.summary', 'must be "auto", "concise" or "detailed"');
    r.includeText = true;
  }
  return Object.keys(r).length > 0 ? r : undefined;
}

function outputFormat(text: unknown): Request['output'] {
  if (text === undefined || text === null) return undefined;
  if (!isObj(text)) fail('text', 'must be an object');
  const f = text.format;
  if (f === undefined || f === null) return undefined;
  if (!isObj(f)) fail('text.format', 'must be an object');
  switch (f.type) {
    case 'text': return { type: 'text' };
    case 'json_object': return { type: 'json' };
    case 'json_schema': {
      if (!isObj(f.schema)) fail('text.format.schema', 'is required: a JSON Schema object');
      const out: Request['output'] = { type: 'json', schema: f.schema, name: str(f.name, 'text.format.name') };
      if (typeof f.description === 'string') out.description = f.description;
      if (f.strict === true) out.strict = true;
      return out;
    }
    default: return fail('text.format.type', 'must be "text", "json_schema" or "json_object"');
  }
}

/** Parses a Responses request bound for `target` (never OpenAI: that goes through unparsed). */
export function parseResponsesRequest(raw: unknown, target: Target): Request {
  if (!isObj(raw)) fail('body', 'must be a JSON object');
  const body = raw;
  const provider = target.displayName;
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    if (body[field] !== undefined && body[field] !== null && body[field] !== false) fail(field, `is not supported for ${provider} models: ${why}`);
  }
  str(body.model, 'model');
  const { system, messages } = parseInput(body.input, provider);
  if (messages.length === 0) fail('input', 'must contain at least one message');
  const instructions = body.instructions;
  const head: TextPart[] = typeof instructions === 'string' && instructions !== '' ? [{ type: 'text', text: instructions }] : [];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') fail('instructions', 'must be a string');

  const toolList = tools(body.tools, provider, forcedBuiltIn(body.tool_choice));
  const req: Request = { model: target.model, system: [...head, ...system], messages, tools: toolList, stopSequences: [], stream: body.stream === true };
  const choice = toolChoice(body.tool_choice, toolList);
  if (choice) req.toolChoice = choice;
  if (typeof body.parallel_tool_calls === 'boolean') req.parallelToolCalls = body.parallel_tool_calls;
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null) {
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) fail('max_output_tokens', 'must be a positive integer');
    req.maxOutputTokens = max;
  }
  const temperature = optNumber(body.temperature, 'temperature', 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body.top_p, 'top_p', 0, 1);
  if (topP !== undefined) req.topP = topP;
  const output = outputFormat(body.text);
  if (output && output.type === 'json') req.output = output;
  const r = reasoning(body.reasoning);
  if (r) req.reasoning = r;
  const user = typeof body.safety_identifier === 'string' ? body.safety_identifier : body.user;
  if (typeof user === 'string' && user !== '') req.user = user;
  return req;
}
