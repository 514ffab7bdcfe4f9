// The Responses store's rules, held by both stores (store/responses.ts): the laptop's SQLite file and
// team mode's PostgreSQL table (store/pg-responses.ts), against a real PostgreSQL server. Another
// key sees nothing; retention is judged on read; a chain reads oldest first and breaks at a missing,
// expired or held link; a deletion is at once; the size cap drops the oldest. Then what only the
// shared store has, with two daemons' stores on one database: an answer put on one is read on the
// other at once; a read that comes before the insert has committed waits for its notification;
// with the database stopped, new answers wait in memory and reach it when it returns, while what
// only the database holds is a 503 (not a 404).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/daemon/http/errors.js';
import { PgResponseStore, type PgResponseOptions } from '../../src/daemon/store/pg-responses.js';
import { SqliteResponseStore, type ResponseStore, type ResponsesSettings, type StoredResponse } from '../../src/daemon/store/responses.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const DAY = 86_400_000;
const BIG = { retentionDays: 30, maxBytes: 1 << 30 };
let t = Date.UTC(2026, 10, 27);
const clock = () => t;
let seq = 0;

let postgres: TestPostgres;
const opened: Array<{ close(): Promise<void> }> = [];
const dirs: string[] = [];
beforeAll(async () => { postgres = await startPostgres(); }, 120_000);
afterAll(async () => {
  for (const s of opened.reverse()) await s.close().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  postgres?.destroy();
});

let dbs = 0;
const freshDatabase = (): Promise<string> => postgres.database(`responses_${++dbs}`);

/** One daemon's view of the database: its own SharedStore (pool, listening connection) and response store. */
async function daemonStore(url: string, name: string, settings: ResponsesSettings = BIG, o: PgResponseOptions = {}): Promise<PgResponseStore> {
  const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: name, log: () => {} });
  const store = new PgResponseStore(shared, settings, { clock, ...o });
  opened.push(shared, store); // closed in reverse: the store first
  return store;
}

const answer = (keyId: string, over: Partial<StoredResponse> = {}): StoredResponse => {
  const id = `resp_t${++seq}`;
  return { id, keyId, createdAt: t, previousId: null, input: [`in ${id}`], output: [`out ${id}`], response: { id, output: [`out ${id}`] }, ...over };
};

type Backend = (settings?: ResponsesSettings) => Promise<ResponseStore & { prune(): void | Promise<void> }>;
const sqlite: Backend = async (settings = BIG) => {
  const dir = mkdtempSync(join(tmpdir(), 'responses-contract-'));
  dirs.push(dir);
  const s = new SqliteResponseStore(dir, settings, clock);
  opened.push(s);
  return s;
};
// A short wait for a link no daemon is writing (a deleted one): the misses here are real.
const postgresStore: Backend = async (settings = BIG) => daemonStore(await freshDatabase(), 'contract', settings, { arrivalWaitMs: 50 });

describe.each([['sqlite', sqlite], ['postgres', postgresStore]] as const)('the %s store', (_name, open) => {
  let store: ResponseStore & { prune(): void | Promise<void> };
  beforeAll(async () => { store = await open(); });

  it('keeps an answer for its own key only: another key can neither read, continue nor delete it', async () => {
    const r = answer('k1');
    store.put(r);
    await store.flush();
    expect((await store.get(r.id, 'k1'))?.response).toEqual(r.response);
    expect(await store.get(r.id, 'k2')).toBeUndefined();
    expect(await store.conversation(r.id, 'k2')).toBeUndefined();
    expect(await store.delete(r.id, 'k2')).toBe(false);
    expect((await store.get(r.id, 'k1'))?.id).toBe(r.id);
  });

  it('judges the retention on read, by its clock', async () => {
    const r = answer('k1');
    store.put(r);
    await store.flush();
    const start = t;
    try {
      t = start + 29 * DAY;
      expect((await store.get(r.id, 'k1'))?.id).toBe(r.id);
      t = start + 31 * DAY;
      expect(await store.get(r.id, 'k1')).toBeUndefined();
      expect(await store.conversation(r.id, 'k1')).toBeUndefined();
    } finally { t = start; }
  });

  it('reads a chain oldest first; a held answer is its provider\'s; a missing link breaks the chain', async () => {
    const r1 = answer('k1');
    const r2 = answer('k1', { previousId: r1.id });
    const r3 = answer('k1', { previousId: r2.id });
    for (const r of [r1, r2, r3]) store.put(r);
    await store.flush();
    expect(await store.conversation(r3.id, 'k1')).toEqual({ items: [r1, r2, r3].flatMap((r) => [...r.input, ...r.output]) });
    store.putHeld('resp_held_1', 'k1', 'openai');
    const after = answer('k1', { previousId: 'resp_held_1' });
    store.put(after);
    await store.flush();
    expect(await store.conversation('resp_held_1', 'k1')).toEqual({ heldBy: 'openai' });
    expect(await store.conversation(after.id, 'k1')).toBeUndefined();

    expect(await store.delete(r2.id, 'k1')).toBe(true);
    expect(await store.get(r2.id, 'k1')).toBeUndefined();
    expect(await store.conversation(r3.id, 'k1')).toBeUndefined();
    await store.flush();
    expect(await store.get(r2.id, 'k1')).toBeUndefined();
    expect(await store.conversation(r1.id, 'k1')).toEqual({ items: [...r1.input, ...r1.output] });
  });

  it('drops the oldest answers beyond the size cap', async () => {
    const capped = await open({ retentionDays: 30, maxBytes: 3_000 });
    const big = 'x'.repeat(900);
    const made: StoredResponse[] = [];
    for (let i = 0; i < 5; i++) { t += 1000; made.push(answer('k1', { input: [big], response: { i } })); capped.put(made[i]!); }
    await capped.flush();
    await capped.prune();
    const kept = await Promise.all(made.map(async (r) => (await capped.get(r.id, 'k1')) !== undefined));
    expect(kept).toEqual([false, false, true, true, true]);
  });
});

