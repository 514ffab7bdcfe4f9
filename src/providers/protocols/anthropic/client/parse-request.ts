// The Messages door: an Anthropic Messages request for a model that is not Anthropic's → the
// internal representation (provider-reference.md §2.2–2.5). Strict: every problem names the field.
// `role: "system"` messages (Claude Code sends one after the user turn) join the system prompt.
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, DocumentPart, Effort, ImagePart, Message, ProviderState, ReasoningSettings, Request, TextPart, Tool, ToolCallPart, ToolChoice, UserPart } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { isServerTool, REFUSED_FIELDS } from './field-policy.js';
import { decodeStateSignature, fromClientToolId } from './provider-state.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(param: string, message: string): never {
  throw new TranslationError(`${param}: ${message}`, param, 'invalid_value');
}

function str(v: unknown, param: string): string {
  if (typeof v !== 'string') fail(param, v === undefined ? 'is required' : 'must be a string');
  return v;
}

function optNumber(v: unknown, param: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(param, 'must be a number');
  if (v < min || v > max) fail(param, `must be between ${min} and ${max}, got ${v}`);
  return v;
}

function source(v: unknown, param: string, kinds: readonly string[]): ImagePart['source'] {
  if (!isObj(v)) fail(param, 'must be an object');
  switch (v.type) {
    case 'base64': return { kind: 'base64', mediaType: str(v.media_type, `${param}.media_type`), data: str(v.data, `${param}.data`) };
    case 'url': return { kind: 'url', url: str(v.url, `${param}.url`) };
    case 'text': if (kinds.includes('text')) return { kind: 'text', mediaType: typeof v.media_type === 'string' ? v.media_type : 'text/plain', text: str(v.data, `${param}.data`) };
  }
  fail(`${param}.type`, `must be one of ${kinds.join(', ')}${v.type === 'file' ? ' (Files API ids only work with Anthropic models)' : ''}`);
}

function textBlock(b: Obj, param: string): TextPart {
  return { type: 'text', text: str(b.text, `${param}.text`) };
}

function mediaBlock(b: Obj, param: string): ImagePart | DocumentPart {
  if (b.type === 'image') return { type: 'image', source: source(b.source, `${param}.source`, ['base64', 'url']) };
  const doc: DocumentPart = { type: 'document', source: source(b.source, `${param}.source`, ['base64', 'url', 'text']) };
  if (typeof b.title === 'string') doc.title = b.title;
  return doc;
}

function toolResult(b: Obj, param: string, names: Map<string, string>): UserPart {
  const callId = fromClientToolId(str(b.tool_use_id, `${param}.tool_use_id`)).id;
  const content: Array<TextPart | ImagePart | DocumentPart> = [];
  if (typeof b.content === 'string') {
    if (b.content !== '') content.push({ type: 'text', text: b.content });
  } else if (Array.isArray(b.content)) {
    b.content.forEach((c, i) => {
      const p = `${param}.content[${i}]`;
      if (!isObj(c)) fail(p, 'must be an object');
      if (c.type === 'text') content.push(textBlock(c, p));
      else if (c.type === 'image' || c.type === 'document') content.push(mediaBlock(c, p));
      else fail(`${p}.type`, `"${String(c.type)}" is not supported in a tool result for this model`);
    });
  } else if (b.content !== undefined) fail(`${param}.content`, 'must be a string or an array of blocks');
  const part: UserPart = { type: 'tool-result', callId, content };
  const name = names.get(callId);
  if (name !== undefined) part.name = name;
  if (b.is_error === true) part.isError = true;
  return part;
}

interface Turn { role: 'user' | 'assistant'; param: string; content: unknown }

function userParts(t: Turn, names: Map<string, string>, provider: string): UserPart[] {
  if (typeof t.content === 'string') return t.content === '' ? [] : [{ type: 'text', text: t.content }];
  if (!Array.isArray(t.content)) fail(`${t.param}.content`, 'must be a string or an array of content blocks');
  return t.content.map((b, i): UserPart | undefined => {
    const p = `${t.param}.content[${i}]`;
    if (!isObj(b)) fail(p, 'must be an object');
    switch (b.type) {
      case 'text': return textBlock(b, p);
      case 'image': case 'document': return mediaBlock(b, p);
      case 'tool_result': return toolResult(b, p, names);
      // Thinking the client echoes back in a user turn is not ours to read.
      case 'thinking': case 'redacted_thinking': return undefined;
      default: return fail(`${p}.type`, `"${String(b.type)}" blocks are not supported for ${provider} models`);
    }
  }).filter((x): x is UserPart => x !== undefined);
}

