// Gemini `streamGenerateContent?alt=sse` events → IR stream events (provider-reference.md §3.5,
// §4.8). Each event is a whole response fragment, parsed once: text parts carry only new text, a
// functionCall arrives whole (start, arguments and state in one event, then its end), usageMetadata
// is cumulative and a candidate's last fragment has its finishReason. Gemini sends no terminator,
// so the finishes come at EOF (`end()`); an `{"error":…}` fragment ends the stream.
import type { StreamReader, Target } from '../../../ir/protocol.js';
import type { StreamEvent, Usage } from '../../../ir/types.js';
import type { SseEvent } from '../../../types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson } from '../../../shared/lenient-json.js';
import { fromGeminiFinishReason } from '../finish-reason.js';
import { isPromptBlocked, modelVersion, onlyText, readLogprobs, readParts } from '../read-parts.js';
import { fromGeminiUsage } from '../usage.js';
import { readGeminiStreamError } from './read-error.js';

interface ChoiceState { calls: number; finishReason?: string }

const NONE: StreamEvent[] = [];

/** Tags an event with its choice; choice 0 is left implicit. */
function on<E extends StreamEvent & { choice?: number }>(ev: E, choice: number | undefined): E {
  if (choice !== undefined) ev.choice = choice;
  return ev;
}

function finishOf(c: Record<string, unknown>, s: ChoiceState): void {
  const finishReason = asString(c.finishReason);
  if (finishReason !== undefined) s.finishReason = finishReason;
}

export function createGeminiStreamReader(target: Target): StreamReader {
  let started = false;
  let done = false;
  let blocked = false;
  let usageMetadata: unknown; // the latest; converted when asked for
  const choices = new Map<number, ChoiceState>();

  const state = (index: number): ChoiceState => {
    let s = choices.get(index);
    if (s === undefined) {
      s = { calls: 0 };
      choices.set(index, s);
    }
    return s;
  };

  function candidate(c: Record<string, unknown>, index: number, out: StreamEvent[]): void {
    const s = state(index);
    const choice = index === 0 ? undefined : index;
    const text = c.logprobsResult === undefined ? onlyText(c) : undefined;
    if (text !== undefined) {
      out.push(on({ type: 'text', text }, choice));
      return finishOf(c, s);
    }
    let logprobs = readLogprobs(c.logprobsResult); // on the fragment's first text event
    for (const view of readParts(c, target.provider)) {
      if (view.kind === 'call') {
        s.calls++;
        out.push(on({ type: 'tool-call-start', id: view.id, name: view.name, arguments: view.arguments, state: view.state }, choice));
        out.push(on({ type: 'tool-call-end', id: view.id, state: view.state }, choice));
      } else if (view.kind === 'thought') {
        out.push(on({ type: 'reasoning', text: view.text }, choice));
        if (view.state !== undefined) out.push(on({ type: 'reasoning-end', state: view.state }, choice));
      } else {
        const ev: Extract<StreamEvent, { type: 'text' }> = { type: 'text', text: view.text };
        if (view.state !== undefined) ev.state = view.state;
        if (logprobs !== undefined && view.text !== '') {
          ev.logprobs = logprobs;
          logprobs = undefined;
        }
        out.push(on(ev, choice));
      }
    }
    finishOf(c, s);
  }

  function fragment(response: Record<string, unknown>): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (!started) {
      started = true;
      const start: StreamEvent = { type: 'start' };
      const id = asString(response.responseId);
      if (id !== undefined) start.id = id;
      const model = modelVersion(response);
      if (model !== undefined) start.model = model;
      out.push(start);
    }
    if (isRecord(response.usageMetadata)) usageMetadata = response.usageMetadata;
    if (response.promptFeedback !== undefined && isPromptBlocked(response)) blocked = true;
    const candidates = asArray(response.candidates);
    for (let i = 0; i < candidates.length; i++) {
      const c = asRecord(candidates[i]);
      candidate(c, asNumber(c.index) ?? i, out);
    }
    return out;
  }

  return {
    push(event: SseEvent): StreamEvent[] {
      if (done) return NONE;
      const data = tryParseJson(event.data);
      if (!isRecord(data)) return NONE; // not JSON: ignored, like any event we do not know
      if (data.error !== undefined && data.error !== null) {
        done = true;
        return [{ type: 'error', error: readGeminiStreamError(data.error, target) }];
      }
      return fragment(data);
    },
    end(): StreamEvent[] {
      if (done) return NONE;
      done = true;
      if (!started) return [{ type: 'error', error: { status: 502, kind: 'empty_response', message: `${target.displayName} ended the stream without sending a response.` } }];
      if (choices.size === 0) state(0);
      const usage: Usage = fromGeminiUsage(usageMetadata) ?? { inputTokens: 0, outputTokens: 0 };
      return [...choices].sort(([a], [b]) => a - b).map(([index, s]): StreamEvent => {
        const reason = blocked && s.finishReason === undefined ? 'content-filter' : fromGeminiFinishReason(s.finishReason, s.calls > 0);
        return index === 0 ? { type: 'finish', reason, usage } : { type: 'finish', reason, usage, choice: index };
      });
    },
    // Gemini sends no terminator: only an error ends the stream before the EOF.
    complete: () => done,
    usage: () => fromGeminiUsage(usageMetadata),
  };
}
