// What recording costs. The request path pays only the bus publish (a Map update and an array
// push); SQLite work happens in the batched flush. Measured here and printed, with loose bounds
// so the test catches a regression (say, a synchronous write per request) without being flaky.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/daemon/events.js';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/usage/prices.js';
import { UsageRecorder } from '../../src/daemon/usage/recorder.js';
import { openUsageHistory, recordUsage } from '../../src/daemon/usage/index.js';
import { UsageStore } from '../../src/daemon/usage/store.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const prices = buildPriceTable(readShippedPrices()).table;
let dir: string;
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'gateway-overhead-')); });
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

describe('recorder overhead', () => {
  it('costs microseconds per request on the request path, and little per batch', async () => {
    const store = await UsageStore.open(join(dir, 'micro.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 3_600_000, maxBatch: 1e9 }).start();
    const n = 50_000;
    const publish = (id: string) => {
      bus.publish({ type: 'started', id, time: Date.now(), keyId: 'k', keyName: 'app', mode: 'unified', provider: 'openai', model: 'gpt-4o', method: 'POST', path: '/v1/chat/completions', stream: true, requestBytes: 200 });
      bus.publish({ type: 'first_byte', id, time: Date.now(), ttfbMs: 120 });
      bus.publish({ type: 'finished', id, time: Date.now(), status: 200, durationMs: 900, ttfbMs: 120, outputBytes: 4000, usage: { inputTokens: 1200, outputTokens: 300, cachedTokens: 1024 }, model: 'gpt-4o-2024-08-06' });
    };
    for (let i = 0; i < 10_000; i++) publish(`warm${i}`); // steady state, not JIT warm-up
    rec.flush();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) publish(`r${i}`);
    const perRequestUs = ((performance.now() - t0) * 1000) / n;
    const t1 = performance.now();
    rec.flush();
    const flushMs = performance.now() - t1;
    const per1000 = (flushMs / n) * 1000;
    console.log(`recorder: ${perRequestUs.toFixed(2)} µs per request on the request path; flush ${per1000.toFixed(2)} ms per 1,000 rows (${n} rows in ${flushMs.toFixed(0)} ms)`);
    expect(store.count()).toBe(n + 10_000);
    expect(perRequestUs).toBeLessThan(50);
    expect(per1000).toBeLessThan(100);
    await rec.close();
  });

  it('adds no measurable latency to requests through a real daemon', async () => {
    const measure = async (gw: TestGateway) => {
      const one = async () => {
        const t = performance.now();
        const r = await fetch(`${gw.url}/openai/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        });
        await r.text();
        return performance.now() - t;
      };
      for (let i = 0; i < 200; i++) await one(); // warm up
      const times: number[] = [];
      const t0 = performance.now();
      await Promise.all(Array.from({ length: 8 }, async () => { for (let i = 0; i < 250; i++) times.push(await one()); }));
      const wall = performance.now() - t0;
      times.sort((a, b) => a - b);
      return { p50: times[Math.floor(times.length * 0.5)]!, p99: times[Math.floor(times.length * 0.99)]!, rps: times.length / (wall / 1000) };
    };
    const plain = await startTestGateway();
    const without = await measure(plain);
    await plain.close();
    const recorded = await startTestGateway();
    const history = await openUsageHistory({ dir: recorded.dir, config: undefined, log: () => {} });
    const rec = recordUsage(history, recorded.daemon.ctx.bus, () => {});
    const withRec = await measure(recorded);
    rec.flush();
    expect(rec.store.count()).toBe(2200);
    console.log(`daemon, 2,000 requests, 8 concurrent: without recorder p50 ${without.p50.toFixed(2)} ms, p99 ${without.p99.toFixed(2)} ms, ${without.rps.toFixed(0)} req/s; `
      + `with recorder p50 ${withRec.p50.toFixed(2)} ms, p99 ${withRec.p99.toFixed(2)} ms, ${withRec.rps.toFixed(0)} req/s; flushes ${rec.stats.flushes}, max flush ${rec.stats.maxFlushMs.toFixed(2)} ms`);
    // Loose on purpose: other test files share the machine. A write per request would blow it.
    expect(withRec.p50).toBeLessThan(without.p50 * 2 + 5);
    await rec.close();
    await recorded.close();
  }, 60_000);
});
