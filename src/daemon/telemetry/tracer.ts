// Traces over OTLP: each request a span named as the GenAI conventions name it
// (`{gen_ai.operation.name} {gen_ai.request.model}`, kind SERVER: the gateway serves it), each
// call to a provider a CLIENT child span, an incoming W3C `traceparent` its parent, and the call
// going out carries the open attempt's context onward. Made only when an endpoint is configured:
// without one, ctx.startSpan is unset and no span exists.
//
// The request thread only records what a span is (ids, times, kind, name, attribute values,
// status, parent) in a plain object; the span export (span-worker.ts) makes the records
// OpenTelemetry spans and exports them. Serializing to OTLP and sending is most of what a traced
// request costs: when the daemon may use a second CPU the export runs in a worker thread, the
// records handed over in batches, so none of it runs where requests are served. The ids are made
// here, since the call going upstream carries them. Nothing here waits on the worker or the collector.
import { randomFillSync } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ROOT_CONTEXT, SpanKind, defaultTextMapGetter, isSpanContextValid, trace, type Attributes, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ClientProtocol, ProviderProtocol } from '../../providers/ir/protocol.js';
import type { Response } from '../../providers/ir/types.js';
import { BodyCapture, redactCredentials } from '../observe/body-log.js';
import type { RequestFailed, RequestFinished } from '../observe/events.js';
import type { AnswerSource, StartSpan, TrackerSpan, TrackStart } from '../observe/tracker.js';
import { VERSION } from '../../version.js';
import { factsOf, inputOf, parseInput, readAnswer, type AnswerFacts } from './answer.js';
import { loadedProviderSide, providerSide } from '../../providers/protocols/provider-sides.js';
import { GW } from './metrics.js';
import { ATTR, doorName, operationName, providerName, SCHEMA_URL } from './semconv.js';
import type { TelemetrySettings } from './settings.js';
import type { FromWorker, SpanRecord, SpanValues, ToWorker, WorkerSetup } from './span-record.js';
import { startSpanExport } from './span-worker.js';

/** The answer bytes a span keeps to read it at the end; a longer answer gets no finish reasons or content. */
const ANSWER_CAP = 1024 * 1024;
/** The worker's batch queue, in spans; twice that may be on their way to it before more are dropped. */
const QUEUE = 2048;
/**
 * Records are handed to the worker when this many are waiting, or HANDOFF_MS after the first:
 * soon, so that a record waiting at a low sampling ratio dies young in the request thread's heap
 * rather than outliving its young-generation collections.
 */
const HANDOFF_BATCH = 512;
const HANDOFF_MS = 20;

const propagator = new W3CTraceContextPropagator();

/**
 * Every attribute a span may carry. A record holds its attributes' values in this order
 * (undefined: not set): an array of values crosses to the worker at about half the cost of an
 * object keyed by these names. The worker gets the list once, when it starts.
 */
const SPAN_ATTRIBUTES = [
  ATTR.operationName, ATTR.providerName, ATTR.requestStream, GW.door, GW.provider, GW.key, ATTR.requestModel, 'gateway.model.alias',
  'gateway.provider.key.label', ATTR.httpStatus, ATTR.errorType, ATTR.responseModel, ATTR.inputTokens, ATTR.outputTokens,
  ATTR.cacheReadTokens, ATTR.cacheWriteTokens, ATTR.reasoningTokens, ATTR.timeToFirstChunk, 'gateway.route', 'gateway.waited_ms',
  ATTR.responseId, ATTR.finishReasons, ATTR.inputMessages, ATTR.systemInstructions, ATTR.outputMessages,
] as const;
/** An attribute's place in a record's values. */
const A = Object.fromEntries(SPAN_ATTRIBUTES.map((name, i) => [name, i])) as { readonly [K in (typeof SPAN_ATTRIBUTES)[number]]: number };
const noValues = (): SpanValues => new Array<SpanValues[number]>(SPAN_ATTRIBUTES.length).fill(undefined);

interface TracingDeps {
  settings: TelemetrySettings & { otlp: NonNullable<TelemetrySettings['otlp']> };
  /** The resource's attributes (service name and version). */
  resource: Attributes;
  /** The provider keys held now: redacted from content before it leaves. */
  secrets: () => readonly string[];
  dropped: (n: number) => void;
  batchDelayMs: number;
  log: (line: string) => void;
}

