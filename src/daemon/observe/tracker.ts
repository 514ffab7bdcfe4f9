// Follows one request through its life and publishes its events (started, first byte, progress,
// finished/failed). Counters live here too, so `gateway status` and drains see the same numbers.
import { randomBytes } from 'node:crypto';
import type { ClientProtocol, ProtocolId, Target } from '../../providers/ir/protocol.js';
import type { Response } from '../../providers/ir/types.js';
import type { ProviderId } from '../../providers/types.js';
import type { LimitKind } from '../limits/limits.js';
import type { BodyCapture } from './body-log.js';
import { sessionTag } from './session-tag.js';
import { EventBus, maskHeaders, PROGRESS_INTERVAL_MS, type AttemptTiming, type RequestFailed, type RequestFinished, type RequestMode, type RequestStarted, type TokenUsage } from './events.js';

export class Stats {
  requestsServed = 0;
  inFlight = 0;
  readonly startedAt = Date.now();
  private idleWaiters: Array<() => void> = [];

  begin(): void { this.inFlight++; }
  end(): void {
    this.inFlight--;
    this.requestsServed++;
    if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
  }
  /** Resolves when no request is in flight, or after `ms`. */
  idle(ms: number): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.idleWaiters.push(() => { clearTimeout(t); resolve(); });
    });
  }
}

type RawHeaders = Record<string, string | string[] | undefined>;

/**
 * A `started` event whose `headers` are masked only when a subscriber reads them (the monitor's
 * details view, the events stream's JSON): the usage recorder and the log never do, so most
 * requests never pay for masking. The raw headers sit in a private field: never enumerable,
 * never serialized. (A class, because Object.defineProperty per request costs more than masking.)
 */
class StartedEvent implements RequestStarted {
  readonly type = 'started' as const;
  readonly id: string; readonly time: number; readonly keyId: string; readonly keyName: string;
  readonly mode: RequestMode; readonly provider: ProviderId | null; readonly model: string | null;
  readonly method: string; readonly path: string; readonly stream: boolean; readonly requestBytes: number;
  readonly session: string | undefined;
  readonly client: string | undefined;
  #raw: RawHeaders | undefined;
  #masked: Record<string, string> | undefined;

  /** `info.session`: as the client named it; the event carries its tag. */
  constructor(id: string, time: number, info: Omit<RequestStarted, 'type' | 'id' | 'time' | 'headers'>, raw: RawHeaders | undefined) {
    this.id = id; this.time = time; this.keyId = info.keyId; this.keyName = info.keyName; this.mode = info.mode;
    this.provider = info.provider; this.model = info.model; this.method = info.method; this.path = info.path;
    this.stream = info.stream; this.requestBytes = info.requestBytes; this.session = sessionTag(info.session);
    this.client = info.client;
    this.#raw = raw;
  }

  get headers(): Record<string, string> | undefined {
    if (this.#masked === undefined && this.#raw) { this.#masked = maskHeaders(this.#raw); this.#raw = undefined; }
    return this.#masked;
  }

  // An explicit literal (one fixed shape) serializes faster than a spread of the instance.
  toJSON(): RequestStarted {
    return {
      type: 'started', id: this.id, time: this.time, keyId: this.keyId, keyName: this.keyName, mode: this.mode,
      provider: this.provider, model: this.model, method: this.method, path: this.path, stream: this.stream,
      requestBytes: this.requestBytes, headers: this.headers, session: this.session, client: this.client,
    };
  }
}

let seq = 0;
// 48 random bits per process: in team mode request ids key the shared store's usage rows and
// limit claims across every daemon and restart, where 24 bits would meet a twin within a few
// thousand runs.
const runId = randomBytes(6).toString('hex');

export interface TrackStart {
  keyId: string;
  keyName: string;
  mode: RequestMode;
  provider: ProviderId;
  model: string | null;
  method: string;
  path: string;
  stream: boolean;
  requestBytes: number;
  /** The client's raw request headers; masked (maskHeaders) only when the bus has subscribers. */
  headers?: Record<string, string | string[] | undefined>;
  /** The session the client named (routing/sessions.ts sessionOf), as it is: tagged (session-tag.ts) when published. */
  session?: string;
  /** The model name as the client sent it (an alias, a name with fallbacks), when a door read one. */
  asked?: string;
  /** The client's address (http/peer.ts peerOf). */
  client?: string;
}

/** How a request ended, for what settles it (a key's limits): the target that served it, what it used. */
export interface TrackEnd {
  status: number;
  /** The failure's code; absent when it finished. */
  code?: string;
  usage: TokenUsage;
  /** The model the provider says it served, when known. */
  model: string | null;
  /** The provider and model that served it (a fallback's), as routed. */
  provider: ProviderId;
  requested: string | null;
  outputBytes: number;
}

/**
 * A request's trace span while traces are exported (telemetry/tracer.ts); the tracker tells it
 * each call to a provider and the end. Without an exporter there is none: nothing is created.
 */
export interface TrackerSpan {
  attemptStarted(target: string, keyLabel: string): void;
  attemptEnded(outcome: string): void;
  /** The W3C `traceparent` the provider call about to go out carries (the open attempt's context). */
  traceparent(): string;
  /**
   * Where the answer the client gets is kept, so the span can read its finish reasons, id and
   * (opt-in) content at the end: `logged` when the body log keeps it already; returns the capture
   * the request path writes to (the span's own when there was none).
   */
  reads(source: AnswerSource, logged: BodyCapture | undefined): BodyCapture | undefined;
  /**
   * The whole answer as the pipeline has it (a translated one, with the id the client was shown):
   * the span takes its finish reasons, id and (opt-in) output from here instead of its bytes.
   */
  answered(answer: Response, id: string | undefined): void;
  end(ev: RequestFinished | RequestFailed): void;
}

/** A door's request and answer, as its span reads them at the end (telemetry/answer.ts). */
export interface AnswerSource {
  /** The protocol the client speaks (its answer is in it). */
  readonly protocol: ProtocolId;
  readonly request: Buffer;
  /** The target that answered (read when the request ends: a fallback moves it). */
  readonly target: () => Target;
  readonly client: () => Promise<ClientProtocol>;
}

/** Opens a request's span, or gives none (traces off, or not sampled). */
export type StartSpan = (id: string, info: TrackStart) => TrackerSpan | undefined;

export class RequestTracker {
  readonly id = `req_${runId}${(++seq).toString(36)}`;
  private readonly t0 = performance.now();
  private ttfb: number | null = null;
  private chunks = 0;
  private bytes = 0;
  private lastProgress = 0;
  private ended = false;
  private streaming: boolean | undefined;
  private readonly announcedStream: boolean;
  private onDone: (() => void) | undefined;

