// The daemon's telemetry, started with it: the metrics recorder on the event bus (on by default),
// GET /metrics, and, when an OTLP endpoint is configured, traces and the metrics push.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { VERSION } from '../../version.js';
import type { DaemonContext } from '../context.js';
import { buildPriceTable, readShippedPrices, type PriceTable } from '../observe/usage/prices.js';
import { keyLabeler, ModelLabels } from './labels.js';
import { createMetrics } from './metrics.js';
import { pushMetrics } from './otlp-metrics.js';
import { watchProcess } from './process.js';
import { MetricsRecorder } from './recorder.js';
import { METRICS_PATH, scrapeHandler } from './scrape.js';
import type { TelemetrySettings } from './settings.js';
import { MetricStore } from './store.js';
import { createTracing } from './tracer.js';

export { METRICS_PATH };
export { parseTelemetry, TELEMETRY_DEFAULTS, type TelemetrySettings } from './settings.js';

/** How long stopping waits for the last exports. */
const CLOSE_WAIT_MS = 2000;

export interface TelemetryOptions {
  settings: TelemetrySettings;
  /** The usage history's price table, for cost and for which models are known (default: the shipped table). */
  prices?: () => PriceTable | undefined;
  /** Where the daemon listens (GET /metrics is open on loopback only) and its admin token. */
  host: string;
  adminToken: string;
  log: (line: string) => void;
}

export interface Telemetry {
  /** GET /metrics; undefined when metrics are off. */
  readonly scrape: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  close(): Promise<void>;
}

export async function startTelemetry(ctx: DaemonContext, o: TelemetryOptions): Promise<Telemetry> {
  const { settings } = o;
  const otlp = settings.otlp;
  const recording = settings.metrics || otlp?.metrics === true;
  const store = new MetricStore();
  const metrics = createMetrics(store);
  const stops: Array<() => void> = [];
  const closers: Array<() => Promise<void>> = [];
  const dropped = (signal: string, n: number) => metrics.dropped.add(signal, [signal], n);

  if (recording) {
    let shipped: PriceTable | undefined;
    const prices = o.prices ?? (() => (shipped ??= buildPriceTable(readShippedPrices()).table));
    const recorder = new MetricsRecorder({ metrics, models: new ModelLabels(ctx.settings, prices), keyLabel: keyLabeler(settings.keyLabels), prices });
    stops.push(recorder.subscribe(ctx.bus));
    ctx.breaker.onOpen = (key) => recorder.breakerOpened(key);
    stops.push(() => { ctx.breaker.onOpen = undefined; });
    stops.push(watchProcess(store, metrics, ctx.stats));
  }

  if (otlp) {
    const attributes = { [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: VERSION };
    const resource = resourceFromAttributes(attributes);
    const tracing = await createTracing({
      settings: { ...settings, otlp }, resource: attributes, secrets: () => ctx.providerKeys.values(), dropped: (n) => dropped('spans', n), batchDelayMs: otlp.batchDelayMs, log: o.log,
    });
    ctx.startSpan = tracing.startSpan;
    closers.push(() => { ctx.startSpan = undefined; return tracing.close(); });
    let what = 'traces';
    if (otlp.metrics && recording) {
      const push = await pushMetrics(store, { protocol: otlp.protocol, endpoint: otlp.endpoint, intervalMs: otlp.metricsIntervalMs, resource, dropped: () => dropped('metrics', 1) });
      closers.push(() => push.close());
      what = 'traces and metrics';
    }
    o.log(`telemetry: exporting ${what} over OTLP to ${otlp.endpoint} (${otlp.protocol})${settings.captureContent ? '; WARNING: prompts and completions are exported too (telemetry.captureContent)' : ''}`);
  }

  return {
    scrape: settings.metrics ? scrapeHandler(store, { host: o.host, adminToken: o.adminToken, keys: ctx.keys }) : undefined,
    async close() {
      for (const stop of stops.splice(0)) stop();
      // The last batches get a moment to leave; a collector that does not answer never holds up a stop.
      let timer: NodeJS.Timeout | undefined;
      const giveUp = new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_WAIT_MS); timer.unref(); });
      await Promise.race([Promise.all(closers.splice(0).map((c) => c())), giveUp]);
      clearTimeout(timer);
    },
  };
}
