// POST /v1/chat/completions: parse and validate the OpenAI-format request, route it by model,
// translate it for the provider, and translate the answer back — streams event by event.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { resolveModel } from '../providers/models.js';
import { fromOpenAIError } from '../providers/openai/errors.js';
import { toOpenAIRequest } from '../providers/openai/request.js';
import { createOpenAIStreamFilter, type OpenAIStreamFilter } from '../providers/openai/stream.js';
import { translatorFor } from '../providers/index.js';
import {
  TranslationError, type ChatCompletionRequest, type OpenAIErrorBody, type OpenAIUsage, type ProviderId, type SseEvent, type StreamOutput, type StreamTranslator, type TranslateContext,
} from '../providers/types.js';
import { validateChatRequest } from '../providers/validate.js';
import { checkModelAllowed, extractKey, KEY_PLACEMENTS } from './auth.js';
import type { BodyCapture } from './body-log.js';
import type { DaemonContext } from './context.js';
import { GatewayError } from './errors.js';
import type { TokenUsage } from './events.js';
import { readBody, write } from './http-util.js';
import { createChunkWriter, SseParser, sseData, SSE_DONE } from './sse.js';
import { RequestTracker, type RequestFacts } from './tracker.js';
import { gatewayCallHeaders, upstreamFailure } from './upstream.js';

export { handleModels } from './models-list.js';


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

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}, capture?: BodyCapture): number {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
  capture?.wrote(text);
  return text.length;
}

function asGatewayError(err: unknown): unknown {
  if (err instanceof TranslationError) {
    return new GatewayError(err.code === 'model_not_found' ? 'model_not_found' : 'invalid_request', err.message, err.param);
  }
  return err;
}

export async function handleUnified(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, facts: RequestFacts): Promise<void> {
  const record = ctx.keys.authenticate(extractKey(req, null, KEY_PLACEMENTS.unified));
  facts.key = { id: record.id, name: record.name };
  const raw = await readBody(req, ctx.settings.bodyLimitBytes);
  let parsed: unknown;
  try { parsed = JSON.parse(raw.toString('utf8')); } catch (e) {
    throw new GatewayError('invalid_request', `request body is not valid JSON: ${(e as Error).message}`, 'body');
  }
  let body: ChatCompletionRequest;
  let route;
  try {
    body = validateChatRequest(parsed);
    route = resolveModel(body.model, ctx.settings.aliases);
  } catch (e) { throw asGatewayError(e); }
  facts.provider = route.provider;
  facts.model = route.model;
  checkModelAllowed(record, body.model);
  const providerKey = ctx.providerKeys.cached(route.provider) ?? await ctx.providerKeys.require(route.provider);
  const stream = body.stream === true;

  const tctx: TranslateContext = {
    model: route.model,
    created: ctx.now(),
    fallbackId: `chatcmpl-${randomBytes(12).toString('hex')}`,
    includeUsage: stream && body.stream_options?.include_usage === true,
  };
  const translator = route.provider === 'openai' ? null : await translatorFor(route.provider);
  let call;
  let clientWantsUsage = tctx.includeUsage;
  try {
    if (translator) call = translator.toRequest(body, tctx);
    else { const c = toOpenAIRequest(body, route.model); call = c; clientWantsUsage = c.clientWantsUsage; }
  } catch (e) { throw asGatewayError(e); }

  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'unified', provider: route.provider, model: route.model,
    method: 'POST', path: '/v1/chat/completions', stream, requestBytes: raw.length, headers: req.headers,
  });
  facts.tracked = true;
  const capture = ctx.bodyLog?.begin(tracker, raw);
  const abort = new AbortController();
  res.on('close', () => { if (!res.writableFinished) abort.abort(); });

  let upstream;
  try {
    upstream = await ctx.upstreams.request(route.provider, {
      method: 'POST', path: call.path, body: JSON.stringify(call.body),
      headers: gatewayCallHeaders(route.provider, providerKey, { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...call.headers }), signal: abort.signal,
    });
  } catch (err) {
    if (abort.signal.aborted) { tracker.fail(499, 'client_closed', 'client closed the connection'); return; }
    const ge = upstreamFailure(route.provider, ctx.upstreams.origins[route.provider], err);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }

  const status = upstream.statusCode;
  if (status >= 400) {
    const text = await upstream.body.text().catch(() => '');
    const mapped = translator ? translator.fromError(status, text) : fromOpenAIError(status, text);
    const extra: Record<string, string> = {};
    const retryAfter = upstream.headers['retry-after'];
    if (typeof retryAfter === 'string') extra['retry-after'] = retryAfter;
    sendJson(res, mapped.status, mapped.body, extra, capture);
    tracker.fail(mapped.status, mapped.body.error.code ?? mapped.body.error.type, mapped.body.error.message);
    return;
  }

  if (!stream) {
    const text = await upstream.body.text();
    let json: unknown;
    try { json = JSON.parse(text); } catch {
      const ge = new GatewayError('upstream_unreachable', `${route.provider} sent a response that is not JSON`);
      tracker.fail(ge.status, ge.code, ge.message);
      throw ge;
    }
    if (translator) {
      const out = translator.fromResponse(json, tctx);
      tracker.wrote(sendJson(res, 200, out, {}, capture));
      tracker.finish(200, usageToTokens(out.usage), out.model);
    } else {
      // OpenAI: the answer is already in the unified format; send its bytes unchanged.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      capture?.wrote(text);
      tracker.wrote(text.length);
      const j = json as { usage?: OpenAIUsage; model?: string };
      tracker.finish(200, usageToTokens(j.usage), j.model ?? null);
    }
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  await relayStream(ctx, route.provider, upstream, res, abort, tracker, translator
    ? createTranslatedRelay(translator.createStreamTranslator(tctx))
    : createOpenAIRelay(createOpenAIStreamFilter(clientWantsUsage)), route.model, capture);
}

/**
 * Turns upstream bytes into the text the client gets, synchronously (exported for
 * bench/stream-translate.ts, which measures exactly this per-chunk work).
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

let flushedThisTick = false;
const endTick = (): void => { flushedThisTick = false; };

/**
 * `write`, sending the text at once when it is the first write of this tick. res.write alone holds
 * what it writes (a socket cork) until the next tick, and from undici's 'data' event that comes
 * only after undici has unwound its parser: a stream's chunk, a few ms after the last one, would
 * wait for that. Writes that follow in the same tick (a busy daemon, several chunks read at once)
 * are left to res.write's cork, which sends them together, so load makes no more syscalls.
 */
function writeNow(res: ServerResponse, text: string): boolean | Promise<boolean> {
  if (flushedThisTick) return write(res, text);
  flushedThisTick = true;
  process.nextTick(endTick);
  const socket = res.socket;
  socket?.cork(); // res.write sees a corked socket and leaves the uncork to us
  const sent = write(res, text);
  socket?.uncork();
  return sent;
}

/**
 * Relays an upstream SSE response to the client: one write per upstream network chunk, made in
 * the body's 'data' handler and sent at once (writeNow), so nothing (no await, no microtask hop,
 * no accounting) sits between the bytes arriving and their write to the client's socket. While
 * that socket is full, upstream is paused until 'drain'.
 * A client that leaves aborts the upstream request (handleUnified's controller), which ends the
 * body with an error; that, like the client closing during a drain wait, ends here as a 499.
 */
function relayStream(
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
          sent = completed ? write(res, text) : writeNow(res, text);
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
