// A shared store that stops answering after the daemon started (a network partition, a hung host:
// the connections stay open and nothing comes back), as against one that refuses. The heartbeat
// must notice it (status says degraded) and a read on the request path must end in a 503 rather
// than wait for as long as the operating system keeps the connection, which on loopback is forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/daemon/http/errors.js';
import { PgResponseStore } from '../../src/daemon/store/pg-responses.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startStallProxy, type StallProxy } from '../helpers/stall-proxy.js';
import { until } from '../helpers/wait.js';

let postgres: TestPostgres;
let relay: StallProxy;
let url: string;
const opened: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  postgres = await startPostgres();
  relay = await startStallProxy(postgres.port);
  url = (await postgres.database('silent')).replace(`:${postgres.port}/`, `:${relay.port}/`);
}, 120_000);
afterAll(async () => {
  relay?.thaw();
  for (const s of opened.reverse()) await s.close().catch(() => {});
  await relay?.close();
  postgres?.destroy();
});

const BIG = { retentionDays: 30, maxBytes: 1 << 30 };

describe('a store that goes silent after the start', () => {
  it('a Responses read is a 503 and the store counts as down, with no request to a limited key needed', async () => {
    const writer = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'a', log: () => {} });
    const reader = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'b', log: () => {} });
    const a = new PgResponseStore(writer, BIG, { arrivalWaitMs: 50 });
    const b = new PgResponseStore(reader, BIG, { arrivalWaitMs: 50 });
    opened.push(writer, reader, a, b);
    await reader.startHeartbeat();
    const id = 'resp_silent1';
    a.put({ id, keyId: 'k1', createdAt: Date.now(), previousId: null, input: ['in'], output: ['out'], response: { id } });
    await a.flush();
    expect((await b.get(id, 'k1'))?.id).toBe(id);

    relay.freeze();
    try {
      // Served from the database only: the read must end, as the unavailable store's 503.
      const failure = await b.get(id, 'k1').then(() => undefined, (e: unknown) => e);
      expect(failure).toBeInstanceOf(GatewayError);
      expect((failure as GatewayError).code).toBe('response_store_unavailable');
      // And the daemon knows: status, doctor and the dashboard say degraded.
      await until('the store to count as down', () => !reader.status().connected, 60_000);
    } finally {
      relay.thaw();
    }
    await until('the store to count as up again', () => reader.status().connected, 60_000);
  }, 90_000);
});
