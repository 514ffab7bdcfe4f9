// The Gemini door: a generateContent request for a model that is not Gemini's → the internal
// representation (provider-reference.md §3.2). Strict: every problem names the field. The model
// comes from the URL (`target.model`); the stream flag from the method, which the daemon passes as
// `stream: true` in the body for :streamGenerateContent (parseRequest sees only the body).
import type { Target } from '../../../ir/protocol.js';
import type { Effort, JsonSchema, OutputFormat, ReasoningSettings, Request, TextPart, Tool, ToolChoice } from '../../../ir/types.js';
import { FUNCTION_DECLARATIONS, REFUSED_FIELDS, REFUSED_GENERATION_FIELDS } from './field-policy.js';
import { fail, get, isObj, optNumber, str, type Obj } from './fields.js';
import { fromGeminiSchema, normalizeJsonSchema } from './openapi-schema.js';
import { parseContents } from './parse-contents.js';

function systemInstruction(v: unknown): TextPart[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!isObj(v)) fail('systemInstruction', 'must be a Content object or a string');
  // Clients send a role here ("user", "system") or none; Gemini ignores it, and so do we.
  if (!Array.isArray(v.parts)) fail('systemInstruction.parts', v.parts === undefined ? 'is required' : 'must be an array');
  return v.parts.flatMap((p, i): TextPart[] => {
    if (!isObj(p) || typeof p.text !== 'string') fail(`systemInstruction.parts[${i}]`, 'must be a text part');
    return p.text === '' ? [] : [{ type: 'text', text: p.text }];
  });
}

function tools(v: unknown, provider: string): Tool[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail('tools', 'must be an array');
  const out: Tool[] = [];
  v.forEach((t, i) => {
    const p = `tools[${i}]`;
    if (!isObj(t)) fail(p, 'must be an object');
    for (const key of Object.keys(t)) {
      if (key !== FUNCTION_DECLARATIONS && key !== 'function_declarations') {
        fail(`${p}.${key}`, `"${key}" is a tool Gemini runs on its own servers; ${provider} models cannot use it`);
      }
    }
    const declarations = get(t, FUNCTION_DECLARATIONS);
    if (declarations === undefined) return;
    if (!Array.isArray(declarations)) fail(`${p}.functionDeclarations`, 'must be an array');
    declarations.forEach((d, j) => out.push(declaration(d, `${p}.functionDeclarations[${j}]`)));
  });
  return out;
}

function declaration(d: unknown, p: string): Tool {
  if (!isObj(d)) fail(p, 'must be an object');
  const name = str(d.name, `${p}.name`);
  if (!/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/.test(name)) fail(`${p}.name`, 'must start with a letter or "_" and hold up to 128 letters, digits, "_", ".", ":" or "-"');
  const openApi = d.parameters;
  const jsonSchema = get(d, 'parametersJsonSchema');
  if (openApi !== undefined && openApi !== null && jsonSchema !== undefined && jsonSchema !== null) fail(`${p}.parametersJsonSchema`, 'cannot be set together with parameters');
  let inputSchema: JsonSchema;
  if (jsonSchema !== undefined && jsonSchema !== null) {
    if (!isObj(jsonSchema)) fail(`${p}.parametersJsonSchema`, 'must be a JSON Schema object');
    inputSchema = normalizeJsonSchema(jsonSchema);
  } else if (openApi !== undefined && openApi !== null) {
    inputSchema = fromGeminiSchema(openApi, `${p}.parameters`);
  } else {
    inputSchema = { type: 'object', properties: {} }; // "For function with no parameters, this can be left unset"
  }
  const tool: Tool = { name, inputSchema };
  if (typeof d.description === 'string' && d.description !== '') tool.description = d.description;
  return tool;
}

/**
 * `functionCallingConfig` → tool choice. ANY with one allowed name is that tool; ANY with several
 * is "some tool", and the tools offered are cut to the allowed ones (no other protocol can say
 * "one of these"); VALIDATED (call or text, calls checked against their schemas) is AUTO, since
 * every provider checks arguments against the schema it is given.
 */
