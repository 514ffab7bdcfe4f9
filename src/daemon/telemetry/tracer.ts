// Traces over OTLP: each request a span named as the GenAI conventions name it
// (`{gen_ai.operation.name} {gen_ai.request.model}`, kind SERVER: the gateway serves it), each
// call to a provider a CLIENT child span, an incoming W3C `traceparent` its parent, and the call
// going out carries the open attempt's context onward. Spans leave in batches (BatchSpanProcessor);
// nothing here waits on the collector. Made only when an endpoint is configured: without one,
// ctx.startSpan is unset and no span exists.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, isSpanContextValid, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { ClientProtocol, ProviderProtocol } from '../../providers/ir/protocol.js';
import type { Response } from '../../providers/ir/types.js';
import { BodyCapture, redactCredentials } from '../observe/body-log.js';
import type { RequestFailed, RequestFinished } from '../observe/events.js';
import type { AnswerSource, StartSpan, TrackerSpan, TrackStart } from '../observe/tracker.js';
import { VERSION } from '../../version.js';
import { factsOf, inputOf, parseInput, readAnswer, type AnswerFacts } from './answer.js';
import { loadedProviderSide, providerSide } from '../../providers/protocols/provider-sides.js';
import { DropCounter, spanExporter } from './exporters.js';
import { GW } from './metrics.js';
import { ATTR, doorName, operationName, providerName, SCHEMA_URL } from './semconv.js';
import type { TelemetrySettings } from './settings.js';

/** The answer bytes a span keeps to read it at the end; a longer answer gets no finish reasons or content. */
const ANSWER_CAP = 1024 * 1024;
const QUEUE = 2048;

const propagator = new W3CTraceContextPropagator();

interface TracingDeps {
  settings: TelemetrySettings & { otlp: NonNullable<TelemetrySettings['otlp']> };
  resource: Resource;
  /** The provider keys held now: redacted from content before it leaves. */
  secrets: () => readonly string[];
  dropped: (n: number) => void;
  batchDelayMs: number;
}

export interface Tracing {
  startSpan: StartSpan;
  close(): Promise<void>;
}

export async function createTracing(d: TracingDeps): Promise<Tracing> {
  const counter = new DropCounter(QUEUE, d.dropped);
  const exporter = counter.spans(await spanExporter(d.settings.otlp.protocol, `${d.settings.otlp.endpoint}/v1/traces`));
  const ratio = d.settings.otlp.sampleRatio;
  const provider = new TracerProvider({
    resource: d.resource,
    // A caller's sampling decision is followed; requests of their own are traced at the ratio asked.
    ...(ratio === undefined ? {} : { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }) }),
    spanProcessors: [counter.processor, new BatchSpanProcessor({ exporter, maxQueueSize: QUEUE, scheduledDelayMillis: d.batchDelayMs })],
  });
  const tracer = provider.getTracer('model-gateway', VERSION, { schemaUrl: SCHEMA_URL });
  const pending = new Set<Promise<void>>();
  const content = d.settings.captureContent;
  return {
    // A request its caller did not sample, and the ratio leaves out, gets no span at all: the SDK's
    // unsampled spans still cost a request about 25 µs in objects and their garbage.
    startSpan: (_id, info) => (ratio !== undefined && ratio < 1 && !callerSampled(info.headers) && Math.random() >= ratio
      ? undefined
      : new RequestSpan(tracer, info, content, d.secrets, pending)),
    async close() {
      await Promise.allSettled([...pending]);
      await provider.shutdown().catch(() => undefined);
    },
  };
}

