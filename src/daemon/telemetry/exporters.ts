// The OTLP/HTTP metric exporters (protobuf by default, JSON when asked), loaded only when an
// endpoint is configured. A collector that is down costs only the data: a failed export is
// counted (gateway_telemetry_dropped_total). The span exporter runs in the span worker (span-worker.ts).
import type { ExportResult } from '@opentelemetry/core';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { OtlpProtocol } from './settings.js';

const SUCCESS = 0; // ExportResultCode.SUCCESS

export async function metricExporter(protocol: OtlpProtocol, url: string): Promise<PushMetricExporter> {
  const { OTLPMetricExporter } = protocol === 'http/json'
    ? await import('@opentelemetry/exporter-metrics-otlp-http')
    : await import('@opentelemetry/exporter-metrics-otlp-proto');
  return new OTLPMetricExporter({ url });
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
