// Responses `input` items → IR turns (platform.openai.com/docs/api-reference/responses/create,
// `input`). Items are a flat list; consecutive assistant-side items (messages, reasoning, function
// calls) make one assistant turn and consecutive user-side items (messages, call outputs) one user
// turn, which is what every builder expects. System and developer messages join the system prompt.
// Opaque state we minted comes back in a reasoning item's `encrypted_content` (a state token,
// ../../state-token.ts) or in a call id (../../tool-call-id.ts, the doors' shared id scheme);
// OpenAI's own encrypted reasoning is tagged as OpenAI's, so no other provider is ever sent it.
import type { AssistantPart, DocumentPart, ImagePart, Message, ProviderState, TextPart, UserPart } from '../../../ir/types.js';
import { isHttpUrl, parseDataUrl } from '../../../shared/data-url.js';
import { KNOWN_EXTENSIONS, mimeFromFileName } from '../../../shared/media-types.js';
import { TranslationError } from '../../../types.js';
import { readToolCallId } from '../../tool-call-id.js';
import { decodeStateToken } from '../../state-token.js';
import { qualifiedName } from './tool-names.js';

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function fail(param: string, message: string): never {
  throw new TranslationError(`${param}: ${message}`, param, 'invalid_value');
}

export function str(v: unknown, param: string): string {
  if (typeof v !== 'string') fail(param, v === undefined ? 'is required' : 'must be a string');
  return v;
}

/** Items of tools OpenAI runs on its servers: history a client resends, meaningless to another model. */
const HOSTED_CALL_ITEMS = new Set([
  'web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call', 'mcp_call', 'mcp_list_tools',
  'mcp_approval_request', 'mcp_approval_response', 'computer_call', 'computer_call_output',
]);

export interface ParsedInput {
  system: TextPart[];
  messages: Message[];
}

/**
 * `input` (a string, or a list of items) → the conversation. Calls of the client's freeform
 * (`custom`) tools travel as function calls with one `input` string argument (parse-request.ts).
 */
export function parseInput(input: unknown, provider: string): ParsedInput {
  const out: ParsedInput = { system: [], messages: [] };
  if (typeof input === 'string') {
    if (input !== '') out.messages.push({ role: 'user', parts: [{ type: 'text', text: input }] });
    return out;
  }
  if (!Array.isArray(input)) fail('input', input === undefined ? 'is required' : 'must be a string or an array of items');
  const names = new Map<string, string>(); // call id → tool name, for results (Gemini needs names)
  const callStates = new Map<string, ProviderState>(); // state a reasoning item carries for a call
  const user = (): UserPart[] => {
    const last = out.messages[out.messages.length - 1];
    if (last?.role === 'user') return last.parts;
    const parts: UserPart[] = [];
    out.messages.push({ role: 'user', parts });
    return parts;
  };
  const assistant = (): AssistantPart[] => {
    const last = out.messages[out.messages.length - 1];
    if (last?.role === 'assistant') return last.parts;
    const parts: AssistantPart[] = [];
    out.messages.push({ role: 'assistant', parts });
    return parts;
  };

  input.forEach((item, i) => {
    const param = `input[${i}]`;
    if (!isObj(item)) fail(param, 'must be an object');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const role = item.role;
        if (role === 'system' || role === 'developer') out.system.push(...textOnly(item.content, `${param}.content`));
        else if (role === 'user') user().push(...userContent(item.content, `${param}.content`, provider));
        else if (role === 'assistant') assistant().push(...textOnly(item.content, `${param}.content`));
        else fail(`${param}.role`, 'must be "user", "assistant", "system" or "developer"');
        break;
      }
      case 'function_call': case 'custom_tool_call': {
        const custom = type === 'custom_tool_call';
        const callId = str(item.call_id, `${param}.call_id`);
        const name = qualifiedName(typeof item.namespace === 'string' ? item.namespace : undefined, str(item.name, `${param}.name`));
        const { id, state } = readToolCallId(callId);
        names.set(callId, name);
        const args = custom ? JSON.stringify({ input: str(item.input, `${param}.input`) }) : str(item.arguments, `${param}.arguments`);
        const part: AssistantPart = { type: 'tool-call', id, name, arguments: args, param: custom ? `${param}.input` : `${param}.arguments` };
        if (state) part.state = state;
        assistant().push(part);
        break;
      }
      case 'function_call_output': case 'custom_tool_call_output': {
        const callId = str(item.call_id, `${param}.call_id`);
        const part: UserPart = { type: 'tool-result', callId: readToolCallId(callId).id, content: [], param: `${param}.output` };
        const name = names.get(callId);
        if (name !== undefined) part.name = name;
        if (typeof item.output === 'string') { part.plain = true; if (item.output !== '') part.content.push({ type: 'text', text: item.output }); }
        else if (Array.isArray(item.output)) part.content = outputParts(item.output, `${param}.output`, provider);
        else fail(`${param}.output`, 'must be a string or an array of input_text, input_image or input_file parts');
        user().push(part);
        break;
      }
      case 'reasoning': {
        const decoded = typeof item.encrypted_content === 'string' ? decodeStateToken(item.encrypted_content) : undefined;
        if (decoded?.callId !== undefined) { callStates.set(decoded.callId, decoded.state); break; }
        const text = summaryText(item.summary);
        if (decoded) assistant().push({ type: 'reasoning', text, state: decoded.state });
        else if (typeof item.encrypted_content === 'string' && item.encrypted_content !== '') {
          const data: Record<string, string> = { encryptedContent: item.encrypted_content };
          if (typeof item.id === 'string') data.id = item.id;
          assistant().push({ type: 'reasoning', text, state: { provider: 'openai', data } });
        } else if (text !== '') assistant().push({ type: 'reasoning', text });
        break;
      }
      case 'item_reference':
        fail(`${param}.id`, `item references need the response that holds them; send the item itself, or chain with previous_response_id (${provider} models)`);
      default:
        if (typeof type === 'string' && HOSTED_CALL_ITEMS.has(type)) break; // a tool OpenAI ran: its result is already in the text that follows
        if (type === 'local_shell_call' || type === 'local_shell_call_output') break; // Codex's built-in shell (left out for other models; README)
        fail(`${param}.type`, `"${String(type)}" items are not supported for ${provider} models`);
    }
  });
  for (const m of out.messages) {
    if (m.role !== 'assistant') continue;
    for (const part of m.parts) if (part.type === 'tool-call' && part.state === undefined && callStates.has(part.id)) part.state = callStates.get(part.id);
  }
  out.messages = out.messages.filter((m) => m.parts.length > 0);
  return out;
}