export interface Tracing {
  startSpan: StartSpan;
  /** Exports what is left; ends the worker. */
  close(): Promise<void>;
}

/** The worker's file beside this one: `.js` in dist, `.ts` when the sources run as they are (vitest). */
const workerUrl = () => new URL(`./span-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** Where finished span records go: the span worker, or the export in this thread. */
interface SpanSink {
  add(r: SpanRecord): void;
  close(): Promise<void>;
}

export async function createTracing(d: TracingDeps): Promise<Tracing> {
  const setup: WorkerSetup = {
    protocol: d.settings.otlp.protocol, url: `${d.settings.otlp.endpoint}/v1/traces`, resource: d.resource, attributes: SPAN_ATTRIBUTES,
    scope: { name: 'model-gateway', version: VERSION, schemaUrl: SCHEMA_URL }, batchDelayMs: d.batchDelayMs, queue: QUEUE,
  };
  // A worker runs beside the request thread only when the daemon may use a second CPU: on one, its
  // work shares the same core, and handing the records over (copying them, waking the thread) only
  // adds to it.
  const thread = d.settings.otlp.exportThread ?? (availableParallelism() > 1 ? 'worker' : 'request');
  const sink = thread === 'worker'
    ? await startWorker(setup, d.dropped, d.log).catch((e: unknown) => {
      d.log(`telemetry: the span export thread did not start (${(e as Error).message}); exporting from the request thread`);
      return inThread(setup, d.dropped);
    })
    : await inThread(setup, d.dropped);
  const { sampleRatio: ratio, ignoreCaller } = d.settings.otlp;
  const pending = new Set<Promise<void>>();
  const content = d.settings.captureContent;
  return {
    // A caller's sampling decision is followed (but by the samplers that decide alone); a request
    // of its own is traced at the ratio asked, and one of a caller's trace by its trace id, as
    // every service sampling that trace decides. A request left out gets no span at all.
    startSpan: (_id, info) => {
      const caller = info.headers?.traceparent === undefined ? undefined : callerContext(info.headers);
      const traced = caller && !ignoreCaller ? (caller.traceFlags & 1) === 1
        : ratio === undefined || ratio >= 1 || (caller ? idShare(caller.traceId) < ratio : Math.random() < ratio);
      if (traced) return new RequestSpan(sink, info, content, d.secrets, pending, caller);
      return caller ? new UnsampledSpan(caller.traceId) : undefined;
    },
    async close() {
      await Promise.allSettled([...pending]);
      await sink.close();
    },
  };
}

/** The export in this thread: each record joins the batch queue as it ends. */
async function inThread(setup: WorkerSetup, dropped: (n: number) => void): Promise<SpanSink> {
  const exp = await startSpanExport(setup, dropped);
  return {
    add: (r) => { if (!exp.take(r)) dropped(1); },
    close: () => exp.close(),
  };
}

async function startWorker(setup: WorkerSetup, dropped: (n: number) => void, log: (line: string) => void): Promise<SpanSink> {
  const worker = new Worker(workerUrl(), { workerData: { ...setup, spanWorker: true } satisfies WorkerSetup });
  // The daemon's exit never waits on it; close() ends it.
  worker.unref();
  const outbox = new Outbox(worker, dropped, Math.min(HANDOFF_MS, setup.batchDelayMs));
  let closed!: () => void;
  const done = new Promise<void>((resolve) => { closed = resolve; });
  let ready = false;
  let closing = false;
  // After it started: spans from then on are dropped (counted), and the log says why once.
  const died = (why: string) => { if (ready && !closing) log(`telemetry: the span export thread stopped (${why}); spans are dropped until the daemon restarts`); ready = false; };
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'took') outbox.took(m.took, m.dropped);
      else if (m.type === 'ready') { ready = true; resolve(); }
      else if (m.type === 'failed') reject(new Error(`telemetry: the span exporter did not start: ${m.message}`));
      else closed();
    });
    // A worker that dies takes nothing more: what is handed to it from then on is counted as dropped.
    worker.on('error', (e) => { died(e.message); outbox.lost(); reject(e); closed(); });
    worker.on('exit', (code) => { died(`exit code ${code}`); outbox.lost(); reject(new Error('telemetry: the span worker exited')); closed(); });
  }).catch(async (e: unknown) => { await worker.terminate(); throw e; });
  return {
    add: (r) => outbox.add(r),
    async close() {
      closing = true;
      outbox.handOff();
      worker.postMessage({ type: 'close' } satisfies ToWorker);
      await done;
      await worker.terminate();
    },
  };
}

/** Where a trace id falls in [0, 1): its last 8 hex digits (random in W3C trace ids) as a fraction. */
const idShare = (traceId: string): number => parseInt(traceId.slice(-8), 16) / 2 ** 32;

/** The caller's span context from its W3C traceparent (and tracestate), when valid. */
function callerContext(headers: TrackStart['headers']): SpanContext | undefined {
  const c = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));
  return c && isSpanContextValid(c) ? c : undefined;
}

/**
 * The records on their way to the worker: handed over in batches, and dropped (counted) while the
 * worker has more than twice its queue not yet taken, so a worker that falls behind never grows
 * the daemon's memory.
 */
class Outbox {
  private records: SpanRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Handed over, not yet taken by the worker. */
  private inFlight = 0;
  private dead = false;

  constructor(private readonly worker: Worker, private readonly dropped: (n: number) => void, private readonly delayMs: number) {}

  add(r: SpanRecord): void {
    if (this.dead || this.inFlight + this.records.length >= 2 * QUEUE) { this.dropped(1); return; }
    this.records.push(r);
    if (this.records.length >= HANDOFF_BATCH) this.handOff();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.handOff(), this.delayMs);
      this.timer.unref();
    }
  }

  handOff(): void {
    if (this.timer !== undefined) { clearTimeout(this.timer); this.timer = undefined; }
    const spans = this.records;
    if (spans.length === 0) return;
    this.records = [];
    this.inFlight += spans.length;
    this.worker.postMessage({ type: 'spans', spans } satisfies ToWorker);
  }

  took(n: number, dropped: number): void {
    this.inFlight -= n;
    if (dropped > 0) this.dropped(dropped);
  }

  /** The worker is gone: what it had not taken is lost. */
  lost(): void {
    if (this.dead) return;
    this.dead = true;
    const n = this.inFlight + this.records.length;
    this.inFlight = 0;
    this.records = [];
    if (n > 0) this.dropped(n);
  }
}

// Trace and span ids from a pool of random bytes, refilled 4 KB at a time.
const pool = Buffer.allocUnsafe(4096);
let poolAt = pool.length;
function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) { randomFillSync(pool); poolAt = 0; }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}
const newSpanId = () => randomHex(8);

/** Milliseconds since the epoch, to the microsecond. */
const now = () => performance.timeOrigin + performance.now();

/** A caller's trace it did not sample: nothing is recorded, and the call upstream says so (flags 00) under the caller's trace. */
class UnsampledSpan implements TrackerSpan {
  private readonly spanId = newSpanId();
  constructor(private readonly traceId: string) {}
  attemptStarted(): void {}
  attemptEnded(): void {}
  traceparent(): string { return `00-${this.traceId}-${this.spanId}-00`; }
  reads(_source: AnswerSource, logged: BodyCapture | undefined): BodyCapture | undefined { return logged; }
  answered(): void {}
  end(): void {}
}

/**
 * The span's own copy of the answer (when the body log keeps none): it stops copying once the
 * pipeline has handed the span the answer itself (`answered`), so a translated answer is never
 * copied or read back.
 */
class SpanCapture extends BodyCapture {
  off = false;
  override wrote(data: string | Buffer): void { if (!this.off) super.wrote(data); }
}

const record = (name: string, kind: SpanKind, traceId: string, parentId: string | undefined, remoteParent: boolean, traceState: string | undefined, values: SpanValues): SpanRecord => ({
  name, kind, traceId, spanId: newSpanId(), parentId, remoteParent, traceState, start: now(), end: 0, error: false, values,
});

class RequestSpan implements TrackerSpan {
  private readonly span: SpanRecord;
  private readonly op: string;
  private attempt: SpanRecord | undefined;
  private source: AnswerSource | undefined;
  private capture: BodyCapture | undefined;
  /** What the pipeline told of the answer (a translated whole answer), instead of reading it back. */
  private facts: AnswerFacts | undefined;

  constructor(
    private readonly sink: SpanSink, private readonly info: TrackStart, private readonly content: boolean,
    private readonly secrets: () => readonly string[], private readonly pending: Set<Promise<void>>, caller: SpanContext | undefined,
  ) {
    this.op = operationName(info.mode, info.path) ?? info.method.toLowerCase();
    const v = noValues();
    v[A[ATTR.operationName]] = this.op;
    v[A[ATTR.providerName]] = providerName(info.provider);
    v[A[ATTR.requestStream]] = info.stream;
    v[A[GW.door]] = doorName(info.mode);
    v[A[GW.provider]] = info.provider;
    v[A[GW.key]] = info.keyName;
    if (info.model) v[A[ATTR.requestModel]] = info.model;
    // The name the client sent, when it was not the model itself (an alias, a routed name).
    if (info.asked !== undefined && info.asked !== info.model && info.asked !== `${info.provider}/${info.model}`) v[A['gateway.model.alias']] = info.asked;
    const name = info.model ? `${this.op} ${info.model}` : this.op;
    this.span = caller
      ? record(name, SpanKind.SERVER, caller.traceId, caller.spanId, true, caller.traceState?.serialize() || undefined, v)
      : record(name, SpanKind.SERVER, randomHex(16), undefined, false, undefined, v);
  }

  attemptStarted(target: string, keyLabel: string): void {
    if (this.attempt) this.endAttempt(this.attempt, false);
    const slash = target.indexOf('/');
    const provider = target.slice(0, slash);
    const model = target.slice(slash + 1);
    const v = noValues();
    v[A[ATTR.operationName]] = this.op;
    v[A[ATTR.providerName]] = providerName(provider);
    v[A[ATTR.requestModel]] = model;
    v[A[GW.provider]] = provider;
    if (keyLabel) v[A['gateway.provider.key.label']] = keyLabel;
    const s = this.span;
    this.attempt = record(`${this.op} ${model}`, SpanKind.CLIENT, s.traceId, s.spanId, false, s.traceState, v);
  }

  private endAttempt(a: SpanRecord, error: boolean, end = now()): void {
    this.attempt = undefined;
    a.end = end;
    a.error = error;
    this.sink.add(a);
  }

  attemptEnded(outcome: string): void {
    const a = this.attempt;
    if (!a) return;
    a.values[A[ATTR.errorType]] = outcome;
    if (/^\d+$/.test(outcome)) a.values[A[ATTR.httpStatus]] = Number(outcome);
    this.endAttempt(a, true);
  }

  /** The open attempt's context (else the request's), as W3C traceparent writes it. */
  traceparent(): string {
    const s = this.attempt ?? this.span;
    return `00-${s.traceId}-${s.spanId}-01`;
  }

  reads(source: AnswerSource, logged: BodyCapture | undefined): BodyCapture | undefined {
    this.source = source;
    this.capture = logged ?? new SpanCapture(ANSWER_CAP);
    return this.capture;
  }

  answered(answer: Response, id: string | undefined): void {
    this.facts = factsOf(answer, id, this.content);
    if (this.capture instanceof SpanCapture) this.capture.off = true;
  }

  end(ev: RequestFinished | RequestFailed): void {
    const span = this.span;
    span.end = now();
    const failed = ev.type === 'failed' || ev.status >= 400;
    const provider = ev.served?.provider ?? this.info.provider;
    const a = span.values;
    a[A[ATTR.httpStatus]] = ev.status;
    a[A[ATTR.providerName]] = providerName(provider);
    a[A[GW.provider]] = provider;
    if (ev.type === 'failed') a[A[ATTR.errorType]] = ev.code;
    else if (ev.status >= 400) a[A[ATTR.errorType]] = String(ev.status);
    if (ev.type === 'finished' && ev.model) a[A[ATTR.responseModel]] = ev.model;
    const u = ev.usage;
    if (u.inputTokens !== undefined) a[A[ATTR.inputTokens]] = u.inputTokens;
    if (u.outputTokens !== undefined) a[A[ATTR.outputTokens]] = u.outputTokens;
    if (u.cachedTokens !== undefined) a[A[ATTR.cacheReadTokens]] = u.cachedTokens;
    if (u.cacheWriteTokens !== undefined) a[A[ATTR.cacheWriteTokens]] = u.cacheWriteTokens;
    if (u.reasoningTokens !== undefined) a[A[ATTR.reasoningTokens]] = u.reasoningTokens;
    if (this.info.stream && ev.ttfbMs !== null) a[A[ATTR.timeToFirstChunk]] = ev.ttfbMs / 1000;
    if (ev.route !== undefined) a[A['gateway.route']] = ev.route;
    if (ev.waitedMs) a[A['gateway.waited_ms']] = ev.waitedMs;
    span.error = failed;
    // The call that answered ends with the request.
    const attempt = this.attempt;
    if (attempt) {
      const aa = attempt.values;
      if (ev.type === 'finished' && ev.model) aa[A[ATTR.responseModel]] = ev.model;
      aa[A[ATTR.httpStatus]] = ev.status;
      if (failed) aa[A[ATTR.errorType]] = String(a[A[ATTR.errorType]]);
      this.endAttempt(attempt, failed, span.end);
    }
    const source = this.source;
    const capture = this.capture;
    const facts = this.facts;
    // A token count's answer is a number, not an answer to read.
    if (!source || ev.status >= 400 || this.op === 'count_tokens' || (!facts && !capture)) { this.sink.add(span); return; }
    // Content off, with the pipeline's own answer or the door protocol's reader at hand (loaded
    // since a first request): read now, with no promise to wait on.
    if (!this.content) {
      const side = facts ? undefined : loadedProviderSide(source.protocol);
      if (facts || side) {
        const answer = facts ?? this.readCaptured(side!, capture!, source);
        if (answer) answerAttributes(a, answer, false);
        this.sink.add(span);
        return;
      }
    }
    // The answer (or the content) is read after the request, off its path; the span (ended at the
    // request's end time) is handed over once read.
    const done = this.readAnswer(source, capture, facts).catch(() => undefined).then(() => { this.sink.add(span); });
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
  }

  /**
   * The answer's facts from its captured bytes, content off: the bytes are read unredacted, and the
   * one string the span takes from them as it is, the response id, is redacted instead.
   */
  private readCaptured(side: ProviderProtocol, capture: BodyCapture, source: AnswerSource): AnswerFacts | undefined {
    // Runs inside the request's end: an answer its reader chokes on only goes without these facts.
    try {
      const text = capture.response.whole(ANSWER_CAP);
      const answer = text === null ? undefined : readAnswer(side, text, source.target(), false);
      if (answer?.id) answer.id = redactCredentials(answer.id, this.secrets());
      return answer;
    } catch { return undefined; }
  }

  private async readAnswer(source: AnswerSource, capture: BodyCapture | undefined, known: AnswerFacts | undefined): Promise<void> {
    const secrets = this.secrets();
    const a = this.span.values;
    let answer = known;
    if (!answer && capture) {
      const side = loadedProviderSide(source.protocol) ?? await providerSide(source.protocol);
      if (!this.content) answer = this.readCaptured(side, capture, source);
      else {
        const text = capture.response.text(ANSWER_CAP, secrets);
        answer = text === null ? undefined : readAnswer(side, text, source.target(), true);
      }
    }
    if (answer) answerAttributes(a, answer, this.content);
    if (!this.content) return;
    let body: unknown;
    try { body = JSON.parse(redactCredentials(source.request.toString('utf8'), secrets)); } catch { return; }
    const client: ClientProtocol = await source.client();
    const ir = parseInput(client, body, source.target());
    if (!ir) return;
    const input = inputOf(ir);
    a[A[ATTR.inputMessages]] = JSON.stringify(input.messages);
    if (input.system.length > 0) a[A[ATTR.systemInstructions]] = JSON.stringify(input.system);
  }
}

/** The response id, finish reasons and (content on) output messages as span attributes. */
function answerAttributes(a: SpanValues, answer: AnswerFacts, content: boolean): void {
  if (answer.id) a[A[ATTR.responseId]] = answer.id;
  if (answer.finishReasons.length > 0) a[A[ATTR.finishReasons]] = answer.finishReasons;
  if (content) a[A[ATTR.outputMessages]] = JSON.stringify(answer.output);
}
