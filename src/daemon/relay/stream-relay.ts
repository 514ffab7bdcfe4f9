// The streaming half of a door's request: upstream SSE bytes → the client's frames (through the
// hub, ir-relay.ts; or OpenAI's own chunks, filtered, on the Chat door's same-protocol path), written
// chunk by chunk as they arrive, with the request's accounting at the end. Every microsecond per
// chunk shows in the client's latency.
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { OpenAIStreamFilter } from '../../providers/openai/stream.js';
import type { OpenAIErrorBody, OpenAIUsage, ProviderId, SseEvent } from '../../providers/types.js';
import type { BodyCapture } from '../observe/body-log.js';
import type { DaemonContext } from '../context.js';
import { irUsageToTokens, type TokenUsage } from '../observe/events.js';
import { write } from '../http/http-util.js';
import { fromChatUsage } from '../../providers/protocols/openai-chat/usage.js';
import { SseParser, sseData, SSE_DONE } from '../http/sse.js';
import type { RequestTracker } from '../observe/tracker.js';
import type { BodySink } from './upstream-call.js';
import { GatewayError } from '../http/errors.js';

/** OpenAI Chat usage → the tracker's token counts, read by the Chat protocol's one usage reader. */
export function usageToTokens(u: OpenAIUsage | undefined): TokenUsage {
  return irUsageToTokens(fromChatUsage(u));
}

/**
 * Turns upstream bytes into the text the client gets, synchronously (bench/stream-translate.ts
 * measures exactly this per-chunk work).
 */
export interface StreamRelay {
  /** One upstream network chunk → the text to write ('' when it completes no event). */
  push(chunk: Buffer): string;
  /** Upstream EOF → whatever closes the client's stream. */
  end(): string;
  /** The client has everything: the stream's end or the one error event has been produced. */
  completed(): boolean;
  /** The error the stream ended with (from the provider), in the tracker's terms. */
  failed(): { code: string; message: string } | undefined;
  /** Usage so far, in the tracker's terms. */
  usage(): TokenUsage;
  outputTokens(): number;
  /** The frame that tells the client, in its protocol, that the stream failed with `error`. */
  errorFrame(error: GatewayError): string;
  /** The model the provider says is answering, once the stream has said it. */
  model(): string | undefined;
}

const failure = (e: OpenAIErrorBody) => ({ code: e.error.code ?? e.error.type, message: e.error.message });

/** A gateway error as the one `data:` error event of an OpenAI-format stream. */
function openAIErrorFrame(ge: GatewayError): string {
  const error: OpenAIErrorBody = { error: { message: ge.message, type: 'server_error', param: null, code: ge.code } };
  return sseData(error);
}

/** logBodies: the same relay, keeping a copy of the text the client gets (no per-chunk work when off). */
function capturing(relay: StreamRelay, capture: BodyCapture): StreamRelay {
  const kept = (text: string): string => { capture.wrote(text); return text; };
  return { ...relay, push: (chunk) => kept(relay.push(chunk)), end: () => kept(relay.end()) };
}

export function createOpenAIRelay(filter: OpenAIStreamFilter): StreamRelay {
  const parser = new SseParser();
  let failed: OpenAIErrorBody | undefined;
  let chunks = 0;
  const next = (events: SseEvent[], eof: boolean): string => {
    let text = '';
    for (const ev of events) {
      const data = filter.filter(ev);
      if (data === null) continue;
      if (data.startsWith('{"error"')) {
        try { const e = JSON.parse(data) as OpenAIErrorBody; if (e.error) failed = e; } catch { /* not an error object */ }
      }
      text += `data: ${data}\n\n`;
      chunks++;
      if (filter.sawDone() || failed) break;
    }
    if (eof && !filter.sawDone() && !failed) text += SSE_DONE;
    return text;
  };
  return {
    push: (chunk) => next(parser.push(chunk), false),
    end: () => next(parser.end(), true),
    completed: () => filter.sawDone() || failed !== undefined,
    failed: () => (failed ? failure(failed) : undefined),
    usage: () => usageToTokens(filter.usage()),
    outputTokens: () => filter.usage()?.completion_tokens ?? chunks,
    model: () => filter.model(),
    errorFrame: openAIErrorFrame,
  };
}

/** After the client has everything, a provider may still send this much, read and dropped, before its connection is closed. */
const DUMP_LIMIT = 64 * 1024;

