// OpenAI Responses' typed SSE events → IR stream events. A small state machine over parsed events
// (each event's JSON parsed once; it never sees bytes, so any split of the bytes reads the same):
// - `response.created` opens the answer (id, model), once;
// - output items open at `response.output_item.added` and close at `.done`: a function call is a
//   tool call whose IR id is its `call_id` (argument deltas name the item by `item_id`, mapped here
//   to that call id); a reasoning item streams its summary and, at its done, gives a reasoning-end
//   carrying its `encrypted_content` (only complete at done, per OpenAI's docs);
// - `response.completed` / `response.incomplete` finish with the usage; `response.failed` and
//   `error` end it with an error. There is no `[DONE]`: an EOF before one of those is an error.
import type { StreamReader, Target } from '../../../ir/protocol.js';
import type { ProviderError, StreamEvent, Usage } from '../../../ir/types.js';
import type { SseEvent } from '../../../types.js';
import { asNumber, asRecord, asString, tryParseJson } from '../../../shared/lenient-json.js';
import { readResponsesStreamError } from './read-error.js';
import { reasoningState, reasoningText } from './read-response.js';
import { fromResponsesUsage } from '../usage.js';
import { finishOf } from '../wire.js';

type Json = Record<string, unknown>;

/** An open output item, by item id: what its deltas and its done need. */
type Item =
  | { kind: 'call'; callId: string; args: boolean }
  | { kind: 'reasoning'; text: boolean };

const NONE: StreamEvent[] = [];

