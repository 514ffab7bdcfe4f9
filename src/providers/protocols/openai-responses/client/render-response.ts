// IR answer → a Responses `response` object (platform.openai.com/docs/api-reference/responses/object):
// output items in the order the model produced them (reasoning, messages, function calls), the
// request's fields echoed as OpenAI echoes them, usage. The response id is always the door's own
// (`resp_…`), so the gateway's store can find it; item ids derive from it. Opaque provider state
// rides in reasoning items' `encrypted_content` (a state token) and in call ids
// (../../tool-call-id.ts), the two things a stateless client keeps and sends back.
import type { RenderContext } from '../../../ir/protocol.js';
import type { ProviderError, Response, Usage } from '../../../ir/types.js';
import { encodeStateToken } from '../../state-token.js';
import { encodeToolCallId } from '../../tool-call-id.js';
import { renderChatError } from '../../openai-chat/client/render-error.js';
import { toResponseStatus, toResponsesUsage, type ResponseStatus } from '../wire.js';
import { clientTools, type ClientTool } from './tool-names.js';

type Obj = Record<string, unknown>;

/** Item ids: the kind's prefix, the response id's random part, the item's position. */
export function itemId(ctx: RenderContext, kind: 'msg' | 'rs' | 'fc' | 'ctc', index: number): string {
  const base = ctx.fallbackId.startsWith('resp_') ? ctx.fallbackId.slice(5) : ctx.fallbackId;
  return `${kind}_${base}${index.toString(16).padStart(2, '0')}`;
}


/** A custom tool call's input: the `input` argument the model was asked for, else its arguments as they came. */
export function customInput(args: string): string {
  try {
    const v = JSON.parse(args) as unknown;
    if (typeof v === 'object' && v !== null && typeof (v as Obj).input === 'string') return (v as Obj).input as string;
  } catch { /* not JSON: give it as it came */ }
  return args;
}

export function messageItem(id: string, text: string, status: 'in_progress' | 'completed', refusal?: string): Obj {
  const content: Obj[] = [];
  if (text !== '' || refusal === undefined) content.push({ type: 'output_text', text, annotations: [], logprobs: [] });
  if (refusal !== undefined) content.push({ type: 'refusal', refusal });
  return { id, type: 'message', status, role: 'assistant', content: status === 'in_progress' ? [] : content };
}

export function reasoningItem(id: string, text: string, encrypted: string | undefined): Obj {
  const item: Obj = { id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }] };
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** A call item as the client knows the tool: a custom tool call, or a function call (with its namespace). */
export function callItem(id: string, callId: string, flatName: string, args: string, tool: ClientTool | undefined, status: 'in_progress' | 'completed'): Obj {
  const name = tool?.name ?? flatName;
  const item: Obj = tool?.custom
    ? { id, type: 'custom_tool_call', status, call_id: callId, name, input: status === 'completed' ? customInput(args) : '' }
    : { id, type: 'function_call', status, call_id: callId, name, arguments: status === 'completed' ? args : '' };
  if (tool?.namespace !== undefined) item.namespace = tool.namespace;
  return item;
}

/** The model the client sees: the provider's own (dated) id under the door's prefix, when both are known. */
function shownModel(ctx: RenderContext, providerModel: string | undefined): string {
  return providerModel !== undefined && ctx.modelPrefix !== undefined ? ctx.modelPrefix + providerModel : ctx.model;
}

const echoed = (ctx: RenderContext, field: string, fallback: unknown): unknown => {
  const v = ctx.echo?.[field];
  return v === undefined ? fallback : v;
};

/** The response object at any point of its life: `output` and `usage` as known so far. */
export function responseObject(
  ctx: RenderContext, status: ResponseStatus, output: Obj[], usage: Usage | undefined,
  extra: { model?: string; incomplete?: { reason: string } | null; error?: ProviderError } = {},
): Obj {
  const reasoning = ctx.echo?.reasoning as Obj | undefined;
  const text = ctx.echo?.text as Obj | undefined;
  return {
    id: ctx.fallbackId,
    object: 'response',
    created_at: ctx.created,
    status,
    background: false,
    error: extra.error ? { code: renderChatError(extra.error).body.error.code ?? 'server_error', message: extra.error.message } : null,
    incomplete_details: extra.incomplete ?? null,
    instructions: echoed(ctx, 'instructions', null),
    max_output_tokens: echoed(ctx, 'max_output_tokens', null),
    max_tool_calls: echoed(ctx, 'max_tool_calls', null),
    model: shownModel(ctx, extra.model),
    output,
    parallel_tool_calls: echoed(ctx, 'parallel_tool_calls', true),
    previous_response_id: echoed(ctx, 'previous_response_id', null),
    prompt_cache_key: echoed(ctx, 'prompt_cache_key', null),
    reasoning: { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null },
    safety_identifier: echoed(ctx, 'safety_identifier', null),
    service_tier: 'default',
    store: echoed(ctx, 'store', true),
    temperature: echoed(ctx, 'temperature', 1),
    text: { format: text?.format ?? { type: 'text' }, verbosity: text?.verbosity ?? 'medium' },
    tool_choice: echoed(ctx, 'tool_choice', 'auto'),
    tools: echoed(ctx, 'tools', []),
    top_logprobs: echoed(ctx, 'top_logprobs', 0),
    top_p: echoed(ctx, 'top_p', 1),
    truncation: echoed(ctx, 'truncation', 'disabled'),
    usage: status === 'in_progress' ? null : toResponsesUsage(usage),
    user: echoed(ctx, 'user', null),
    metadata: echoed(ctx, 'metadata', {}),
  };
}

export function renderResponse(response: Response, ctx: RenderContext): Obj {
  const choice = response.choices[0];
  const tools = clientTools(ctx.echo?.tools);
  const output: Obj[] = [];
  let text: string[] = [];
  const flushText = (): void => {
    if (text.length === 0) return;
    output.push(messageItem(itemId(ctx, 'msg', output.length), text.join(''), 'completed'));
    text = [];
  };
  let calls = 0;
  for (const part of choice?.parts ?? []) {
    switch (part.type) {
      case 'text': if (part.text !== '') text.push(part.text); break;
      case 'reasoning':
        flushText();
        output.push(reasoningItem(itemId(ctx, 'rs', output.length), part.text, part.state ? encodeStateToken(part.state) : undefined));
        break;
      case 'tool-call': {
        flushText();
        const tool = tools.get(part.name);
        const callId = encodeToolCallId(part.id, part.state, ctx.fallbackId, calls++);
        output.push(callItem(itemId(ctx, tool?.custom ? 'ctc' : 'fc', output.length), callId, part.name, part.arguments === '' ? '{}' : part.arguments, tool, 'completed'));
        break;
      }
      default: { const never: never = part; return never; }
    }
  }
  if (choice?.refusal !== undefined) {
    output.push(messageItem(itemId(ctx, 'msg', output.length), text.join(''), 'completed', choice.refusal));
    text = [];
  }
  flushText();
  const { status, incomplete } = toResponseStatus(choice?.finish ?? 'stop');
  return responseObject(ctx, status, output, response.usage, { model: response.model, incomplete });
}
