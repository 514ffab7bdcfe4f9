// Anthropic Messages SSE events → IR stream events (provider-reference.md §2.7, §4.8). A small state
// machine over parsed events: it never sees bytes, so however the bytes were split, the same events
// give the same output. Each event's JSON is parsed at most once, and only for the events that
// need it (Anthropic names every event; pings and message_stop are never parsed).
import type { StreamReader, Target } from '../../../ir/protocol.js';
import type { ProviderError, StreamEvent } from '../../../ir/types.js';
import type { SseEvent } from '../../../types.js';
import { asNumber, asRecord, asString, tryParseJson } from '../../../shared/lenient-json.js';
import { fromAnthropicStopReason } from '../stop-reason.js';
import { mergeAnthropicUsage, toIrUsage, ZERO_TOKEN_COUNTS, type AnthropicTokenCounts } from '../usage.js';
import { readAnthropicStreamError } from './read-error.js';

type Json = Record<string, unknown>;

/** What an open content block needs at its stop. */
type Block =
  | { kind: 'tool'; id: string }
  | { kind: 'thinking'; signature: string }
  | { kind: 'redacted'; data: string };

const NONE: StreamEvent[] = [];

const payload = (event: SseEvent): Json => asRecord(tryParseJson(event.data));

export function createAnthropicStreamReader(target: Target): StreamReader {
  let phase: 'idle' | 'open' | 'done' = 'idle';
  let counts: AnthropicTokenCounts | undefined;
  let stopReason: unknown = null;
  let stopSequence: string | undefined;
  let refusal: string | undefined;
  const blocks = new Map<number, Block>(); // by Anthropic's block index

  /** Lenient: content before any message_start opens the message without an id or model. */
  const opened = (events: StreamEvent[]): StreamEvent[] => {
    if (phase !== 'idle' || events.length === 0) return events;
    phase = 'open';
    return [{ type: 'start' }, ...events];
  };
  const text = (value: unknown): StreamEvent[] => {
    const s = asString(value);
    return s === undefined || s === '' ? NONE : [{ type: 'text', text: s }];
  };
  const reasoning = (value: unknown): StreamEvent[] => {
    const s = asString(value);
    return s === undefined || s === '' ? NONE : [{ type: 'reasoning', text: s }];
  };

  function start(message: unknown): StreamEvent[] {
    if (phase !== 'idle') return NONE; // a repeated start opens nothing
    phase = 'open';
    const m = asRecord(message);
    counts = mergeAnthropicUsage(ZERO_TOKEN_COUNTS, m.usage);
    const ev: StreamEvent = { type: 'start', usage: toIrUsage(counts) };
    const id = asString(m.id);
    if (id !== undefined) ev.id = id;
    const model = asString(m.model);
    if (model !== undefined) ev.model = model;
    return [ev];
  }

  function blockStart(d: Json): StreamEvent[] {
    const index = asNumber(d.index) ?? -1;
    const block = asRecord(d.content_block);
    switch (block.type) {
      case 'text':
        return text(block.text);
      case 'thinking':
        blocks.set(index, { kind: 'thinking', signature: asString(block.signature) ?? '' });
        return reasoning(block.thinking);
      case 'redacted_thinking':
        blocks.set(index, { kind: 'redacted', data: asString(block.data) ?? '' });
        return NONE;
      case 'tool_use': {
        if (blocks.has(index)) return NONE; // a repeated start must not open a second call
        const id = asString(block.id) ?? '';
        blocks.set(index, { kind: 'tool', id });
        return [{ type: 'tool-call-start', id, name: asString(block.name) ?? '' }];
      }
      default:
        return NONE; // server tools, blocks newer than this code
    }
  }

  function blockDelta(d: Json): StreamEvent[] {
    const delta = asRecord(d.delta);
    switch (delta.type) {
      case 'text_delta':
        return text(delta.text);
      case 'thinking_delta':
        return reasoning(delta.thinking);
      case 'signature_delta': {
        const block = blocks.get(asNumber(d.index) ?? -1);
        if (block?.kind === 'thinking') block.signature += asString(delta.signature) ?? '';
        return NONE;
      }
      case 'input_json_delta': {
        const block = blocks.get(asNumber(d.index) ?? -1);
        const partial = asString(delta.partial_json) ?? '';
        // Anthropic opens every call with an empty fragment.
        return block?.kind !== 'tool' || partial === '' ? NONE : [{ type: 'tool-call-arguments', id: block.id, delta: partial }];
      }
      default:
        return NONE; // citations_delta, deltas newer than this code
    }
  }

  function blockStop(d: Json): StreamEvent[] {
    const block = blocks.get(asNumber(d.index) ?? -1);
    switch (block?.kind) {
      case 'tool':
        return [{ type: 'tool-call-end', id: block.id }];
      case 'thinking':
        return [block.signature === '' ? { type: 'reasoning-end' } : { type: 'reasoning-end', state: { provider: target.provider, data: { signature: block.signature } } }];
      case 'redacted':
        return [{ type: 'reasoning-end', redacted: true, state: { provider: target.provider, data: { data: block.data } } }];
      default:
        return NONE;
    }
  }

  function messageDelta(d: Json): StreamEvent[] {
    const delta = asRecord(d.delta);
    if (typeof delta.stop_reason === 'string') stopReason = delta.stop_reason;
    const sequence = asString(delta.stop_sequence);
    if (sequence !== undefined) stopSequence = sequence;
    const explanation = asString(asRecord(delta.stop_details).explanation);
    if (explanation !== undefined && explanation !== '') refusal = explanation;
    counts = mergeAnthropicUsage(counts ?? ZERO_TOKEN_COUNTS, d.usage);
    return [{ type: 'usage', usage: toIrUsage(counts) }];
  }

  function finish(): StreamEvent[] {
    const ev: Extract<StreamEvent, { type: 'finish' }> = { type: 'finish', reason: fromAnthropicStopReason(stopReason), usage: toIrUsage(counts ?? ZERO_TOKEN_COUNTS) };
    if (stopSequence !== undefined) ev.stopSequence = stopSequence;
    if (refusal !== undefined && stopReason === 'refusal') ev.refusal = refusal;
    return [ev];
  }

  function fail(error: ProviderError): StreamEvent[] {
    phase = 'done';
    return [{ type: 'error', error }];
  }

  return {
    push(event: SseEvent): StreamEvent[] {
      if (phase === 'done') return NONE;
      // An unnamed event (Anthropic sends none) is parsed once here for its type, and kept.
      let data: Json | undefined;
      let type = event.event;
      if (type === undefined) {
        data = payload(event);
        type = asString(data.type);
      }
      switch (type) {
        case 'content_block_delta':
          return opened(blockDelta(data ?? payload(event)));
        case 'message_start':
          return start((data ?? payload(event)).message);
        case 'content_block_start':
          return opened(blockStart(data ?? payload(event)));
        case 'content_block_stop':
          return opened(blockStop(data ?? payload(event)));
        case 'message_delta':
          return messageDelta(data ?? payload(event));
        case 'message_stop': {
          const events = opened(finish());
          phase = 'done';
          return events;
        }
        case 'error':
          return fail(readAnthropicStreamError(data ?? tryParseJson(event.data), target));
        default:
          return NONE; // ping, and event types newer than this code
      }
    },
    end(): StreamEvent[] {
      if (phase === 'done') return NONE;
      return fail({ status: 502, kind: 'stream_ended', message: `upstream stream ended early: ${target.displayName} closed the stream before message_stop.` });
    },
    complete: () => phase === 'done',
    usage: () => (counts === undefined ? undefined : toIrUsage(counts)),
  };
}