  /** The provider and model the request started on (a fallback may serve it elsewhere). */
  readonly startedProvider: ProviderId;
  readonly startedModel: string | null;

  /** The request's trace span, when traces are exported. */
  readonly span: TrackerSpan | undefined;
  /** The calls to providers so far (attemptStarted/attemptEnded); undefined until the first. */
  private calls: AttemptTiming[] | undefined;
  private callOpen = false;

  constructor(private bus: EventBus, private stats: Stats, info: TrackStart, startSpan?: StartSpan) {
    stats.begin();
    this.startedProvider = info.provider;
    this.startedModel = info.model;
    this.announcedStream = info.stream;
    this.span = startSpan?.(this.id, info);
    if (bus.size > 0) {
      bus.publish(new StartedEvent(this.id, Date.now(), info, info.headers));
    }
  }

  /** A call to a provider starts (an attempt on `target`, `provider/model`). */
  attemptStarted(target: string, keyLabel: string): void {
    (this.calls ??= []).push({ target, keyLabel, startMs: this.elapsedMs, endMs: -1, outcome: '' });
    this.callOpen = true;
    this.span?.attemptStarted(target, keyLabel);
  }

  /** The call ended without an answer for the client (a retry, another key or target may follow). */
  attemptEnded(outcome: string): void {
    if (!this.callOpen) return;
    this.close(outcome);
    this.span?.attemptEnded(outcome);
  }

  private close(outcome: string): void {
    const last = this.calls![this.calls!.length - 1]!;
    last.endMs = this.elapsedMs;
    last.outcome = outcome;
    this.callOpen = false;
  }

  /** The `traceparent` for the provider call going out now, when traces are exported. */
  traceparent(): string | undefined {
    return this.span?.traceparent();
  }

  get elapsedMs(): number { return performance.now() - this.t0; }

  /** The request's finished or failed event is out: its record is complete. */
  get done(): boolean { return this.ended; }

  private served: { provider: string; model: string } | undefined;
  private route: string | undefined;
  private waitedMs = 0;
  private keyLabel: string | undefined;

  /** The request moved to another target (a fallback), the attempts so far and the time waited between them: told with its end. */
  routed(served: { provider: string; model: string } | undefined, route: string, waitedMs: number, keyLabel?: string): void {
    this.keyLabel = keyLabel;
    this.served = served;
    this.route = route;
    this.waitedMs = waitedMs;
  }

  /** Runs once, right after the finished/failed event (the body log stores the request's bodies then). */
  whenDone(fn: () => void): void { this.onDone = fn; }

  private settle: ((end: TrackEnd) => void) | undefined;
  /** Runs once with how the request ended, before its end event (a key's limits settle there). */
  onEnd(fn: (end: TrackEnd) => void): void { this.settle = fn; }

  private ending(status: number, usage: TokenUsage, model: string | null, code?: string): void {
    this.settle!({
      status, usage, model, outputBytes: this.bytes, ...(code === undefined ? {} : { code }),
      provider: (this.served?.provider ?? this.startedProvider) as ProviderId, requested: this.served?.model ?? this.startedModel,
    });
  }