/** Whether the caller's W3C traceparent asks for this trace to be sampled (its flags' last bit). */
function callerSampled(headers: TrackStart['headers']): boolean {
  const tp = headers?.traceparent;
  return typeof tp === 'string' && /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/i.test(tp.trim()) && (parseInt(tp.trim().slice(-2), 16) & 1) === 1;
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

/** An attempt's span and the attributes it ends with (set in one call when it ends). */
interface AttemptSpan { readonly span: Span; readonly attributes: Attributes }

// Attributes are gathered in a plain object and set once, when the span ends: given to startSpan
// the SDK would check and copy each of them twice (its sampler's copy and the span's), and none of
// our samplers reads them.
class RequestSpan implements TrackerSpan {
  private readonly span: Span;
  private readonly parent: Context;
  private readonly attributes: Attributes;
  private readonly op: string;
  private attempt: AttemptSpan | undefined;
  private source: AnswerSource | undefined;
  private capture: BodyCapture | undefined;
  /** What the pipeline told of the answer (a translated whole answer), instead of reading it back. */
  private facts: AnswerFacts | undefined;

  constructor(
    private readonly tracer: Tracer, private readonly info: TrackStart, private readonly content: boolean,
    private readonly secrets: () => readonly string[], private readonly pending: Set<Promise<void>>,
  ) {
    this.op = operationName(info.mode, info.path) ?? info.method.toLowerCase();
    this.parent = info.headers?.traceparent !== undefined ? propagator.extract(ROOT_CONTEXT, info.headers, defaultTextMapGetter) : ROOT_CONTEXT;
    const attributes: Attributes = {
      [ATTR.operationName]: this.op,
      [ATTR.providerName]: providerName(info.provider),
      [ATTR.requestStream]: info.stream,
      [GW.door]: doorName(info.mode),
      [GW.provider]: info.provider,
      [GW.key]: info.keyName,
    };
    if (info.model) attributes[ATTR.requestModel] = info.model;
    // The name the client sent, when it was not the model itself (an alias, a routed name).
    if (info.asked !== undefined && info.asked !== info.model && info.asked !== `${info.provider}/${info.model}`) attributes['gateway.model.alias'] = info.asked;
    this.attributes = attributes;
    this.span = tracer.startSpan(info.model ? `${this.op} ${info.model}` : this.op, { kind: SpanKind.SERVER }, this.parent);
  }

  attemptStarted(target: string, keyLabel: string): void {
    this.attempt?.span.end();
    const slash = target.indexOf('/');
    const provider = target.slice(0, slash);
    const model = target.slice(slash + 1);
    const attributes: Attributes = { [ATTR.operationName]: this.op, [ATTR.providerName]: providerName(provider), [ATTR.requestModel]: model, [GW.provider]: provider };
    if (keyLabel) attributes['gateway.provider.key.label'] = keyLabel;
    this.attempt = { span: this.tracer.startSpan(`${this.op} ${model}`, { kind: SpanKind.CLIENT }, trace.setSpan(this.parent, this.span)), attributes };
  }

  attemptEnded(outcome: string): void {
    const a = this.attempt;
    if (!a) return;
    this.attempt = undefined;
    a.attributes[ATTR.errorType] = outcome;
    if (/^\d+$/.test(outcome)) a.attributes[ATTR.httpStatus] = Number(outcome);
    a.span.setAttributes(a.attributes);
    a.span.setStatus({ code: SpanStatusCode.ERROR });
    a.span.end();
  }

  /** The open attempt's context (else the request's), as W3C traceparent writes it. */
  traceparent(): string {
    const c = (this.attempt?.span ?? this.span).spanContext();
    return isSpanContextValid(c) ? `00-${c.traceId}-${c.spanId}-0${(c.traceFlags & 0xff).toString(16)}` : '';
  }

  reads(source: AnswerSource, logged: BodyCapture | undefined): BodyCapture | undefined {
    if (!this.span.isRecording()) return logged; // not sampled: nothing of the answer is kept for it
    this.source = source;
    this.capture = logged ?? new SpanCapture(ANSWER_CAP);
    return this.capture;
  }

  answered(answer: Response, id: string | undefined): void {
    if (!this.source) return; // not sampled
    this.facts = factsOf(answer, id, this.content);
    if (this.capture instanceof SpanCapture) this.capture.off = true;
  }

  end(ev: RequestFinished | RequestFailed): void {
    const span = this.span;
    // A caller's unsampled trace: the span records nothing, its attributes would go nowhere.
    if (!span.isRecording()) { this.attempt?.span.end(); span.end(); return; }
    const failed = ev.type === 'failed' || ev.status >= 400;
    const provider = ev.served?.provider ?? this.info.provider;
    const a = this.attributes;
    a[ATTR.httpStatus] = ev.status;
    a[ATTR.providerName] = providerName(provider);
    a[GW.provider] = provider;
    if (ev.type === 'failed') a[ATTR.errorType] = ev.code;
    else if (ev.status >= 400) a[ATTR.errorType] = String(ev.status);
    if (ev.type === 'finished' && ev.model) a[ATTR.responseModel] = ev.model;
    const u = ev.usage;
    if (u.inputTokens !== undefined) a[ATTR.inputTokens] = u.inputTokens;
    if (u.outputTokens !== undefined) a[ATTR.outputTokens] = u.outputTokens;
    if (u.cachedTokens !== undefined) a[ATTR.cacheReadTokens] = u.cachedTokens;
    if (u.cacheWriteTokens !== undefined) a[ATTR.cacheWriteTokens] = u.cacheWriteTokens;
    if (u.reasoningTokens !== undefined) a[ATTR.reasoningTokens] = u.reasoningTokens;
    if (this.info.stream && ev.ttfbMs !== null) a[ATTR.timeToFirstChunk] = ev.ttfbMs / 1000;
    if (ev.route !== undefined) a['gateway.route'] = ev.route;
    if (ev.waitedMs) a['gateway.waited_ms'] = ev.waitedMs;
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    // The call that answered ends with the request.
    const attempt = this.attempt;
    if (attempt) {
      const aa = attempt.attributes;
      if (ev.type === 'finished' && ev.model) aa[ATTR.responseModel] = ev.model;
      aa[ATTR.httpStatus] = ev.status;
      if (failed) aa[ATTR.errorType] = String(a[ATTR.errorType]);
      attempt.span.setAttributes(aa);
      if (failed) attempt.span.setStatus({ code: SpanStatusCode.ERROR });
      attempt.span.end(ev.time);
      this.attempt = undefined;
    }
    const source = this.source;
    const capture = this.capture;
    const facts = this.facts;
    // A token count's answer is a number, not an answer to read.
    if (!source || ev.status >= 400 || this.op === 'count_tokens' || (!facts && !capture)) { span.setAttributes(a); span.end(ev.time); return; }
    // Content off, with the pipeline's own answer or the door protocol's reader at hand (loaded
    // since a first request): read now, with no promise to wait on.
    if (!this.content) {
      const side = facts ? undefined : loadedProviderSide(source.protocol);
      if (facts || side) {
        const answer = facts ?? this.readCaptured(side!, capture!, source);
        if (answer) answerAttributes(a, answer, false);
        span.setAttributes(a);
        span.end(ev.time);
        return;
      }
    }
    // The answer (or the content) is read after the request, off its path; the span ends (at the request's end time) once read.
    const done = this.readAnswer(source, capture, facts).catch(() => undefined).then(() => { span.setAttributes(a); span.end(ev.time); });
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
    const a = this.attributes;
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
    a[ATTR.inputMessages] = JSON.stringify(input.messages);
    if (input.system.length > 0) a[ATTR.systemInstructions] = JSON.stringify(input.system);
  }
}

/** The response id, finish reasons and (content on) output messages as span attributes. */
function answerAttributes(a: Attributes, answer: AnswerFacts, content: boolean): void {
  if (answer.id) a[ATTR.responseId] = answer.id;
  if (answer.finishReasons.length > 0) a[ATTR.finishReasons] = answer.finishReasons;
  if (content) a[ATTR.outputMessages] = JSON.stringify(answer.output);
}
