// The streaming half of POST /v1/chat/completions: upstream SSE bytes → the client's
// `chat.completion.chunk` frames, translated and written chunk by chunk as they arrive, with the
// request's accounting at the end. Every microsecond per chunk shows in the client's latency.
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { OpenAIStreamFilter } from '../providers/openai/stream.js';
import type { OpenAIErrorBody, OpenAIUsage, ProviderId, SseEvent, StreamOutput, StreamTranslator } from '../providers/types.js';
import type { BodyCapture } from './body-log.js';
import type { DaemonContext } from './context.js';
import type { TokenUsage } from './events.js';
import { write } from './http-util.js';
import { createChunkWriter, SseParser, sseData, SSE_DONE } from './sse.js';
import type { RequestTracker } from './tracker.js';
import { upstreamFailure } from './upstream.js';

/** OpenAI usage → the tracker's token counts (the JSON answers in unified.ts use it too). */
export function usageToTokens(u: OpenAIUsage | undefined): TokenUsage {
  if (!u) return {};
  return {
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    cachedTokens: u.prompt_tokens_details?.cached_tokens,
    cacheWriteTokens: u.prompt_tokens_details?.cache_write_tokens,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens,
  };
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
  /** The client has everything: `[DONE]` or the one error event has been produced. */
  completed(): boolean;
  failed(): OpenAIErrorBody | undefined;
  usage(): OpenAIUsage | undefined;
  outputTokens(): number;
}

export function createTranslatedRelay(st: StreamTranslator): StreamRelay {
  const parser = new SseParser();
  const frame = createChunkWriter();
  let failed: OpenAIErrorBody | undefined;
  let completed = false;
  let contentChunks = 0;
  /** Appends the outputs' frames to `text`; stops at an error, which is the stream's last frame. */
  const append = (outputs: StreamOutput[], text: string): string => {
    for (let i = 0; i < outputs.length; i++) {
      const o = outputs[i]!;
      if (o.kind === 'error') { failed = o.error; return text + sseData(o.error); }
      text += frame(o.chunk);
      if (o.chunk.choices[0]?.delta.content) contentChunks++;
    }
    return text;
  };
  const next = (events: SseEvent[], eof: boolean): string => {
    let text = '';
    for (let i = 0; i < events.length && failed === undefined; i++) text = append(st.push(events[i]!), text);
    if (failed !== undefined) { completed = true; return text; }
    // Anthropic says when it is done (message_stop): close now, not when the socket closes.
    if (!eof && !st.complete()) return text;
    text = append(st.end(), text);
    completed = true;
    return failed === undefined ? text + SSE_DONE : text;
  };
  return {
    push: (chunk) => next(parser.push(chunk), false),
    end: () => next(parser.end(), true),
    completed: () => completed,
    failed: () => failed,
    usage: () => st.usage(),
    outputTokens: () => st.usage()?.completion_tokens ?? contentChunks,
  };
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
    failed: () => failed,
    usage: () => filter.usage(),
    outputTokens: () => filter.usage()?.completion_tokens ?? chunks,
  };
}

/**
 * Relays an upstream SSE response to the client: one write per upstream network chunk, made in
 * the body's 'data' handler and sent at once (write with `now`, see http-util's writeNow), so nothing (no await, no microtask hop,
 * no accounting) sits between the bytes arriving and their write to the client's socket. While
 * that socket is full, upstream is paused until 'drain'.
 * A client that leaves aborts the upstream request (handleUnified's controller), which ends the
 * body with an error; that, like the client closing during a drain wait, ends here as a 499.
 */
export function relayStream(
  ctx: DaemonContext, provider: ProviderId, upstream: Dispatcher.ResponseData, res: ServerResponse,
  abort: AbortController, tracker: RequestTracker, plainRelay: StreamRelay, model: string, capture?: BodyCapture,
): Promise<void> {
  const relay = capture ? capturing(plainRelay, capture) : plainRelay;
  const body = upstream.body;
  const outputTokens = (): number => relay.outputTokens();
  return new Promise<void>((resolve) => {
    /** Set once the outcome is known; later body events are ignored. */
    let settled = false;
    const settle = (): void => {
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd); // 'error' and 'close' stay handled: destroying the body emits them
    };

    /** Calls `then(delivered)` when the write is done: at once, or after 'drain' or 'close'. */
    const after = (sent: boolean | Promise<boolean>, then: (delivered: boolean) => void): void => {
      if (typeof sent === 'boolean') { then(sent); return; }
      body.pause();
      void sent.then(then);
    };
    /** The client has everything: end its stream, let the connection go back to the pool, account. */
    const finish = (): void => {
      res.end();
      // Whatever the provider still sends after its last event is read and dropped, so the pooled
      // connection can be reused; a provider that keeps talking gets its connection closed.
      body.dump({ limit: 64 * 1024 }).catch(() => {});
      const failed = relay.failed();
      if (failed) tracker.fail(502, failed.error.code ?? failed.error.type, failed.error.message, usageToTokens(relay.usage()));
      else tracker.finish(200, usageToTokens(relay.usage()), model);
      resolve();
    };
    const clientGone = (): void => {
      settle();
      body.destroy();
      tracker.fail(499, 'client_closed', 'client closed the connection', usageToTokens(relay.usage()));
      resolve();
    };

    const afterChunk = (delivered: boolean): void => {
      if (settled) return;
      if (!delivered) clientGone();
      else if (body.isPaused()) body.resume();
    };

    function onData(chunk: Buffer): void {
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
      } catch (err) { onError(err); return; }
      if (completed) { settle(); after(sent, finish); } else after(sent, afterChunk);
    }
    function onEnd(): void {
      if (abort.signal.aborted || res.destroyed) { clientGone(); return; }
      let sent: boolean | Promise<boolean> = true;
      try {
        const tail = relay.end();
        if (tail) { sent = write(res, tail); tracker.wrote(tail.length); }
      } catch (err) { onError(err); return; }
      settle();
      after(sent, finish);
    }
    function onError(err: unknown): void {
      if (settled) return;
      if (abort.signal.aborted || res.destroyed) { clientGone(); return; }
      settle();
      body.destroy();
      const ge = upstreamFailure(provider, ctx.upstreams.origins[provider], err);
      const error: OpenAIErrorBody = { error: { message: ge.message, type: 'server_error', param: null, code: ge.code } };
      const frame = sseData(error);
      capture?.wrote(frame);
      after(write(res, frame), () => {
        res.end();
        tracker.fail(ge.status, ge.code, ge.message, usageToTokens(relay.usage()));
        resolve();
      });
    }
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    // Closed with neither 'end' nor 'error' (what for-await reported as a premature close).
    body.on('close', () => { if (!settled) onError(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })); });
  });
}