  /** Records what the response says about streaming; published with the first byte. */
  responseIsStream(stream: boolean): void { this.streaming = stream; }

  /** Call for each chunk written to the client. */
  wrote(bytes: number, outputTokens?: () => number | undefined): void {
    this.chunks++;
    this.bytes += bytes;
    if (this.ttfb === null) {
      this.ttfb = this.elapsedMs;
      // A whole answer's first byte is its end too (its finished event carries the TTFB); only a
      // stream, or an answer that turned out to be one, is worth an event of its own.
      if (this.bus.size > 0 && (this.streaming === true || this.announcedStream)) {
        this.bus.publish({ type: 'first_byte', id: this.id, time: Date.now(), ttfbMs: this.ttfb, ...(this.streaming === undefined ? {} : { stream: this.streaming }) });
      }
      return;
    }
    if (this.bus.size === 0) return;
    const now = performance.now();
    if (now - this.lastProgress < PROGRESS_INTERVAL_MS) return;
    this.lastProgress = now;
    this.bus.publish({ type: 'progress', id: this.id, time: Date.now(), chunks: this.chunks, outputBytes: this.bytes, outputTokens: outputTokens?.() });
  }

  finish(status: number, usage: TokenUsage = {}, model: string | null = null): void {
    if (this.ended) return;
    this.ended = true;
    this.stats.end();
    if (this.settle) this.ending(status, usage, model);
    if (this.callOpen) this.close(String(status));
    if (this.bus.size > 0 || this.span) {
      const ev = this.withRouting<RequestFinished>({ type: 'finished', id: this.id, time: Date.now(), status, durationMs: this.elapsedMs, ttfbMs: this.ttfb, outputBytes: this.bytes, usage, model, chunks: this.chunks });
      if (this.calls) ev.attempts = this.calls;
      this.bus.publish(ev);
      this.span?.end(ev);
    }
    this.onDone?.();
  }

  /** The end event with its routing fields, only those with something to say (set, not spread: this runs per request). */
  private withRouting<E extends RequestFinished | RequestFailed>(ev: E): E {
    if (this.route === undefined) return ev;
    ev.route = this.route;
    if (this.served) ev.served = this.served;
    if (this.waitedMs > 0) ev.waitedMs = Math.round(this.waitedMs);
    if (this.keyLabel) ev.keyLabel = this.keyLabel;
    return ev;
  }

  /** `limit`: the key's own limit refused the request (its 429). */
  fail(status: number, code: string, message: string, usage: TokenUsage = {}, limit?: LimitKind): void {
    if (this.ended) return;
    this.ended = true;
    this.stats.end();
    if (this.settle) this.ending(status, usage, null, code);
    if (this.callOpen) this.close(String(status));
    if (this.bus.size > 0 || this.span) {
      const ev = this.withRouting<RequestFailed>({ type: 'failed', id: this.id, time: Date.now(), status, durationMs: this.elapsedMs, ttfbMs: this.ttfb, code, message, usage });
      if (limit) ev.limit = limit;
      if (this.calls) ev.attempts = this.calls;
      this.bus.publish(ev);
      this.span?.end(ev);
    }
    this.onDone?.();
  }
}

/**
 * What the request path has learned about a request before its tracker exists (who, which
 * provider, which model), so a request refused early (bad key, unknown model, no provider key)
 * still shows up in the monitor as a started + failed pair.
 */
export interface RequestFacts {
  readonly t0: number;
  mode: RequestMode;
  key?: { id: string; name: string };
  provider: ProviderId | null;
  model: string | null;
  /** Set once a RequestTracker follows the request: it reports its own end. */
  tracked: boolean;
}

export function newRequestFacts(mode: RequestMode, provider: ProviderId | null): RequestFacts {
  return { t0: performance.now(), mode, provider, model: null, tracked: false };
}

export function publishRefusal(
  bus: EventBus, stats: Stats, facts: RequestFacts,
  req: { method: string; path: string; headers: Record<string, string | string[] | undefined>; client?: string },
  err: { status: number; code: string; message: string },
): void {
  stats.begin();
  stats.end();
  if (bus.size === 0) return;
  const id = `req_${runId}${(++seq).toString(36)}`;
  const now = Date.now();
  bus.publish(new StartedEvent(id, now, {
    keyId: facts.key?.id ?? '', keyName: facts.key?.name ?? '(no valid key)',
    mode: facts.mode, provider: facts.provider, model: facts.model, method: req.method, path: req.path,
    stream: false, requestBytes: 0, client: req.client,
  }, req.headers));
  bus.publish({ type: 'failed', id, time: now, status: err.status, durationMs: performance.now() - facts.t0, ttfbMs: null, code: err.code, message: err.message, usage: {}, refused: true });
}
