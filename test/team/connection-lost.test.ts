// A connection to the shared store that is lost while a transaction holds it (PostgreSQL restarted,
// the backend terminated, the network reset) fails that change as "store unavailable"; it must not
// end the daemon. node-pg emits 'error' on a client the pool has handed out, and the pool listens
// only while the client is idle in it: with nobody listening, that 'error' is an uncaught exception.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStoreUnavailable } from '../../src/daemon/store/key-records.js';
import { PgKeyRecords } from '../../src/daemon/store/pg-keys.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';

let postgres: TestPostgres;
let url: string;
/** `url` through a loopback relay whose connections the test can cut (closed under the client, no error message first). */
let relayed: string;
const sockets = new Set<Socket>();
const relay = createServer((client) => {
  const server = connect(postgres.port, '127.0.0.1');
  for (const s of [client, server]) { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); }
  client.pipe(server).pipe(client);
});
const cut = () => { for (const s of sockets) s.destroy(); };
beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.database('lost');
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  relayed = url.replace(`:${postgres.port}/`, `:${(relay.address() as AddressInfo).port}/`);
}, 120_000);
afterAll(async () => {
  cut();
  await new Promise((r) => relay.close(r));
  postgres?.destroy();
});

describe('a connection lost in the middle of a transaction', () => {
  it('cut under a waiting key creation: the creation fails as unavailable, and the process carries on', async () => {
    const shared = await SharedStore.open({ store: parseStoreUrl(relayed), daemonId: 'lost', log: () => {} });
    const admin = new pg.Client({ connectionString: url });
    const watcher = new pg.Client({ connectionString: url });
    await admin.connect();
    await watcher.connect();
    try {
      const keys = new PgKeyRecords(shared);
      // Another key creation holds the keys' lock, so this one's transaction waits inside the store.
      await admin.query('BEGIN');
      await admin.query('SELECT pg_advisory_xact_lock($1)', [0x6b65_7973]);
      const creating = keys.create({ name: 'cut-off' }).then(() => undefined, (e: unknown) => e);
      await until('the creation to wait for the lock', async () => {
        const { rows } = await watcher.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'model-gateway lost' AND wait_event_type = 'Lock'");
        return rows.length > 0;
      });
      cut();
      expect(await creating).toBeInstanceOf(KeyStoreUnavailable);
      await admin.query('ROLLBACK');
      // Still working: the pool makes a new connection and the next change goes through.
      await until('the store to answer again', async () => { await shared.query('SELECT 1').catch(() => undefined); return shared.status().connected; });
      expect((await keys.create({ name: 'after' })).record.name).toBe('after');
    } finally {
      await admin.end();
      await watcher.end();
      await shared.close();
    }
  }, 60_000);
});