function assistantParts(t: Turn, names: Map<string, string>, provider: string): AssistantPart[] {
  if (typeof t.content === 'string') return t.content === '' ? [] : [{ type: 'text', text: t.content }];
  if (!Array.isArray(t.content)) fail(`${t.param}.content`, 'must be a string or an array of content blocks');
  const parts: AssistantPart[] = [];
  const callStates = new Map<string, ProviderState>(); // state blocks that belong to a tool call, by the call's id
  const clientIds = new Map<ToolCallPart, string>(); // each call's tool_use id, which names it in a state block
  t.content.forEach((b, i) => {
    const p = `${t.param}.content[${i}]`;
    if (!isObj(b)) fail(p, 'must be an object');
    switch (b.type) {
      case 'text': parts.push(textBlock(b, p)); break;
      case 'tool_use': {
        const clientId = str(b.id, `${p}.id`);
        const { id, state } = fromClientToolId(clientId);
        const name = str(b.name, `${p}.name`);
        if (!isObj(b.input)) fail(`${p}.input`, 'must be an object');
        names.set(id, name);
        const part: ToolCallPart = { type: 'tool-call', id, name, arguments: JSON.stringify(b.input) };
        if (state !== undefined) part.state = state;
        clientIds.set(part, clientId);
        parts.push(part);
        break;
      }
      case 'thinking': {
        // Only thinking we rendered from a foreign provider's state means anything to it; Claude's
        // own signatures are for Anthropic alone and are dropped on purpose (the text is kept).
        const decoded = typeof b.signature === 'string' ? decodeStateSignature(b.signature) : undefined;
        if (decoded?.callId !== undefined) callStates.set(decoded.callId, decoded.state);
        else if (decoded) parts.push({ type: 'reasoning', text: typeof b.thinking === 'string' ? b.thinking : '', state: decoded.state });
        else if (typeof b.thinking === 'string' && b.thinking !== '') parts.push({ type: 'reasoning', text: b.thinking });
        break;
      }
      case 'redacted_thinking': break; // Anthropic's encrypted thinking: meaningless elsewhere
      default: fail(`${p}.type`, `"${String(b.type)}" blocks are not supported for ${provider} models`);
    }
  });
  // A state block names its call by the tool_use id (by the provider's id in answers rendered
  // before ids were minted for calls without one, which is the same id unless it was escaped).
  for (const [part, clientId] of clientIds) {
    const state = callStates.get(clientId) ?? callStates.get(part.id);
    if (state !== undefined) part.state = state;
  }
  return parts;
}

function systemText(v: unknown, param: string): TextPart[] {
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!Array.isArray(v)) fail(param, 'must be a string or an array of text blocks');
  return v.map((b, i) => {
    if (!isObj(b) || b.type !== 'text') fail(`${param}[${i}]`, 'must be a text block');
    return textBlock(b, `${param}[${i}]`);
  });
}

function tools(v: unknown, provider: string): Tool[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail('tools', 'must be an array');
  return v.map((t, i) => {
    const p = `tools[${i}]`;
    if (!isObj(t)) fail(p, 'must be an object');
    if (isServerTool(t)) fail(`${p}.type`, `"${String(t.type)}" is a tool Anthropic runs on its own servers; ${provider} models cannot use it`);
    const name = str(t.name, `${p}.name`);
    if (!/^[a-zA-Z0-9_-]{1,128}$/.test(name)) fail(`${p}.name`, 'must be 1-128 letters, digits, "_" or "-"');
    if (!isObj(t.input_schema)) fail(`${p}.input_schema`, 'must be a JSON Schema object');
    const tool: Tool = { name, inputSchema: t.input_schema };
    if (typeof t.description === 'string') tool.description = t.description;
    if (t.strict === true) tool.strict = true;
    return tool;
  });
}

function toolChoice(v: unknown, known: Tool[]): { choice?: ToolChoice; parallel?: boolean } {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) fail('tool_choice', 'must be an object');
  const parallel = v.disable_parallel_tool_use === true ? false : undefined;
  const out = (choice: ToolChoice) => (parallel === undefined ? { choice } : { choice, parallel });
  switch (v.type) {
    case 'auto': return out({ type: 'auto' });
    case 'any': return out({ type: 'required' });
    case 'none': return out({ type: 'none' });
    case 'tool': {
      const name = str(v.name, 'tool_choice.name');
      if (!known.some((t) => t.name === name)) fail('tool_choice.name', `names no tool in tools: "${name}"`);
      return out({ type: 'tool', name });
    }
    default: return fail('tool_choice.type', 'must be "auto", "any", "tool" or "none"');
  }
}

const EFFORTS: readonly Effort[] = ['low', 'medium', 'high', 'xhigh', 'max'];

