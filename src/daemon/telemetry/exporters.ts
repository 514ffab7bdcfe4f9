// The OTLP/HTTP exporters (protobuf by default, JSON when asked), loaded only when an endpoint is
// configured. A collector that is down costs only the data: a failed export is dropped and
// counted (gateway_telemetry_dropped_total), and so is a span the batch queue has no room for.
import type { ExportResult } from '@opentelemetry/core';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan, SpanExporter, SpanProcessor, Span } from '@opentelemetry/sdk-trace';
import type { Context } from '@opentelemetry/api';
import type { OtlpProtocol } from './settings.js';

const SUCCESS = 0; // ExportResultCode.SUCCESS

export async function spanExporter(protocol: OtlpProtocol, url: string): Promise<SpanExporter> {
  const { OTLPTraceExporter } = protocol === 'http/json'
    ? await import('@opentelemetry/exporter-trace-otlp-http')
    : await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url });
}

export async function metricExporter(protocol: OtlpProtocol, url: string): Promise<PushMetricExporter> {
  const { OTLPMetricExporter } = protocol === 'http/json'
    ? await import('@opentelemetry/exporter-metrics-otlp-http')
    : await import('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter({ url });
}

/**
 * Counts what is lost: spans in a failed export, and spans ended while the batch queue was full
 * (which the BatchSpanProcessor drops), by keeping the queue's length beside it: spans ended,
 * less those handed to the exporter. Goes before the batch processor.
 */
export class DropCounter {
  private queued = 0;
  constructor(private readonly capacity: number, private readonly dropped: (n: number) => void) {}

  /** Sits in front of the batch processor. */
  readonly processor: SpanProcessor = {
    onStart: (_span: Span, _ctx: Context) => {},
    onEnd: (span: ReadableSpan) => {
      if ((span.spanContext().traceFlags & 1) === 0) return; // not sampled: the batch processor ignores it too
      if (this.queued >= this.capacity) this.dropped(1);
      else this.queued++;
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };

  spans(inner: SpanExporter): SpanExporter {
    return {
      export: (spans, done) => {
        this.queued = Math.max(0, this.queued - spans.length);
        inner.export(spans, (r: ExportResult) => {
          if (r.code !== SUCCESS) this.dropped(spans.length);
          done(r);
        });
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }
}

/** A metric exporter that counts each failed export. */
export function countingMetrics(inner: PushMetricExporter, dropped: () => void): PushMetricExporter {
  return {
    export: (metrics: ResourceMetrics, done: (r: ExportResult) => void) => {
      inner.export(metrics, (r) => {
        if (r.code !== SUCCESS) dropped();
        done(r);
      });
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
    ...(inner.selectAggregationTemporality ? { selectAggregationTemporality: inner.selectAggregationTemporality.bind(inner) } : {}),
    ...(inner.selectAggregation ? { selectAggregation: inner.selectAggregation.bind(inner) } : {}),
  };
}