function toolChoice(v: unknown, known: Tool[]): { choice?: ToolChoice; allowed?: string[] } {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) fail('toolConfig', 'must be an object');
  const config = get(v, 'functionCallingConfig');
  if (config === undefined || config === null) return {};
  const p = 'toolConfig.functionCallingConfig';
  if (!isObj(config)) fail(p, 'must be an object');
  const names = get(config, 'allowedFunctionNames');
  let allowed: string[] | undefined;
  if (names !== undefined && names !== null) {
    if (!Array.isArray(names)) fail(`${p}.allowedFunctionNames`, 'must be an array of names');
    allowed = names.map((n, k) => {
      const name = str(n, `${p}.allowedFunctionNames[${k}]`);
      if (!known.some((t) => t.name === name)) fail(`${p}.allowedFunctionNames[${k}]`, `names no function in tools: "${name}"`);
      return name;
    });
  }
  const mode = config.mode === undefined || config.mode === null ? 'AUTO' : String(config.mode).toUpperCase();
  switch (mode) {
    case 'AUTO': case 'MODE_UNSPECIFIED': case 'VALIDATED': return { choice: { type: 'auto' } };
    case 'NONE': return { choice: { type: 'none' } };
    case 'ANY':
      if (allowed?.length === 1) return { choice: { type: 'tool', name: allowed[0]! } };
      return allowed === undefined || allowed.length === 0 ? { choice: { type: 'required' } } : { choice: { type: 'required' }, allowed };
    default: return fail(`${p}.mode`, 'must be "AUTO", "ANY", "NONE" or "VALIDATED"');
  }
}

const LEVELS: Readonly<Record<string, Effort>> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

function thinking(v: unknown): ReasoningSettings | undefined {
  if (v === undefined || v === null) return undefined;
  const p = 'generationConfig.thinkingConfig';
  if (!isObj(v)) fail(p, 'must be an object');
  const r: ReasoningSettings = {};
  const budget = optNumber(get(v, 'thinkingBudget'), `${p}.thinkingBudget`, -1, Number.MAX_SAFE_INTEGER, true);
  if (budget === 0) r.enabled = false;
  else if (budget === -1) r.enabled = true; // dynamic: the model decides how much to think
  else if (budget !== undefined) {
    r.enabled = true;
    r.budgetTokens = budget;
  }
  const level = get(v, 'thinkingLevel');
  if (level !== undefined && level !== null && level !== 'THINKING_LEVEL_UNSPECIFIED') {
    const effort = typeof level === 'string' ? LEVELS[level.toUpperCase()] : undefined;
    if (effort === undefined) fail(`${p}.thinkingLevel`, `must be one of ${Object.keys(LEVELS).join(', ')}`);
    r.effort = effort;
    if (effort !== 'minimal' && r.enabled === undefined) r.enabled = true;
  }
  const include = get(v, 'includeThoughts');
  if (include !== undefined && include !== null) {
    if (typeof include !== 'boolean') fail(`${p}.includeThoughts`, 'must be a boolean');
    r.includeText = include;
  }
  return Object.keys(r).length > 0 ? r : undefined;
}

function output(g: Obj, provider: string): OutputFormat | undefined {
  const mime = get(g, 'responseMimeType');
  const openApi = get(g, 'responseSchema');
  const jsonSchema = get(g, 'responseJsonSchema');
  const hasOpenApi = openApi !== undefined && openApi !== null;
  const hasJson = jsonSchema !== undefined && jsonSchema !== null;
  if (mime === undefined || mime === null || mime === '') {
    if (hasOpenApi || hasJson) fail('generationConfig.responseMimeType', 'must be "application/json" when a response schema is set');
    return undefined;
  }
  if (mime === 'text/plain') return { type: 'text' };
  if (mime !== 'application/json') fail('generationConfig.responseMimeType', `"${String(mime)}" is not supported for ${provider} models: use "application/json" or "text/plain"`);
  if (hasOpenApi && hasJson) fail('generationConfig.responseJsonSchema', 'cannot be set together with responseSchema');
  if (hasJson) {
    if (!isObj(jsonSchema)) fail('generationConfig.responseJsonSchema', 'must be a JSON Schema object');
    return { type: 'json', schema: normalizeJsonSchema(jsonSchema) };
  }
  return hasOpenApi ? { type: 'json', schema: fromGeminiSchema(openApi, 'generationConfig.responseSchema') } : { type: 'json' };
}