/**
 * Relays an upstream SSE response to the client from undici's callbacks (upstream-call.ts): one
 * write per upstream network chunk, made as the chunk arrives and sent at once (write with `now`,
 * see http-util's writeNow), so nothing (no await, no microtask hop, no accounting) sits between
 * the bytes arriving and their write to the client's socket. While that socket is full, upstream
 * is paused until 'drain'. A client that leaves (upstream aborted, or closed during a drain wait)
 * ends as a 499. Calls `done` once the outcome is accounted.
 */
export function createRelaySink(
  ctx: DaemonContext, provider: ProviderId, res: ServerResponse, tracker: RequestTracker,
  plainRelay: StreamRelay, model: string, capture: BodyCapture | undefined, done: () => void,
): BodySink {
  const relay = capture ? capturing(plainRelay, capture) : plainRelay;
  const outputTokens = (): number => relay.outputTokens();
  let controller: Dispatcher.DispatchController | undefined;
  /** Set once the outcome is known; later upstream bytes are read and dropped. */
  let settled = false;
  let dropped = 0;

  /** Calls `then(delivered)` when the write is done: at once, or after 'drain' or 'close'. */
  const after = (sent: boolean | Promise<boolean>, then: (delivered: boolean) => void): void => {
    if (typeof sent === 'boolean') { then(sent); return; }
    controller?.pause();
    void sent.then(then);
  };
  /** The client has everything: end its stream, let the connection go back to the pool, account. */
  const finish = (): void => {
    res.end();
    // Whatever the provider still sends after its last event is read and dropped (see data), so
    // the pooled connection can be reused.
    controller?.resume();
    const failed = relay.failed();
    if (failed) tracker.fail(502, failed.code, failed.message, relay.usage());
    else tracker.finish(200, relay.usage(), relay.model() ?? model);
    done();
  };
  const clientGone = (): void => {
    settled = true;
    controller?.abort(new Error('client closed the connection'));
    tracker.fail(499, 'client_closed', 'client closed the connection', relay.usage());
    done();
  };
  const afterChunk = (delivered: boolean): void => {
    if (settled) return;
    if (!delivered) clientGone();
    else controller?.resume();
  };

  const onData = (chunk: Buffer): void => {
    let sent: boolean | Promise<boolean> = true;
    let completed: boolean;
    try {
      const text = relay.push(chunk);
      completed = relay.completed();
      if (text) {
        // The stream's last text is followed by res.end(), which sends both together.
        sent = write(res, text, !completed);
        tracker.wrote(text.length, outputTokens);
      }
    } catch (err) { onError(err, false); return; }
    if (completed) { settled = true; after(sent, finish); } else after(sent, afterChunk);
  };
  const onEnd = (): void => {
    if (res.destroyed) { clientGone(); return; }
    let sent: boolean | Promise<boolean> = true;
    try {
      const tail = relay.end();
      if (tail) { sent = write(res, tail); tracker.wrote(tail.length); }
    } catch (err) { onError(err, false); return; }
    settled = true;
    after(sent, finish);
  };
  /**
   * Upstream broke off the stream (`fromUpstream`), or translating threw (a gateway bug): one error
   * event, then the end.
   */
  const onError = (err: unknown, fromUpstream: boolean): void => {
    if (res.destroyed) { clientGone(); return; }
    settled = true;
    controller?.abort(err instanceof Error ? err : new Error(String(err))); // no-op once upstream has failed
    const ge = fromUpstream ? ctx.upstreams.failure(provider, err, 'stream')
      : new GatewayError('internal_error', `internal gateway error while translating the ${provider} stream`);
    const frame = relay.errorFrame(ge);
    capture?.wrote(frame);
    after(write(res, frame), () => {
      res.end();
      tracker.fail(ge.status, ge.code, ge.message, relay.usage());
      done();
    });
  };

  return {
    data(c, chunk) {
      controller = c;
      if (!settled) { onData(chunk); return; }
      dropped += chunk.length;
      // A provider that keeps talking after its last event gets its connection closed.
      if (dropped > DUMP_LIMIT) c.abort(new Error('the provider kept sending after its last event'));
    },
    end() { if (!settled) onEnd(); },
    error(err, gone) {
      if (settled) return;
      if (gone) clientGone(); else onError(err, true);
    },
  };
}