describe('daemons on one database', () => {
  let url: string;
  // `a` and `b` wait a minute for an answer not committed yet: a read that finds it was woken by its
  // notification. `quick` gives up after 50 ms, for what must be a miss.
  let a: PgResponseStore;
  let b: PgResponseStore;
  let quick: PgResponseStore;
  beforeAll(async () => {
    url = await freshDatabase();
    a = await daemonStore(url, 'a', BIG, { arrivalWaitMs: 60_000 });
    b = await daemonStore(url, 'b', BIG, { arrivalWaitMs: 60_000 });
    quick = await daemonStore(url, 'quick', BIG, { arrivalWaitMs: 50 });
  });

  it('an answer put on one is read on the other at once, its chain too, and deleted for both', async () => {
    const r1 = answer('k1');
    a.put(r1);
    const r2 = answer('k1', { previousId: r1.id });
    b.put(r2); // not flushed: written in the background
    const r3 = answer('k1', { previousId: r2.id });
    a.put(r3);
    expect(await b.conversation(r3.id, 'k1')).toEqual({ items: [r1, r2, r3].flatMap((r) => [...r.input, ...r.output]) });
    expect((await a.get(r2.id, 'k1'))?.response).toEqual(r2.response);
    expect(await a.delete(r2.id, 'k1')).toBe(true);
    expect(await quick.get(r2.id, 'k1')).toBeUndefined();
    expect(await quick.conversation(r3.id, 'k1')).toBeUndefined();
  });

  it('a read that comes before the insert has committed waits for its notification, not for the timer', async () => {
    const patient = await daemonStore(url, 'patient', BIG, { arrivalWaitMs: 600_000 });
    // Inserts wait on this lock (reads do not), so the read surely finds nothing first.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE responses IN SHARE ROW EXCLUSIVE MODE');
    const r = answer('k1');
    a.put(r);
    const read = patient.get(r.id, 'k1');
    await expect.poll(() => patient.waiting).toBe(1);
    await holder.query('COMMIT');
    await holder.end();
    expect((await read)?.id).toBe(r.id);
    expect(patient.stats).toEqual({ waited: 1, woken: 1 });
  });

  it('a read on the daemon that wrote an answer, while its insert\'s reply is on the way, waits for it: a deletion committed on another daemon meanwhile is seen', async () => {
    // This daemon's insert commits, but its reply is held here (a loaded machine): the answer is still in its memory.
    const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'slow', log: () => {} });
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const query = shared.query.bind(shared);
    shared.query = (async (text: string, values?: unknown[], ms?: number) => {
      const r = await query(text, values, ms);
      if (text.includes('INSERT INTO responses')) await held;
      return r;
    }) as typeof shared.query;
    const slow = new PgResponseStore(shared, BIG, { clock, arrivalWaitMs: 50, insertWaitMs: 600_000 });
    opened.push(shared, slow);
    const r = answer('k1');
    slow.put(r);
    expect((await b.get(r.id, 'k1'))?.id).toBe(r.id); // committed
    expect(await b.delete(r.id, 'k1')).toBe(true);
    const read = slow.get(r.id, 'k1');
    await expect.poll(() => slow.waiting).toBe(1);
    release();
    expect(await read).toBeUndefined();
  });

  it('an id no daemon is writing is a miss once the wait is over', async () => {
    const before = { ...quick.stats };
    expect(await quick.get('resp_nobody', 'k1')).toBeUndefined();
    expect(quick.stats).toEqual({ waited: before.waited + 1, woken: before.woken });
  });

  it('another key\'s answer is refused without waiting', async () => {
    const r = answer('k1');
    a.put(r);
    await a.flush();
    const before = { ...b.stats };
    expect(await b.get(r.id, 'k2')).toBeUndefined();
    expect(b.stats).toEqual(before);
  });

  // Last: it stops the server.
  it('with the database stopped: new answers are kept and read here, written when it returns; what only it holds is a 503', async () => {
    const old = answer('k1');
    a.put(old);
    await a.flush();
    postgres.stop();
    try {
      const fresh = answer('k1', { previousId: old.id });
      a.put(fresh);
      expect((await a.get(fresh.id, 'k1'))?.id).toBe(fresh.id);
      for (const read of [() => a.get(old.id, 'k1'), () => a.conversation(fresh.id, 'k1'), () => b.get(fresh.id, 'k1')]) {
        const err = await read().then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(GatewayError);
        expect(err).toMatchObject({ code: 'response_store_unavailable', status: 503 });
        expect((err as Error).message).toMatch(/cannot be read now: the store at gw@127\.0\.0\.1:\d+\/responses_\d+: .*; try again shortly/);
      }
      postgres.start();
      // Once the daemons find the database again, the answer kept on `a` is written and another reads the whole chain.
      await expect.poll(async () => quick.conversation(fresh.id, 'k1').catch(() => 'unreachable'), { timeout: 30_000, interval: 200 })
        .toEqual({ items: [old, fresh].flatMap((r) => [...r.input, ...r.output]) });
    } finally {
      try { postgres.start(); } catch { /* already running */ }
    }
  }, 60_000);
});
