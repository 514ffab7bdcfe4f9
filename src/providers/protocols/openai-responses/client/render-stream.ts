// IR stream events → the Responses API's typed SSE events
// (platform.openai.com/docs/api-reference/responses-streaming), each written as its event comes:
// response.created and response.in_progress first; then per output item `output_item.added`, its
// deltas (output_text, reasoning_summary_text, function_call_arguments), their `.done` events and
// `output_item.done`; last `response.completed` (or `response.incomplete`) carrying the whole
// response. A provider failure or a cut stream ends in `response.failed`, never a completion.
// `sequence_number` counts every event from 0. Calls of freeform tools are held until they end
// (their input is one argument of the JSON the model streams) and sent as custom tool calls.
import type { RenderContext, StreamRenderer } from '../../../ir/protocol.js';
import type { FinishReason, ProviderError, StreamEvent, Usage } from '../../../ir/types.js';
import { encodeToolCallId } from '../../tool-call-id.js';
import { encodeStateToken } from '../../state-token.js';
import { toResponseStatus } from '../wire.js';
import { callItem, customInput, itemId, messageItem, reasoningItem, responseObject } from './render-response.js';
import { clientTools, type ClientTool } from './tool-names.js';

type Obj = Record<string, unknown>;

const STREAM_CUT: ProviderError = { status: 502, kind: 'stream_broken', message: 'the provider ended the stream before it was complete' };

type Open =
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'reasoning'; index: number; id: string; text: string }
  | { kind: 'call'; index: number; id: string; callId: string; irId: string; name: string; args: string; tool: ClientTool | undefined; custom: boolean };