function generation(v: unknown, req: Request, provider: string): void {
  if (v === undefined || v === null) return;
  if (!isObj(v)) fail('generationConfig', 'must be an object');
  const g = v;
  const p = (name: string) => `generationConfig.${name}`;
  for (const [field, why] of Object.entries(REFUSED_GENERATION_FIELDS)) {
    const value = get(g, field);
    if (value !== undefined && value !== null) fail(p(field), `is not supported for ${provider} models: ${why}`);
  }
  const modalities = get(g, 'responseModalities');
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'TEXT' && m !== 'text')) fail(p('responseModalities'), `only TEXT output is supported for ${provider} models`);
  const candidates = optNumber(get(g, 'candidateCount'), p('candidateCount'), 1, Number.MAX_SAFE_INTEGER, true);
  if (candidates !== undefined && candidates > 1) fail(p('candidateCount'), `only 1 candidate is supported for ${provider} models`);
  const max = optNumber(get(g, 'maxOutputTokens'), p('maxOutputTokens'), 1, Number.MAX_SAFE_INTEGER, true);
  if (max !== undefined) req.maxOutputTokens = max;
  const temperature = optNumber(g.temperature, p('temperature'), 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(get(g, 'topP'), p('topP'), 0, 1);
  if (topP !== undefined) req.topP = topP;
  const topK = optNumber(get(g, 'topK'), p('topK'), 0, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined) req.topK = topK;
  const seed = optNumber(g.seed, p('seed'), Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  if (seed !== undefined) req.seed = seed;
  const presence = optNumber(get(g, 'presencePenalty'), p('presencePenalty'), -2, 2);
  if (presence !== undefined) req.presencePenalty = presence;
  const frequency = optNumber(get(g, 'frequencyPenalty'), p('frequencyPenalty'), -2, 2);
  if (frequency !== undefined) req.frequencyPenalty = frequency;
  const stops = get(g, 'stopSequences');
  if (stops !== undefined && stops !== null) {
    if (!Array.isArray(stops) || !stops.every((s) => typeof s === 'string')) fail(p('stopSequences'), 'must be an array of strings');
    req.stopSequences = stops;
  }
  if (get(g, 'responseLogprobs') === true) {
    const top = optNumber(g.logprobs, p('logprobs'), 0, 20, true);
    req.logprobs = { top: top ?? 0 };
  }
  const out = output(g, provider);
  if (out !== undefined) req.output = out;
  const r = thinking(get(g, 'thinkingConfig'));
  if (r !== undefined) req.reasoning = r;
}

/** Parses a generateContent request bound for `target` (never Gemini: that goes through unparsed). */
export function parseGenerateContentRequest(raw: unknown, target: Target): Request {
  if (!isObj(raw)) fail('body', 'must be a JSON object');
  const body = raw;
  const provider = target.displayName;
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    const value = get(body, field);
    if (value !== undefined && value !== null && value !== '') fail(field, `is not supported for ${provider} models: ${why}`);
  }
  const messages = parseContents(body.contents, target);
  const toolList = tools(body.tools, provider);
  const { choice, allowed } = toolChoice(get(body, 'toolConfig'), toolList);
  const req: Request = {
    model: target.model,
    system: systemInstruction(get(body, 'systemInstruction')),
    messages,
    tools: allowed === undefined ? toolList : toolList.filter((t) => allowed.includes(t.name)),
    stopSequences: [],
    stream: body.stream === true,
  };
  if (choice !== undefined) req.toolChoice = choice;
  generation(get(body, 'generationConfig'), req, provider);
  // Fields outside MAPPED_FIELDS (IGNORED_FIELDS, and fields newer than this code) are dropped
  // rather than refused.
  return req;
}