function summaryText(summary: unknown): string {
  if (!Array.isArray(summary)) return '';
  return summary.map((s) => (isObj(s) && typeof s.text === 'string' ? s.text : '')).filter((t) => t !== '').join('\n\n');
}

/** System, developer and assistant content: a string, or text parts of any of the text kinds. */
function textOnly(content: unknown, param: string): TextPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) fail(param, 'must be a string or an array of content parts');
  const out: TextPart[] = [];
  content.forEach((p, j) => {
    if (!isObj(p)) fail(`${param}[${j}]`, 'must be an object');
    if (p.type === 'input_text' || p.type === 'output_text' || p.type === 'text') out.push({ type: 'text', text: str(p.text, `${param}[${j}].text`) });
    else if (p.type === 'refusal') out.push({ type: 'text', text: str(p.refusal, `${param}[${j}].refusal`) });
    else fail(`${param}[${j}].type`, `must be input_text or output_text here, got "${String(p.type)}"`);
  });
  return out;
}

function userContent(content: unknown, param: string, provider: string): UserPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) fail(param, 'must be a string or an array of content parts');
  return content.map((p, j) => contentPart(p, `${param}[${j}]`, provider));
}

function outputParts(output: unknown[], param: string, provider: string): Array<TextPart | ImagePart | DocumentPart> {
  return output.map((p, j) => contentPart(p, `${param}[${j}]`, provider));
}

function contentPart(p: unknown, param: string, provider: string): TextPart | ImagePart | DocumentPart {
  if (!isObj(p)) fail(param, 'must be an object');
  switch (p.type) {
    case 'input_text': case 'output_text': case 'text': return { type: 'text', text: str(p.text, `${param}.text`) };
    case 'input_image': return image(p, param);
    case 'input_file': return file(p, param, provider);
    default: return fail(`${param}.type`, `"${String(p.type)}" parts are not supported for ${provider} models`);
  }
}

function image(p: Obj, param: string): ImagePart {
  if (typeof p.image_url !== 'string') {
    if (p.file_id !== undefined && p.file_id !== null) fail(`${param}.file_id`, 'OpenAI file ids only work with OpenAI models; send image_url as a URL or a data URL');
    fail(`${param}.image_url`, 'is required');
  }
  const urlParam = `${param}.image_url`;
  const data = parseDataUrl(p.image_url);
  const part: ImagePart = data !== undefined
    ? { type: 'image', source: { kind: 'base64', mediaType: data.mimeType, data: data.data }, param: urlParam }
    : isHttpUrl(p.image_url) ? { type: 'image', source: { kind: 'url', url: p.image_url }, param: urlParam }
    : fail(urlParam, 'must be an http(s) URL or a base64 data URL (data:<mime type>;base64,<data>)');
  if (p.detail === 'low' || p.detail === 'high' || p.detail === 'auto') part.detail = p.detail;
  return part;
}

function file(p: Obj, param: string, provider: string): DocumentPart {
  const filename = typeof p.filename === 'string' ? p.filename : undefined;
  if (typeof p.file_data === 'string') {
    const dataParam = `${param}.file_data`;
    const data = parseDataUrl(p.file_data);
    const mediaType = data?.mimeType ?? mimeFromFileName(filename ?? '');
    if (mediaType === undefined) fail(dataParam, `must be a base64 data URL (data:application/pdf;base64,…), or come with a filename ending in ${KNOWN_EXTENSIONS.join(', ')}`);
    const doc: DocumentPart = { type: 'document', source: { kind: 'base64', mediaType, data: data?.data ?? p.file_data }, param: dataParam };
    if (filename !== undefined) doc.title = filename;
    return doc;
  }
  if (typeof p.file_url === 'string' && isHttpUrl(p.file_url)) {
    const doc: DocumentPart = { type: 'document', source: { kind: 'url', url: p.file_url }, param: `${param}.file_url` };
    if (filename !== undefined) doc.title = filename;
    return doc;
  }
  return fail(p.file_id !== undefined ? `${param}.file_id` : `${param}.file_data`, `needs inline file_data or a file_url for ${provider} models; OpenAI file ids cannot be used`);
}
