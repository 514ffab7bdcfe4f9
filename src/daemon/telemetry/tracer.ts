// Traces over OTLP: each request a span named as the GenAI conventions name it
// (`{gen_ai.operation.name} {gen_ai.request.model}`, kind SERVER: the gateway serves it), each
// call to a provider a CLIENT child span, an incoming W3C `traceparent` its parent, and the call
// going out carries the open attempt's context onward. Spans leave in batches (BatchSpanProcessor);
// nothing here waits on the collector. Made only when an endpoint is configured: without one,
// ctx.startSpan is unset and no span exists.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { ClientProtocol } from '../../providers/ir/protocol.js';
import { BodyCapture, redactCredentials } from '../observe/body-log.js';
import type { RequestFailed, RequestFinished } from '../observe/events.js';
import type { AnswerSource, StartSpan, TrackerSpan, TrackStart } from '../observe/tracker.js';
import { VERSION } from '../../version.js';
import { inputOf, parseInput, readAnswer } from './answer.js';
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

class RequestSpan implements TrackerSpan {
  private readonly span: Span;
  private readonly ctx: Context;
  private readonly op: string;
  private attempt: Span | undefined;
  private source: AnswerSource | undefined;
  private capture: BodyCapture | undefined;

  constructor(
    private readonly tracer: Tracer, private readonly info: TrackStart, private readonly content: boolean,
    private readonly secrets: () => readonly string[], private readonly pending: Set<Promise<void>>,
  ) {
    this.op = operationName(info.mode, info.path) ?? info.method.toLowerCase();
    const parent = info.headers ? propagator.extract(ROOT_CONTEXT, info.headers, defaultTextMapGetter) : ROOT_CONTEXT;
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
    this.span = tracer.startSpan(info.model ? `${this.op} ${info.model}` : this.op, { kind: SpanKind.SERVER, attributes }, parent);
    this.ctx = trace.setSpan(parent, this.span);
  }

  attemptStarted(target: string, keyLabel: string): void {
    this.attempt?.end();
    const slash = target.indexOf('/');
    const provider = target.slice(0, slash);
    const model = target.slice(slash + 1);
    const attributes: Attributes = { [ATTR.operationName]: this.op, [ATTR.providerName]: providerName(provider), [ATTR.requestModel]: model, [GW.provider]: provider };
    if (keyLabel) attributes['gateway.provider.key.label'] = keyLabel;
    this.attempt = this.tracer.startSpan(`${this.op} ${model}`, { kind: SpanKind.CLIENT, attributes }, this.ctx);
  }

  attemptEnded(outcome: string): void {
    const a = this.attempt;
    if (!a) return;
    this.attempt = undefined;
    a.setAttribute(ATTR.errorType, outcome);
    if (/^\d+$/.test(outcome)) a.setAttribute(ATTR.httpStatus, Number(outcome));
    a.setStatus({ code: SpanStatusCode.ERROR });
    a.end();
  }

  traceparent(): string {
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(this.ctx, this.attempt ?? this.span), carrier, defaultTextMapSetter);
    return carrier.traceparent ?? '';
  }

  reads(source: AnswerSource, logged: BodyCapture | undefined): BodyCapture | undefined {
    if (!this.span.isRecording()) return logged; // not sampled: nothing of the answer is kept for it
    this.source = source;
    this.capture = logged ?? new BodyCapture(ANSWER_CAP);
    return this.capture;
  }

  end(ev: RequestFinished | RequestFailed): void {
    const span = this.span;
    const failed = ev.type === 'failed' || ev.status >= 400;
    const provider = ev.served?.provider ?? this.info.provider;
    const a: Attributes = { [ATTR.httpStatus]: ev.status, [ATTR.providerName]: providerName(provider), [GW.provider]: provider };
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
    span.setAttributes(a);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    // The call that answered ends with the request.
    if (this.attempt) {
      if (ev.type === 'finished' && ev.model) this.attempt.setAttribute(ATTR.responseModel, ev.model);
      this.attempt.setAttributes({ [ATTR.httpStatus]: ev.status, ...(failed ? { [ATTR.errorType]: String(a[ATTR.errorType]) } : {}) });
      if (failed) this.attempt.setStatus({ code: SpanStatusCode.ERROR });
      this.attempt.end(ev.time);
      this.attempt = undefined;
    }
    const source = this.source;
    const capture = this.capture;
    // A token count's answer is a number, not an answer to read.
    if (!source || !capture || ev.status >= 400 || this.op === 'count_tokens') { span.end(ev.time); return; }
    // The answer is read after the request, off its path; the span ends (at the request's end time) once read.
    const done = this.readAnswer(source, capture).catch(() => undefined).then(() => span.end(ev.time));
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
  }

  private async readAnswer(source: AnswerSource, capture: BodyCapture): Promise<void> {
    const secrets = this.secrets();
    const text = capture.response.text(ANSWER_CAP, secrets);
    const target = source.target();
    const answer = text === null ? undefined : await readAnswer(source.protocol, text, target);
    if (answer?.id) this.span.setAttribute(ATTR.responseId, answer.id);
    if (answer && answer.finishReasons.length > 0) this.span.setAttribute(ATTR.finishReasons, answer.finishReasons);
    if (!this.content) return;
    if (answer) this.span.setAttribute(ATTR.outputMessages, JSON.stringify(answer.output));
    let body: unknown;
    try { body = JSON.parse(redactCredentials(source.request.toString('utf8'), secrets)); } catch { return; }
    const client: ClientProtocol = await source.client();
    const ir = parseInput(client, body, target);
    if (!ir) return;
    const input = inputOf(ir);
    this.span.setAttribute(ATTR.inputMessages, JSON.stringify(input.messages));
    if (input.system.length > 0) this.span.setAttribute(ATTR.systemInstructions, JSON.stringify(input.system));
  }
}
