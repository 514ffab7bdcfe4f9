// IR stream events → Anthropic Messages SSE (provider-reference.md §2.7): message_start, then
// content blocks opened and closed as the kind of content changes (indexes count up), message_delta
// with the stop reason and the final usage, message_stop. Each event's frame is written as it
// comes; nothing is held back. A translated stream does not know its input tokens at
// message_start: it reports what it knows there and the final counts in message_delta.usage.
import type { RenderContext, StreamRenderer } from '../../../ir/protocol.js';
import type { ProviderError, StreamEvent, Usage } from '../../../ir/types.js';
import { renderAnthropicError } from './render-error.js';
import { encodeStateSignature, toClientToolId } from './provider-state.js';
import { toAnthropicUsage, toStopReason } from './wire.js';

const frame = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;

const STREAM_CUT: ProviderError = {
  status: 502, kind: 'stream_broken', message: 'the provider ended the stream before it was complete',
};

export function createMessagesStreamRenderer(ctx: RenderContext): StreamRenderer {
  let started = false;
  let done = false;
  let index = -1;
  /** What the open block is: a text, thinking or tool_use block, or none. */
  let open: 'text' | 'thinking' | 'tool' | null = null;
  let openToolId: string | undefined;
  /** Tool calls so far, and each one's tool_use id by its IR id (the last, for calls the provider gave no id). */
  let calls = 0;
  const clientToolIds = new Map<string, string>();
  let usage: Usage | undefined;
  const indexJson = () => String(index);

  const start = (id: string | undefined, u: Usage | undefined, model?: string): string => {
    started = true;
    const message = {
      id: id && id.startsWith('msg_') ? id : ctx.fallbackId, type: 'message', role: 'assistant',
      model: model && ctx.modelPrefix !== undefined ? ctx.modelPrefix + model : ctx.model,
      content: [], stop_reason: null, stop_sequence: null, usage: { ...toAnthropicUsage(u), output_tokens: 0 },
    };
    return frame('message_start', JSON.stringify({ type: 'message_start', message }));
  };
  const ensureStarted = (): string => (started ? '' : start(undefined, undefined));
  const close = (): string => {
    if (open === null) return '';
    open = null;
    openToolId = undefined;
    return frame('content_block_stop', `{"type":"content_block_stop","index":${indexJson()}}`);
  };
  const openBlock = (kind: 'text' | 'thinking' | 'tool', block: string): string => {
    const text = close();
    index++;
    open = kind;
    return `${text}${frame('content_block_start', `{"type":"content_block_start","index":${indexJson()},"content_block":${block}}`)}`;
  };
  const delta = (d: string): string => frame('content_block_delta', `{"type":"content_block_delta","index":${indexJson()},"delta":${d}}`);
  /** A thinking block that only carries a foreign provider's state (no text). */
  const stateBlock = (signature: string): string =>
    openBlock('thinking', '{"type":"thinking","thinking":"","signature":""}') + delta(`{"type":"signature_delta","signature":${JSON.stringify(signature)}}`) + close();
  const error = (e: ProviderError): string => {
    done = true;
    return `${ensureStarted()}${close()}${frame('error', JSON.stringify(renderAnthropicError(e).body))}`;
  };

  return {
    push(ev: StreamEvent): string {
      if (done) return '';
      switch (ev.type) {
        case 'start':
          if (ev.usage) usage = ev.usage;
          return started ? '' : start(ev.id, ev.usage, ev.model);
        case 'text': {
          if (ev.choice || ev.text === '') return '';
          const head = ensureStarted() + (open === 'text' ? '' : openBlock('text', '{"type":"text","text":""}'));
          return `${head}${delta(`{"type":"text_delta","text":${JSON.stringify(ev.text)}}`)}`;
        }
        case 'reasoning': {
          if (ev.choice || ev.text === '') return '';
          const head = ensureStarted() + (open === 'thinking' ? '' : openBlock('thinking', '{"type":"thinking","thinking":"","signature":""}'));
          return `${head}${delta(`{"type":"thinking_delta","thinking":${JSON.stringify(ev.text)}}`)}`;
        }
        case 'reasoning-end': {
          if (ev.choice) return '';
          const signature = ev.state ? encodeStateSignature(ev.state) : undefined;
          if (open === 'thinking') return (signature ? delta(`{"type":"signature_delta","signature":${JSON.stringify(signature)}}`) : '') + close();
          return signature ? ensureStarted() + stateBlock(signature) : '';
        }
        case 'tool-call-start': {
          if (ev.choice) return '';
          const clientId = toClientToolId(ev.id, ctx.fallbackId, calls++);
          clientToolIds.set(ev.id, clientId);
          const text = ensureStarted() + openBlock('tool', `{"type":"tool_use","id":${JSON.stringify(clientId)},"name":${JSON.stringify(ev.name)},"input":{}}`);
          openToolId = ev.id;
          // A provider that sends each call whole (Gemini) gives its arguments with the start.
          return ev.arguments ? text + delta(`{"type":"input_json_delta","partial_json":${JSON.stringify(ev.arguments)}}`) : text;
        }
        case 'tool-call-arguments':
          if (ev.choice || open !== 'tool' || openToolId !== ev.id || ev.delta === '') return '';
          return delta(`{"type":"input_json_delta","partial_json":${JSON.stringify(ev.delta)}}`);
        case 'tool-call-end': {
          if (ev.choice) return '';
          const text = open === 'tool' && openToolId === ev.id ? close() : '';
          return ev.state ? text + stateBlock(encodeStateSignature(ev.state, clientToolIds.get(ev.id) ?? ev.id)) : text;
        }
        case 'usage':
          usage = ev.usage;
          return '';
        case 'finish': {
          if (ev.choice) return '';
          done = true;
          const final = toAnthropicUsage(ev.usage ?? usage);
          const md = { type: 'message_delta', delta: { stop_reason: toStopReason(ev.reason), stop_sequence: ev.stopSequence ?? null }, usage: final };
          return `${ensureStarted()}${close()}${frame('message_delta', JSON.stringify(md))}${frame('message_stop', '{"type":"message_stop"}')}`;
        }
        case 'error':
          return error(ev.error);
        default: { const never: never = ev; return never; }
      }
    },
    end(): string {
      return done ? '' : error(STREAM_CUT);
    },
  };
}
