// The span export: takes span records (span-record.ts), makes each a ReadableSpan, and exports
// them with the OpenTelemetry SDK's BatchSpanProcessor and OTLP exporter. Turning spans into OTLP
// protobuf and sending them is most of what a traced request costs. tracer.ts runs it in a
// worker_threads Worker (this file, started with `workerData.spanWorker`) when the daemon may use
// more than one CPU, so none of it runs on the thread that serves requests; on one CPU it runs
// in-thread (imported), since a thread there only adds the handover's cost. A collector that is
// down costs only the data: a failed export is dropped and counted, and so is a span the batch
// queue has no room for (gateway_telemetry_dropped_total).
//
// This file imports only packages and types: under vitest Node runs it as TypeScript (type
// stripping), where a relative `.js` import would not resolve.
import { parentPort, workerData } from 'node:worker_threads';
import type { Attributes, HrTime, Link, SpanContext, SpanStatus } from '@opentelemetry/api';
import { TraceState, type ExportResult, type InstrumentationScope } from '@opentelemetry/core';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, type TimedEvent } from '@opentelemetry/sdk-trace';
import type { FromWorker, SpanRecord, ToWorker, WorkerSetup } from './span-record.js';

const SUCCESS = 0; // ExportResultCode.SUCCESS
const ERROR = 2; // SpanStatusCode.ERROR
const UNSET = 0;
const NO_EVENTS: TimedEvent[] = [];
const NO_LINKS: Link[] = [];


const hrTime = (ms: number): HrTime => {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
};

/** A record as the SDK's exporters read a finished span. */
class RecordSpan implements ReadableSpan {
  readonly name: string;
  readonly kind: number;
  readonly parentSpanContext: SpanContext | undefined;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly duration: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly links = NO_LINKS;
  readonly events = NO_EVENTS;
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  private readonly context: SpanContext;

  // No parameter properties: Node's type stripping runs this file under vitest.
  constructor(r: SpanRecord, names: readonly string[], resource: Resource, scope: InstrumentationScope) {
    this.resource = resource;
    this.instrumentationScope = scope;
    const traceState = r.traceState === undefined ? undefined : new TraceState(r.traceState);
    this.name = r.name;
    this.kind = r.kind;
    this.context = { traceId: r.traceId, spanId: r.spanId, traceFlags: 1, ...(traceState ? { traceState } : {}) };
    this.parentSpanContext = r.parentId === undefined ? undefined : { traceId: r.traceId, spanId: r.parentId, traceFlags: 1, isRemote: r.remoteParent, ...(traceState ? { traceState } : {}) };
    this.startTime = hrTime(r.start);
    this.endTime = hrTime(r.end);
    this.duration = hrTime(r.end - r.start);
    this.status = { code: r.error ? ERROR : UNSET };
    const attributes: Attributes = {};
    const values = r.values;
    for (let i = 0; i < values.length; i++) if (values[i] !== undefined) attributes[names[i]!] = values[i];
    this.attributes = attributes;
  }

  spanContext(): SpanContext { return this.context; }
}

async function spanExporter(setup: WorkerSetup): Promise<SpanExporter> {
  const { OTLPTraceExporter } = setup.protocol === 'http/json'
    ? await import('@opentelemetry/exporter-trace-otlp-http')
    : await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: setup.url });
}

export interface SpanExport {
  /** Queues a finished span for export; false when the queue is full and it is dropped. */
  take(r: SpanRecord): boolean;
  /** Exports what is queued, then shuts the exporter down. */
  close(): Promise<void>;
}

/** `failed`: that many spans were lost in an export that failed. */
export async function startSpanExport(setup: WorkerSetup, failed: (n: number) => void): Promise<SpanExport> {
  const resource = resourceFromAttributes(setup.resource);
  const scope: InstrumentationScope = setup.scope;
  const inner = await spanExporter(setup);
  // The batch queue's length, kept beside it (spans given, less those handed to the exporter), so
  // a span it drops for want of room is counted.
  let queued = 0;
  const exporter: SpanExporter = {
    export: (spans, done) => {
      queued = Math.max(0, queued - spans.length);
      inner.export(spans, (r: ExportResult) => {
        if (r.code !== SUCCESS) failed(spans.length);
        done(r);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  const processor = new BatchSpanProcessor({ exporter, maxQueueSize: setup.queue, scheduledDelayMillis: setup.batchDelayMs });
  return {
    take(r) {
      const kept = queued < setup.queue;
      if (kept) queued++;
      processor.onEnd(new RecordSpan(r, setup.attributes, resource, scope));
      return kept;
    },
    close: () => processor.shutdown().catch(() => undefined),
  };
}

/** The worker: records come in batches from the request thread; each batch is acknowledged with what was dropped. */
async function runWorker(setup: WorkerSetup, port: NonNullable<typeof parentPort>): Promise<void> {
  const post = (m: FromWorker): void => port.postMessage(m);
  try {
    const exp = await startSpanExport(setup, (n) => post({ type: 'took', took: 0, dropped: n }));
    port.on('message', (m: ToWorker) => {
      if (m.type === 'spans') {
        let dropped = 0;
        for (const r of m.spans) if (!exp.take(r)) dropped++;
        post({ type: 'took', took: m.spans.length, dropped });
        return;
      }
      // The last batches leave, then the worker says so and the request thread ends it.
      void exp.close().then(() => post({ type: 'closed' }));
    });
    post({ type: 'ready' });
  } catch (e) {
    post({ type: 'failed', message: (e as Error).message });
  }
}

if (parentPort && (workerData as { spanWorker?: boolean } | null)?.spanWorker === true) void runWorker(workerData as WorkerSetup, parentPort);
