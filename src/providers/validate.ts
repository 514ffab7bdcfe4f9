// Strict validation of a unified (OpenAI-format) request at the edge: every problem names the
// field, so the client learns exactly what to fix, and nothing malformed is ever sent upstream.
import { TranslationError, type ChatCompletionRequest } from './types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(param: string, message: string): never {
  throw new TranslationError(`${param}: ${message}`, param, 'invalid_value');
}

function optNumber(body: Obj, field: string, min: number, max: number): void {
  const v = body[field];
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(field, `must be a number, got ${typeName(v)}`);
  if (v < min || v > max) fail(field, `must be between ${min} and ${max}, got ${v}`);
}

function optInt(body: Obj, field: string, min: number): void {
  const v = body[field];
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(field, `must be an integer, got ${typeName(v)}`);
  if (v < min) fail(field, `must be at least ${min}, got ${v}`);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`.slice(0, 60);
}

function textContent(v: unknown, param: string, allowNull: boolean): void {
  if (typeof v === 'string') return;
  if (v === null || v === undefined) {
    if (allowNull) return;
    fail(param, 'is required');
  }
  if (!Array.isArray(v)) fail(param, `must be a string or an array of content parts, got ${typeName(v)}`);
  v.forEach((part, i) => contentPart(part, `${param}[${i}]`, true));
}

function contentPart(part: unknown, param: string, textOnly: boolean): void {
  if (!isObj(part) || typeof part.type !== 'string') fail(param, 'must be an object with a "type"');
  if (part.type === 'text') {
    if (typeof part.text !== 'string') fail(`${param}.text`, 'must be a string');
    return;
  }
  if (textOnly) fail(`${param}.type`, `only "text" parts are allowed here, got "${part.type}"`);
  if (part.type === 'image_url') {
    const iu = part.image_url;
    const url = typeof iu === 'string' ? iu : isObj(iu) ? iu.url : undefined;
    if (typeof url !== 'string' || url === '') fail(`${param}.image_url.url`, 'must be a non-empty string');
    return;
  }
  // input_audio, file: passed on to the translator, which accepts or rejects them per provider.
}

function message(m: unknown, i: number): void {
  const p = `messages[${i}]`;
  if (!isObj(m)) fail(p, `must be an object, got ${typeName(m)}`);
  const role = m.role;
  switch (role) {
    case 'system':
    case 'developer':
      textContent(m.content, `${p}.content`, false);
      return;
    case 'user':
      if (typeof m.content === 'string') return;
      if (!Array.isArray(m.content)) fail(`${p}.content`, m.content === undefined ? 'is required' : `must be a string or an array of content parts, got ${typeName(m.content)}`);
      (m.content as unknown[]).forEach((part, j) => contentPart(part, `${p}.content[${j}]`, false));
      return;
    case 'assistant': {
      textContent(m.content, `${p}.content`, true);
      const calls = m.tool_calls;
      if (calls === undefined || calls === null) {
        if (m.content === undefined || m.content === null) fail(`${p}.content`, 'is required unless tool_calls is given');
        return;
      }
      if (!Array.isArray(calls)) fail(`${p}.tool_calls`, 'must be an array');
      calls.forEach((c, j) => {
        const cp = `${p}.tool_calls[${j}]`;
        if (!isObj(c)) fail(cp, 'must be an object');
        if (typeof c.id !== 'string' || c.id === '') fail(`${cp}.id`, 'must be a non-empty string');
        if (c.type !== undefined && c.type !== 'function') fail(`${cp}.type`, 'must be "function"');
        if (!isObj(c.function) || typeof c.function.name !== 'string') fail(`${cp}.function.name`, 'must be a string');
        if (typeof c.function.arguments !== 'string') fail(`${cp}.function.arguments`, 'must be a JSON string');
      });
      return;
    }
    case 'tool':
      if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '') fail(`${p}.tool_call_id`, 'must be a non-empty string');
      textContent(m.content, `${p}.content`, false);
      return;
    case undefined:
      fail(`${p}.role`, 'is required');
    default:
      fail(`${p}.role`, `must be one of system, developer, user, assistant, tool; got ${typeName(role)}`);
  }
}

function tools(body: Obj): void {
  const t = body.tools;
  if (t === undefined || t === null) return;
  if (!Array.isArray(t)) fail('tools', 'must be an array');
  t.forEach((tool, i) => {
    const p = `tools[${i}]`;
    if (!isObj(tool) || tool.type !== 'function') fail(`${p}.type`, 'only "function" tools are supported');
    const f = tool.function;
    if (!isObj(f) || typeof f.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(f.name)) fail(`${p}.function.name`, 'must be 1-64 letters, digits, "_" or "-"');
    if (f.parameters !== undefined && f.parameters !== null && !isObj(f.parameters)) fail(`${p}.function.parameters`, 'must be a JSON Schema object');
  });
  const tc = body.tool_choice;
  if (tc === undefined || tc === null) return;
  if (typeof tc === 'string') {
    if (!['auto', 'none', 'required'].includes(tc)) fail('tool_choice', `must be "auto", "none", "required" or {"type":"function","function":{"name":…}}, got "${tc}"`);
    return;
  }
  if (!isObj(tc) || tc.type !== 'function' || !isObj(tc.function) || typeof tc.function.name !== 'string') {
    fail('tool_choice', 'must be "auto", "none", "required" or {"type":"function","function":{"name":…}}');
  }
  if (!t.some((tool) => (tool as { function: { name: string } }).function.name === (tc.function as Obj).name)) {
    fail('tool_choice.function.name', `names no tool in tools: "${String((tc.function as Obj).name)}"`);
  }
}

/** Parses and checks a unified request body. Throws TranslationError naming the bad field. */
export function validateChatRequest(raw: unknown): ChatCompletionRequest {
  if (!isObj(raw)) fail('body', `must be a JSON object, got ${typeName(raw)}`);
  const body = raw;
  if (typeof body.model !== 'string' || body.model.trim() === '') fail('model', body.model === undefined ? 'is required' : 'must be a non-empty string');
  if (body.messages === undefined) fail('messages', 'is required');
  if (!Array.isArray(body.messages)) fail('messages', `must be an array, got ${typeName(body.messages)}`);
  if (body.messages.length === 0) fail('messages', 'must contain at least one message');
  body.messages.forEach(message);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') fail('stream', 'must be a boolean');
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!isObj(body.stream_options)) fail('stream_options', 'must be an object');
    const iu = body.stream_options.include_usage;
    if (iu !== undefined && typeof iu !== 'boolean') fail('stream_options.include_usage', 'must be a boolean');
  }
  optNumber(body, 'temperature', 0, 2);
  optNumber(body, 'top_p', 0, 1);
  optNumber(body, 'frequency_penalty', -2, 2);
  optNumber(body, 'presence_penalty', -2, 2);
  optInt(body, 'max_tokens', 1);
  optInt(body, 'max_completion_tokens', 1);
  optInt(body, 'n', 1);
  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== 'string' && !(Array.isArray(stop) && stop.every((s) => typeof s === 'string'))) {
    fail('stop', 'must be a string or an array of strings');
  }
  if (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null && typeof body.parallel_tool_calls !== 'boolean') fail('parallel_tool_calls', 'must be a boolean');
  tools(body);
  const rf = body.response_format;
  if (rf !== undefined && rf !== null) {
    if (!isObj(rf) || !['text', 'json_object', 'json_schema'].includes(rf.type as string)) fail('response_format.type', 'must be "text", "json_object" or "json_schema"');
    if (rf.type === 'json_schema' && (!isObj(rf.json_schema) || typeof rf.json_schema.name !== 'string')) fail('response_format.json_schema.name', 'is required for json_schema');
  }
  if (body.user !== undefined && typeof body.user !== 'string') fail('user', 'must be a string');
  return body as ChatCompletionRequest;
}
