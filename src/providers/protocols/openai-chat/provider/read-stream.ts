// OpenAI Chat chunks (SSE `data:` events, no event names) → IR stream events (provider-reference.md
// §1.5). Tool calls stream by `index`: the first fragment of an index names the call, later ones add
// argument text; calls end when the finish reason comes. `[DONE]` is the end: the finish is emitted
// there, once, with the usage chunk's counts (the gateway asks for it where the server takes the
// request). With a profile that reads `reasoning_details`, their fragments are gathered and the
// whole array closes the reasoning block as its state when the answer proper starts.
import type { StreamReader, Target } from '../../../ir/protocol.js';
import type { FinishReason, StreamEvent, Usage } from '../../../ir/types.js';
import type { SseEvent } from '../../../types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson, type JsonRecord } from '../../../shared/lenient-json.js';
import { readChatError } from './read-error.js';
import { mergeReasoningDetails, reasoningDetailsState, reasoningDetailsText } from './reasoning-details.js';
import { fromChatUsage } from '../usage.js';
import { fromFinishReason } from './wire.js';

export function createChatStreamReader(target: Target): StreamReader {
  let started = false;
  let done = false;
  let usage: Usage | undefined;
  let finish: FinishReason | undefined;
  let refusal = '';
  /** Open tool calls of choice 0, by index → id. */
  const calls = new Map<number, string>();
  const withDetails = target.quirks?.reasoningDetails === true;
  /** reasoning_details blocks of the reasoning block in progress. */
  let details: JsonRecord[] = [];

  /** The reasoning block is over: its details become its state. */
  const endReasoning = (out: StreamEvent[]): void => {
    if (details.length === 0) return;
    out.push({ type: 'reasoning-end', state: reasoningDetailsState(target.provider, details) });
    details = [];
  };

  const endCalls = (out: StreamEvent[]): void => {
    for (const id of calls.values()) out.push({ type: 'tool-call-end', id });
    calls.clear();
  };

  const onChunk = (o: Record<string, unknown>): StreamEvent[] => {
    const out: StreamEvent[] = [];
    if (!started) {
      started = true;
      const start: StreamEvent = { type: 'start' };
      const id = asString(o.id);
      const model = asString(o.model);
      if (id) start.id = id;
      if (model) start.model = model;
      out.push(start);
    }
    if (isRecord(o.usage)) {
      usage = fromChatUsage(o.usage) ?? usage;
      if (usage) out.push({ type: 'usage', usage });
    }
    for (const raw of asArray(o.choices)) {
      const c = asRecord(raw);
      if ((asNumber(c.index) ?? 0) !== 0) continue; // one answer per request through the hub
      const d = asRecord(c.delta);
      let reasoning = asString(d.reasoning_content) ?? asString(d.reasoning);
      if (withDetails && Array.isArray(d.reasoning_details)) {
        reasoning ??= reasoningDetailsText(d.reasoning_details);
        mergeReasoningDetails(details, d.reasoning_details);
      }
      if (reasoning) out.push({ type: 'reasoning', text: reasoning });
      const text = asString(d.content);
      if (text || asArray(d.tool_calls).length > 0) endReasoning(out);
      if (text) out.push({ type: 'text', text });
      const r = asString(d.refusal);
      if (r) refusal += r;
      for (const rawCall of asArray(d.tool_calls)) {
        const tc = asRecord(rawCall);
        const index = asNumber(tc.index) ?? calls.size;
        const fn = asRecord(tc.function);
        let id = calls.get(index);
        if (id === undefined) {
          id = asString(tc.id) ?? `call_${index}`;
          calls.set(index, id);
          out.push({ type: 'tool-call-start', id, name: asString(fn.name) ?? '' });
        }
        const args = asString(fn.arguments);
        if (args) out.push({ type: 'tool-call-arguments', id, delta: args });
      }
      if (typeof c.finish_reason === 'string') {
        finish = refusal ? 'refusal' : fromFinishReason(c.finish_reason);
        endCalls(out);
      }
    }
    return out;
  };

  const finished = (): StreamEvent[] => {
    done = true;
    const out: StreamEvent[] = [];
    endReasoning(out);
    endCalls(out);
    const ev: StreamEvent = { type: 'finish', reason: finish ?? 'stop' };
    if (usage) ev.usage = usage;
    if (refusal) ev.refusal = refusal;
    out.push(ev);
    return out;
  };

  return {
    push(event: SseEvent): StreamEvent[] {
      if (done) return [];
      if (event.data === '[DONE]') return finished();
      const o = tryParseJson(event.data);
      if (!isRecord(o)) return [];
      if (o.error !== undefined && o.error !== null) {
        done = true;
        const e = readChatError(500, event.data, target);
        return [{ type: 'error', error: { ...e, status: 502 } }];
      }
      return onChunk(o);
    },
    end(): StreamEvent[] {
      if (done) return [];
      done = true;
      return [{ type: 'error', error: { status: 502, kind: 'stream_ended', message: `${target.displayName} closed the stream before [DONE]` } }];
    },
    complete: () => done,
    usage: () => usage,
  };
}
