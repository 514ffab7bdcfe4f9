// The same metrics pushed over OTLP (telemetry.otlp.metrics), for a daemon a scraper cannot reach:
// the SDK's PeriodicExportingMetricReader reads the store through a MetricProducer and exports
// on its interval, as cumulative series under their OpenTelemetry names and attributes.
import { ValueType } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import {
  AggregationTemporality, DataPointType, MeterProvider, PeriodicExportingMetricReader,
  type CollectionResult, type MetricData, type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { VERSION } from '../../version.js';
import { countingMetrics, metricExporter } from './exporters.js';
import { SCHEMA_URL } from './semconv.js';
import type { OtlpProtocol } from './settings.js';
import type { Family, MetricStore } from './store.js';

/** A series' values as attributes: a value of '' is no attribute. */
function attributes(names: readonly string[], values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) if (values[i]) out[names[i]!] = values[i]!;
  return out;
}

function metricData(f: Family, start: [number, number], end: [number, number]): MetricData {
  const d = f.def;
  const descriptor = { name: d.name, description: d.help, unit: d.unit, valueType: ValueType.DOUBLE };
  const series = [...f.series.values()];
  const point = <T>(values: readonly string[], value: T) => ({ startTime: start, endTime: end, attributes: attributes(d.labels, values), value });
  if (d.kind === 'histogram') {
    return {
      descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.HISTOGRAM,
      dataPoints: series.map((s) => point(s.values, { buckets: { boundaries: [...d.buckets!], counts: [...s.buckets!] }, sum: s.sum, count: s.count })),
    };
  }
  if (d.kind === 'gauge') {
    return { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.GAUGE, dataPoints: series.map((s) => point(s.values, s.sum)) };
  }
  return {
    descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.SUM, isMonotonic: true,
    dataPoints: series.map((s) => point(s.values, s.sum)),
  };
}

export function storeProducer(store: MetricStore): MetricProducer {
  return {
    collect: (): Promise<CollectionResult> => {
      const start = millisToHrTime(store.startedAt);
      const end = millisToHrTime(Date.now());
      const metrics = store.read().filter((f) => f.series.size > 0).map((f) => metricData(f, start, end));
      return Promise.resolve({
        // The reader puts the MeterProvider's resource on the export; this one is not used.
        resourceMetrics: { resource: undefined as unknown as Resource, scopeMetrics: [{ scope: { name: 'model-gateway', version: VERSION, schemaUrl: SCHEMA_URL }, metrics }] },
        errors: [],
      });
    },
  };
}

export interface MetricsPush { close(): Promise<void> }

export async function pushMetrics(store: MetricStore, o: { protocol: OtlpProtocol; endpoint: string; intervalMs: number; resource: Resource; dropped: () => void }): Promise<MetricsPush> {
  const exporter = countingMetrics(await metricExporter(o.protocol, `${o.endpoint}/v1/metrics`), o.dropped);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: o.intervalMs, exportTimeoutMillis: Math.min(o.intervalMs, 30_000), metricProducers: [storeProducer(store)] });
  const provider = new MeterProvider({ resource: o.resource, readers: [reader] });
  return { close: () => provider.shutdown().catch(() => undefined) };
}
