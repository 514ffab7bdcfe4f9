// What the recorder does on the request path: nothing but queue. Rows reach SQLite only in the
// batched flush. (What it costs in time is measured by `npm run bench`, not asserted here.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/daemon/observe/events.js';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { UsageRecorder } from '../../src/daemon/observe/usage/recorder.js';
import { UsageStore } from '../../src/daemon/observe/usage/store.js';

const prices = buildPriceTable(readShippedPrices()).table;
let dir: string;
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'gateway-overhead-')); });
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

describe('recorder batching', () => {
  it('writes nothing on the request path, everything in the batched flush', async () => {
    const store = await UsageStore.open(join(dir, 'micro.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 3_600_000, maxBatch: 1e9 }).start();
    const n = 50_000;
    const publish = (id: string) => {
      bus.publish({ type: 'started', id, time: Date.now(), keyId: 'k', keyName: 'app', mode: 'unified', provider: 'openai', model: 'gpt-4o', method: 'POST', path: '/v1/chat/completions', stream: true, requestBytes: 200 });
      bus.publish({ type: 'first_byte', id, time: Date.now(), ttfbMs: 120 });
      bus.publish({ type: 'finished', id, time: Date.now(), status: 200, durationMs: 900, ttfbMs: 120, outputBytes: 4000, usage: { inputTokens: 1200, outputTokens: 300, cachedTokens: 1024 }, model: 'gpt-4o-2024-08-06' });
    };
    for (let i = 0; i < n; i++) publish(`r${i}`);
    expect(store.count()).toBe(0); // nothing written while requests finish
    rec.flush();
    expect(store.count()).toBe(n); // everything written by one batched flush
    await rec.close();
  });
});
