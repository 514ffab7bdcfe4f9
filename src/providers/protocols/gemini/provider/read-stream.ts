// Gemini `streamGenerateContent?alt=sse` events → IR stream events (provider-reference.md §3.5). Each
// event is a whole response fragment: text parts carry new text, a function call arrives whole (so
// its start, arguments and end come together), usage is cumulative, the last fragment has the
// finish reason. Gemini sends no terminator: the finish is emitted at the provider's EOF.
import type { StreamReader, Target } from '../../../ir/protocol.js';
import type { StreamEvent, Usage } from '../../../ir/types.js';
import type { SseEvent } from '../../../types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson } from '../../../shared/lenient-json.js';
import { isPromptBlocked } from '../../../gemini/parts.js';
import { readGeminiErrorObject } from './read-error.js';
import { candidateParts, fromFinishReason, fromUsageMetadata } from './wire.js';

export function createGeminiStreamReader(target: Target): StreamReader {
  let started = false;
  let done = false;
  let blocked = false;
  let usage: Usage | undefined;
  let finishReason: string | undefined;
  let calls = 0;
  let minted = 0;
  let idBase = 'gemini';

  const onFragment = (o: Record<string, unknown>): StreamEvent[] => {
    const out: StreamEvent[] = [];
    if (!started) {
      started = true;
      const start: StreamEvent = { type: 'start' };
      const id = asString(o.responseId);
      if (id) { start.id = id; idBase = id.replace(/[^a-zA-Z0-9_-]/g, ''); }
      const model = asString(o.modelVersion);
      if (model) start.model = model.replace(/^models\//, '');
      out.push(start);
    }
    const u = fromUsageMetadata(o.usageMetadata);
    if (u) { usage = u; out.push({ type: 'usage', usage: u }); }
    if (o.promptFeedback !== undefined && isPromptBlocked(o)) blocked = true;
    for (const raw of asArray(o.candidates)) {
      const c = asRecord(raw);
      if ((asNumber(c.index) ?? 0) !== 0) continue; // one answer per request through the hub
      for (const p of candidateParts(c, target.provider, idBase, () => minted++)) {
        if (p.type === 'text') out.push({ type: 'text', text: p.text });
        else if (p.type === 'reasoning') out.push({ type: 'reasoning', text: p.text });
        else if (p.type === 'tool-call') {
          calls++;
          out.push({ type: 'tool-call-start', id: p.id, name: p.name }, { type: 'tool-call-arguments', id: p.id, delta: p.arguments });
          out.push(p.state ? { type: 'tool-call-end', id: p.id, state: p.state } : { type: 'tool-call-end', id: p.id });
        }
      }
      const reason = asString(c.finishReason);
      if (reason !== undefined) finishReason = reason;
    }
    return out;
  };

  return {
    push(event: SseEvent): StreamEvent[] {
      if (done) return [];
      const o = tryParseJson(event.data);
      if (!isRecord(o)) return [];
      if (o.error !== undefined && o.error !== null) {
        done = true;
        return [{ type: 'error', error: { ...readGeminiErrorObject(o.error, 500, target), status: 502 } }];
      }
      return onFragment(o);
    },
    end(): StreamEvent[] {
      if (done) return [];
      done = true;
      if (!started) return [{ type: 'error', error: { status: 502, kind: 'empty_response', message: `${target.displayName} ended the stream without sending a response` } }];
      const reason = blocked && finishReason === undefined ? 'content-filter' : fromFinishReason(finishReason, calls > 0);
      return [usage ? { type: 'finish', reason, usage } : { type: 'finish', reason }];
    },
    complete: () => done,
    usage: () => usage,
  };
}
