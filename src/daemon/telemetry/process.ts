// The daemon's process figures, read only when the metrics are read: resident memory, heap, CPU
// time, start time, requests in flight and the event loop's delay (sampled by Node's own
// histogram, perf_hooks.monitorEventLoopDelay, every 20 ms).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Stats } from '../observe/tracker.js';
import type { Metrics } from './metrics.js';
import type { MetricStore } from './store.js';

/** The delay percentiles cover at least this long, then start over. */
const DELAY_WINDOW_MS = 60_000;
const NO_LABELS: readonly string[] = [];

export function watchProcess(store: MetricStore, m: Metrics, stats: Stats): () => void {
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  let windowStart = Date.now();
  const startedAt = Math.round(Date.now() - process.uptime() * 1000) / 1000;
  store.onRead(() => {
    const mem = process.memoryUsage();
    m.rss.set('', NO_LABELS, mem.rss);
    m.heap.set('', NO_LABELS, mem.heapUsed);
    const cpu = process.cpuUsage();
    m.cpu.set('', NO_LABELS, (cpu.user + cpu.system) / 1e6);
    m.startTime.set('', NO_LABELS, startedAt);
    m.inFlight.set('', NO_LABELS, stats.inFlight);
    // Nanoseconds to seconds; an empty histogram (no sample yet) reads as 0.
    const q = (p: number): number => (delay.count > 0 ? delay.percentile(p) / 1e9 : 0);
    m.loopDelay.set('50', ['50'], q(50));
    m.loopDelay.set('99', ['99'], q(99));
    m.loopDelay.set('100', ['100'], delay.count > 0 ? delay.max / 1e9 : 0);
    if (Date.now() - windowStart >= DELAY_WINDOW_MS) { delay.reset(); windowStart = Date.now(); }
  });
  return () => delay.disable();
}