export function createResponsesStreamReader(target: Target): StreamReader {
  let phase: 'idle' | 'open' | 'done' = 'idle';
  let usage: Usage | undefined;
  let calls = false;
  let refusal = '';
  const items = new Map<string, Item>();

  /** The item an event names: by `item_id`, else (a server that gives no ids) by output index. */
  const keyOf = (id: unknown, index: unknown): string => asString(id) ?? `#${asNumber(index) ?? -1}`;
  const find = (d: Json): Item | undefined => items.get(keyOf(d.item_id, d.output_index));

  function start(response: unknown): StreamEvent[] {
    if (phase !== 'idle') return NONE;
    phase = 'open';
    const r = asRecord(response);
    const ev: StreamEvent = { type: 'start' };
    const id = asString(r.id);
    if (id) ev.id = id;
    const model = asString(r.model);
    if (model) ev.model = model;
    return [ev];
  }

  function itemAdded(d: Json): StreamEvent[] {
    const item = asRecord(d.item);
    const key = keyOf(item.id, d.output_index);
    if (item.type === 'reasoning') {
      if (!items.has(key)) items.set(key, { kind: 'reasoning', text: false });
      return NONE;
    }
    if (item.type !== 'function_call' || items.has(key)) return NONE; // a repeated added opens nothing
    calls = true;
    const callId = asString(item.call_id) ?? asString(item.id) ?? key;
    const args = asString(item.arguments) ?? '';
    items.set(key, { kind: 'call', callId, args: args !== '' });
    const out: StreamEvent[] = [{ type: 'tool-call-start', id: callId, name: asString(item.name) ?? '' }];
    if (args !== '') out.push({ type: 'tool-call-arguments', id: callId, delta: args });
    return out;
  }

  function itemDone(d: Json): StreamEvent[] {
    const item = asRecord(d.item);
    const key = keyOf(item.id, d.output_index);
    const open = items.get(key);
    items.delete(key);
    switch (item.type) {
      case 'function_call': {
        calls = true;
        const out: StreamEvent[] = [];
        let call = open?.kind === 'call' ? open : undefined;
        if (call === undefined) { // never announced: the whole call comes at its done
          call = { kind: 'call', callId: asString(item.call_id) ?? key, args: false };
          out.push({ type: 'tool-call-start', id: call.callId, name: asString(item.name) ?? '' });
        }
        const args = asString(item.arguments) ?? '';
        if (!call.args && args !== '') out.push({ type: 'tool-call-arguments', id: call.callId, delta: args });
        out.push({ type: 'tool-call-end', id: call.callId });
        return out;
      }
      case 'reasoning': {
        const out: StreamEvent[] = [];
        let said = open?.kind === 'reasoning' && open.text;
        if (!said) { // summaries not streamed as deltas: the item's own text
          const text = reasoningText(item);
          if (text !== '') { out.push({ type: 'reasoning', text }); said = true; }
        }
        const state = reasoningState(item, target);
        if (state !== undefined) out.push({ type: 'reasoning-end', state });
        else if (said) out.push({ type: 'reasoning-end' });
        return out;
      }
      case 'message':
        if (refusal === '') {
          for (const c of Array.isArray(item.content) ? item.content : []) {
            const part = asRecord(c);
            if (part.type === 'refusal') refusal += asString(part.refusal) ?? '';
          }
        }
        return NONE;
      default:
        return NONE;
    }
  }

  function reasoningDelta(d: Json): StreamEvent[] {
    const text = asString(d.delta);
    if (!text) return NONE;
    const open = find(d);
    if (open?.kind === 'reasoning') open.text = true;
    return [{ type: 'reasoning', text }];
  }

  function argumentsDelta(d: Json, whole: boolean): StreamEvent[] {
    const open = find(d);
    if (open?.kind !== 'call') return NONE;
    const delta = asString(whole ? d.arguments : d.delta);
    // `.done` repeats the whole arguments: only for a call whose deltas never came.
    if (!delta || (whole && open.args)) return NONE;
    open.args = true;
    return [{ type: 'tool-call-arguments', id: open.callId, delta }];
  }

  function finish(response: unknown): StreamEvent[] {
    const r = asRecord(response);
    const out = phase === 'idle' ? start(r) : [];
    phase = 'done';
    for (const open of items.values()) if (open.kind === 'call') out.push({ type: 'tool-call-end', id: open.callId });
    items.clear();
    usage = fromResponsesUsage(r.usage) ?? usage;
    const ev: Extract<StreamEvent, { type: 'finish' }> = { type: 'finish', reason: finishOf(r, { calls, refusal: refusal !== '' }) };
    if (refusal !== '') ev.refusal = refusal;
    if (usage !== undefined) ev.usage = usage;
    out.push(ev);
    return out;
  }

  function fail(error: ProviderError): StreamEvent[] {
    phase = 'done';
    return [{ type: 'error', error }];
  }

  function read(type: string | undefined, d: Json): StreamEvent[] {
    switch (type) {
      case 'response.output_text.delta': {
        const text = asString(d.delta);
        return text ? [{ type: 'text', text }] : NONE;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return reasoningDelta(d);
      case 'response.function_call_arguments.delta':
        return argumentsDelta(d, false);
      case 'response.function_call_arguments.done':
        return argumentsDelta(d, true);
      case 'response.reasoning_summary_part.added': {
        // Summary parts read as paragraphs, as the whole answer joins them.
        const open = find(d);
        return open?.kind === 'reasoning' && open.text ? [{ type: 'reasoning', text: '\n\n' }] : NONE;
      }
      case 'response.refusal.delta':
        refusal += asString(d.delta) ?? '';
        return NONE;
      case 'response.output_item.added':
        return itemAdded(d);
      case 'response.output_item.done':
        return itemDone(d);
      case 'response.created':
      case 'response.in_progress':
        return start(d.response);
      case 'response.completed':
      case 'response.incomplete':
        return finish(d.response);
      case 'response.failed': {
        const r = asRecord(d.response);
        usage = fromResponsesUsage(r.usage) ?? usage; // the tokens a failed answer used, for the accounting, as usage.ts reads them
        return fail(readResponsesStreamError(r.error, target));
      }
      case 'error':
        return fail(readResponsesStreamError(d, target));
      default:
        return NONE; // content parts, `.done` repeats of streamed text, server tools, newer events
    }
  }

  return {
    push(event: SseEvent): StreamEvent[] {
      if (phase === 'done') return NONE;
      const d = asRecord(tryParseJson(event.data));
      const events = read(event.event ?? asString(d.type), d);
      // Lenient: content before `response.created` opens the answer without an id or model.
      if (phase === 'idle' && events.length > 0 && events[0]!.type !== 'error') {
        phase = 'open';
        return [{ type: 'start' }, ...events];
      }
      return events;
    },
    end(): StreamEvent[] {
      if (phase === 'done') return NONE;
      return fail({ status: 502, kind: 'stream_ended', message: `upstream stream ended early: ${target.displayName} closed the stream before response.completed.` });
    },
    complete: () => phase === 'done',
    usage: () => usage,
  };
}