function reasoning(thinking: unknown, outputConfig: Obj): ReasoningSettings | undefined {
  const r: ReasoningSettings = {};
  if (thinking !== undefined && thinking !== null) {
    if (!isObj(thinking)) fail('thinking', 'must be an object');
    if (thinking.type === 'disabled') r.enabled = false;
    else if (thinking.type === 'enabled' || thinking.type === 'adaptive') {
      r.enabled = true;
      if (thinking.type === 'enabled') {
        const budget = thinking.budget_tokens;
        if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1) fail('thinking.budget_tokens', 'must be a positive integer');
        r.budgetTokens = budget;
      }
      r.includeText = thinking.display !== 'omitted';
    } else fail('thinking.type', 'must be "enabled", "adaptive" or "disabled"');
  }
  const effort = outputConfig.effort;
  if (effort !== undefined && effort !== null) {
    if (!EFFORTS.includes(effort as Effort)) fail('output_config.effort', `must be one of ${EFFORTS.join(', ')}`);
    r.effort = effort as Effort;
  }
  return Object.keys(r).length > 0 ? r : undefined;
}

/** Parses a Messages request bound for `target` (never Anthropic: that goes through unparsed). */
export function parseMessagesRequest(raw: unknown, target: Target): Request {
  if (!isObj(raw)) fail('body', 'must be a JSON object');
  const body = raw;
  const provider = target.displayName;
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    if (body[field] !== undefined && body[field] !== null) fail(field, `is not supported for ${provider} models: ${why}`);
  }
  str(body.model, 'model');
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) fail('max_tokens', maxTokens === undefined ? 'is required' : 'must be a positive integer');
  if (!Array.isArray(body.messages)) fail('messages', body.messages === undefined ? 'is required' : 'must be an array');
  if (body.messages.length === 0) fail('messages', 'must contain at least one message');

  const system = body.system === undefined || body.system === null ? [] : systemText(body.system, 'system');
  const names = new Map<string, string>(); // tool call id → name, for results (Gemini needs names)
  const messages: Message[] = [];
  body.messages.forEach((m, i) => {
    const param = `messages[${i}]`;
    if (!isObj(m)) fail(param, 'must be an object');
    if (m.role === 'system') { system.push(...systemText(m.content, `${param}.content`)); return; }
    if (m.role !== 'user' && m.role !== 'assistant') fail(`${param}.role`, 'must be "user" or "assistant"');
    const turn: Turn = { role: m.role, param, content: m.content };
    if (m.role === 'user') messages.push({ role: 'user', parts: userParts(turn, names, provider) });
    else messages.push({ role: 'assistant', parts: assistantParts(turn, names, provider) });
  });

  const toolList = tools(body.tools, provider);
  const { choice, parallel } = toolChoice(body.tool_choice, toolList);
  const outputConfig = isObj(body.output_config) ? body.output_config : {};
  if (body.output_config !== undefined && body.output_config !== null && !isObj(body.output_config)) fail('output_config', 'must be an object');

  const req: Request = {
    model: target.model, system, messages: messages.filter((m) => m.parts.length > 0), tools: toolList,
    stopSequences: [], stream: body.stream === true, maxOutputTokens: maxTokens,
  };
  if (choice) req.toolChoice = choice;
  if (parallel !== undefined) req.parallelToolCalls = parallel;
  if (body.stop_sequences !== undefined && body.stop_sequences !== null) {
    if (!Array.isArray(body.stop_sequences) || !body.stop_sequences.every((s) => typeof s === 'string')) fail('stop_sequences', 'must be an array of strings');
    req.stopSequences = body.stop_sequences;
  }
  const temperature = optNumber(body.temperature, 'temperature', 0, 1);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body.top_p, 'top_p', 0, 1);
  if (topP !== undefined) req.topP = topP;
  const topK = optNumber(body.top_k, 'top_k', 0, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined) req.topK = topK;
  const r = reasoning(body.thinking, outputConfig);
  if (r) req.reasoning = r;
  const format = outputConfig.format;
  if (isObj(format)) {
    if (format.type !== 'json_schema' || !isObj(format.schema)) fail('output_config.format', 'must be {"type":"json_schema","schema":{…}}');
    req.output = { type: 'json', schema: format.schema };
  }
  // An end-user id, where it is short enough to be one (Claude Code sends a JSON blob, dropped).
  const userId = isObj(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof userId === 'string' && userId !== '' && userId.length <= 64) req.user = userId;
  // Fields outside MAPPED_FIELDS (IGNORED_FIELDS, and fields newer than this code, which Anthropic
  // adds often) are dropped rather than refused.
  return req;
}