export function createResponsesStreamRenderer(ctx: RenderContext): StreamRenderer {
  const tools = clientTools(ctx.echo?.tools);
  let seq = 0;
  let started = false;
  let closed = false;
  let model: string | undefined;
  let usage: Usage | undefined;
  let calls = 0;
  const output: Obj[] = [];
  /** Items still open: text, reasoning and any number of tool calls (providers may interleave calls). */
  let open: Open | undefined;
  const openCalls = new Map<string, Extract<Open, { kind: 'call' }>>();

  const event = (type: string, fields: string): string => `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq++},${fields}}\n\n`;
  const lifecycle = (type: string, response: Obj): string => event(type, `"response":${JSON.stringify(response)}`);
  const start = (): string => {
    if (started) return '';
    started = true;
    const snapshot = responseObject(ctx, 'in_progress', [], undefined, { model });
    const json = JSON.stringify(snapshot);
    return event('response.created', `"response":${json}`) + event('response.in_progress', `"response":${json}`);
  };
  const added = (index: number, item: Obj): string => {
    output[index] = item;
    return event('response.output_item.added', `"output_index":${index},"item":${JSON.stringify(item)}`);
  };
  const done = (index: number, item: Obj): string => {
    output[index] = item;
    return event('response.output_item.done', `"output_index":${index},"item":${JSON.stringify(item)}`);
  };
  const ref = (o: Open): string => `"item_id":${JSON.stringify(o.id)},"output_index":${o.index}`;

  function closeOpen(): string {
    const o = open;
    if (o === undefined) return '';
    open = undefined;
    if (o.kind === 'message') {
      const part = { type: 'output_text', text: o.text, annotations: [], logprobs: [] };
      return event('response.output_text.done', `${ref(o)},"content_index":0,"text":${JSON.stringify(o.text)},"logprobs":[]`)
        + event('response.content_part.done', `${ref(o)},"content_index":0,"part":${JSON.stringify(part)}`)
        + done(o.index, messageItem(o.id, o.text, 'completed'));
    }
    if (o.kind === 'reasoning') return closeReasoning(o, undefined);
    return '';
  }

  function closeReasoning(o: Extract<Open, { kind: 'reasoning' }>, encrypted: string | undefined): string {
    open = undefined;
    let text = '';
    if (o.text !== '') {
      const part = { type: 'summary_text', text: o.text };
      text = event('response.reasoning_summary_text.done', `${ref(o)},"summary_index":0,"text":${JSON.stringify(o.text)}`)
        + event('response.reasoning_summary_part.done', `${ref(o)},"summary_index":0,"part":${JSON.stringify(part)}`);
    }
    return text + done(o.index, reasoningItem(o.id, o.text, encrypted));
  }

  function text(delta: string): string {
    let out = start();
    if (open?.kind !== 'message') {
      out += closeOpen();
      const index = output.length;
      const o: Open = { kind: 'message', index, id: itemId(ctx, 'msg', index), text: '' };
      open = o;
      out += added(index, messageItem(o.id, '', 'in_progress'))
        + event('response.content_part.added', `${ref(o)},"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`);
    }
    const o = open as Extract<Open, { kind: 'message' }>;
    o.text += delta;
    return out + event('response.output_text.delta', `${ref(o)},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]`);
  }

  function reasoning(delta: string): string {
    let out = start();
    if (open?.kind !== 'reasoning') {
      out += closeOpen();
      const index = output.length;
      const o: Open = { kind: 'reasoning', index, id: itemId(ctx, 'rs', index), text: '' };
      open = o;
      out += added(index, reasoningItem(o.id, '', undefined))
        + event('response.reasoning_summary_part.added', `${ref(o)},"summary_index":0,"part":{"type":"summary_text","text":""}`);
    }
    const o = open as Extract<Open, { kind: 'reasoning' }>;
    o.text += delta;
    return out + event('response.reasoning_summary_text.delta', `${ref(o)},"summary_index":0,"delta":${JSON.stringify(delta)}`);
  }

  /** A reasoning item carrying only state (a signature with no readable text, or a call's state). */
  function stateItem(encrypted: string): string {
    const index = output.length;
    const id = itemId(ctx, 'rs', index);
    return added(index, reasoningItem(id, '', undefined)) + done(index, reasoningItem(id, '', encrypted));
  }

  function toolStart(ev: Extract<StreamEvent, { type: 'tool-call-start' }>): string {
    const out = start() + closeOpen();
    const index = output.length;
    const tool = tools.get(ev.name);
    const isCustom = tool?.custom === true;
    const callId = encodeToolCallId(ev.id, ev.state, ctx.fallbackId, calls++);
    const o: Extract<Open, { kind: 'call' }> = { kind: 'call', index, id: itemId(ctx, isCustom ? 'ctc' : 'fc', index), callId, irId: ev.id, name: ev.name, args: ev.arguments ?? '', tool, custom: isCustom };
    openCalls.set(ev.id, o);
    const head = added(index, callItem(o.id, callId, ev.name, '', tool, 'in_progress'));
    return out + head + (o.args !== '' && !isCustom ? event('response.function_call_arguments.delta', `${ref(o)},"delta":${JSON.stringify(o.args)}`) : '');
  }

  function toolEnd(o: Extract<Open, { kind: 'call' }>, state: Extract<StreamEvent, { type: 'tool-call-end' }>['state']): string {
    openCalls.delete(o.irId);
    const args = o.args === '' ? '{}' : o.args;
    let out: string;
    if (o.custom) {
      const input = customInput(args);
      out = event('response.custom_tool_call_input.delta', `${ref(o)},"delta":${JSON.stringify(input)}`)
        + event('response.custom_tool_call_input.done', `${ref(o)},"input":${JSON.stringify(input)}`);
    } else {
      out = event('response.function_call_arguments.done', `${ref(o)},"name":${JSON.stringify(o.tool?.name ?? o.name)},"arguments":${JSON.stringify(args)}`);
    }
    out += done(o.index, callItem(o.id, o.callId, o.name, args, o.tool, 'completed'));
    // State known only at the call's end (its id is already out): a reasoning item names the call.
    return state ? out + stateItem(encodeStateToken(state, o.irId)) : out;
  }

  function finishAll(): string {
    let out = closeOpen();
    for (const o of openCalls.values()) out += toolEnd(o, undefined);
    return out;
  }

  function finish(reason: FinishReason, final: Usage | undefined, refusal: string | undefined): string {
    closed = true;
    if (final !== undefined) usage = final;
    let out = start() + finishAll();
    if (refusal !== undefined && refusal !== '') {
      const index = output.length;
      const id = itemId(ctx, 'msg', index);
      out += added(index, messageItem(id, '', 'in_progress')) + done(index, messageItem(id, '', 'completed', refusal));
    }
    const { status, incomplete } = toResponseStatus(reason);
    const response = responseObject(ctx, status, output, usage, { model, incomplete });
    // Serialised once, for the client and for a door that keeps it.
    const json = JSON.stringify(response);
    ctx.onFinal?.(response, json);
    const type = status === 'completed' ? 'response.completed' : 'response.incomplete';
    return out + event(type, `"response":${json}`);
  }

  function fail(error: ProviderError): string {
    closed = true;
    const out = start();
    // Items left open stay as they were (in progress): the answer was cut there.
    const response = responseObject(ctx, 'failed', output.filter((x) => x !== undefined), usage, { model, error });
    return out + lifecycle('response.failed', response);
  }

  return {
    push(ev: StreamEvent): string {
      if (closed) return '';
      switch (ev.type) {
        case 'start':
          if (ev.model !== undefined && !started) model = ev.model;
          if (ev.usage) usage = ev.usage;
          return start();
        case 'text':
          return ev.choice || ev.text === '' ? '' : text(ev.text);
        case 'reasoning':
          return ev.choice || ev.text === '' ? '' : reasoning(ev.text);
        case 'reasoning-end': {
          if (ev.choice) return '';
          const encrypted = ev.state ? encodeStateToken(ev.state) : undefined;
          if (open?.kind === 'reasoning') return closeReasoning(open, encrypted);
          return encrypted ? start() + closeOpen() + stateItem(encrypted) : '';
        }
        case 'tool-call-start':
          return ev.choice ? '' : toolStart(ev);
        case 'tool-call-arguments': {
          const o = openCalls.get(ev.id);
          if (ev.choice || o === undefined || ev.delta === '') return '';
          o.args += ev.delta;
          return o.custom ? '' : event('response.function_call_arguments.delta', `${ref(o)},"delta":${JSON.stringify(ev.delta)}`);
        }
        case 'tool-call-end': {
          const o = openCalls.get(ev.id);
          return ev.choice || o === undefined ? '' : toolEnd(o, ev.state);
        }
        case 'usage':
          usage = ev.usage;
          return '';
        case 'finish':
          return ev.choice ? '' : finish(ev.reason, ev.usage, ev.refusal);
        case 'error':
          return fail(ev.error);
        default: { const never: never = ev; return never; }
      }
    },
    end(): string {
      return closed ? '' : fail(STREAM_CUT);
    },
  };
}
