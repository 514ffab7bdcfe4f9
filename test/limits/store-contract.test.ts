// The limit store boundary (limits/store.ts), held to one contract by both of its stores: the
// laptop's SQLite store and the PostgreSQL store several daemons share. The same windows, claims,
// budgets and idempotent settlements, decided the same way; and on PostgreSQL, three daemons'
// stores reserving at once never let a key past its limits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_MS, type KeyLimits } from '../../src/daemon/limits/limits.js';
import { PgLimitStore } from '../../src/daemon/limits/pg-store.js';
import { SqliteLimitStore } from '../../src/daemon/limits/sqlite-store.js';
import type { Claim, LimitStore } from '../../src/daemon/limits/store.js';
import { migrate } from '../../src/daemon/observe/usage/schema.js';
import { migratePg, PG_SCHEMA_VERSION } from '../../src/daemon/store/pg-schema.js';
import { openDatabase } from '../../src/daemon/store/sqlite.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
let seq = 0;

interface Backend { name: string; open(): Promise<LimitStore>; teardown(): Promise<void> }

let postgres: TestPostgres;
const pools: pg.Pool[] = [];
/** A pool ended before the server stops; a connection the stopping server cuts meanwhile is no test's failure. */
const pool = (connectionString: string, max: number): pg.Pool => {
  const p = new pg.Pool({ connectionString, max });
  p.on('error', () => {});
  pools.push(p);
  return p;
};
beforeAll(async () => { postgres = await startPostgres(); }, 120_000);
afterAll(async () => {
  await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
  postgres?.destroy();
});

const sqlite = (): Backend => {
  const dir = mkdtempSync(join(tmpdir(), 'limit-contract-'));
  return {
    name: 'sqlite',
    open: async () => new SqliteLimitStore(await openDatabase(join(dir, 'usage.db'), { setup: migrate }), () => T0),
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
  };
};

let dbs = 0;
async function freshDatabase(): Promise<string> {
  const url = await postgres.database(`limits_${++dbs}`);
  const db = new pg.Pool({ connectionString: url, max: 2 });
  await migratePg(db);
  await db.end();
  return url;
}

const postgresBackend = async (): Promise<Backend> => {
  const url = await freshDatabase();
  return {
    name: 'postgres',
    open: async () => { const p = pool(url, 8); return new PgLimitStore(p, () => p.end()); },
    teardown: async () => {},
  };
};

const claim = (keyId: string, over: Partial<Claim> = {}): Claim => ({ requestId: `r${++seq}`, keyId, at: T0, tokens: 100, usd: 0.01, expiresAt: T0 + 600_000, ...over });

describe.each([['sqlite', async () => sqlite()], ['postgres', postgresBackend]] as const)('%s store', (_name, make) => {
  let backend: Backend;
  let store: LimitStore;
  beforeAll(async () => { backend = await make(); store = await backend.open(); });
  afterAll(async () => { await store.close(); await backend.teardown(); });

  it('rpm: N back to back, then one each time the oldest leaves the minute, with the exact wait', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 3 };
    for (const dt of [0, 10_000, 20_000]) expect(await store.reserve(limits, claim(key, { at: T0 + dt }))).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { at: T0 + 30_000 }))).toMatchObject({ ok: false, limit: 'rpm', max: 3, used: 3, retryAfterMs: 30_000 });
    expect(await store.reserve(limits, claim(key, { at: T0 + 59_999 }))).toMatchObject({ ok: false, retryAfterMs: 1 });
    expect(await store.reserve(limits, claim(key, { at: T0 + 60_000 }))).toEqual({ ok: true });
  });

  it('tpm: the worst case is held until settled, then what was used; the wait is when enough has left', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { tpm: 1000 };
    const a = claim(key, { tokens: 600 });
    expect(await store.reserve(limits, a)).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { tokens: 500, at: T0 + 5000 }))).toMatchObject({ ok: false, limit: 'tpm', held: 600, asked: 500, retryAfterMs: 55_000 });
    await store.settle(a, { tokens: 200, usd: 0 });
    expect(await store.reserve(limits, claim(key, { tokens: 500, at: T0 + 5000 }))).toEqual({ ok: true });
    // Larger than the whole limit: it runs alone, once nothing is left in the minute.
    expect(await store.reserve(limits, claim(key, { tokens: 1001, at: T0 + 5000 }))).toMatchObject({ ok: false, limit: 'tpm', asked: 1001, retryAfterMs: 60_000 });
    expect(await store.reserve(limits, claim(key, { tokens: 1001, at: T0 + 65_000 }))).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { tokens: 1, at: T0 + 65_000 }))).toMatchObject({ ok: false, limit: 'tpm' });
  });

  it('concurrency: claims count until settled or expired', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { concurrency: 2 };
    const a = claim(key);
    expect(await store.reserve(limits, a)).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { expiresAt: T0 + 1000 }))).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key))).toMatchObject({ ok: false, limit: 'concurrency', retryAfterMs: 1000 });
    await store.settle(a, { tokens: 10, usd: 0 });
    expect(await store.reserve(limits, claim(key))).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key))).toMatchObject({ ok: false, limit: 'concurrency' });
    expect(await store.reserve(limits, claim(key, { at: T0 + 1000 }))).toEqual({ ok: true }); // the one that expired is released
  });

  it('300 reservations at once: exactly as many as the limits allow', async () => {
    const burst = async (limits: KeyLimits, over: Partial<Claim> = {}) => {
      const key = `k${++seq}`;
      return (await Promise.all(Array.from({ length: 300 }, () => store.reserve(limits, claim(key, over))))).filter((v) => v.ok).length;
    };
    expect(await burst({ rpm: 40 })).toBe(40);
    expect(await burst({ tpm: 10_000 }, { tokens: 300 })).toBe(33);
    expect(await burst({ budget: { usd: 1, period: 'week' } }, { usd: 0.01 })).toBe(100);
  });

  it('budget: claims in flight are held, a settlement counts once, a new period starts from nothing', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 0.05, period: 'day' } };
    const held = [claim(key, { usd: 0.02 }), claim(key, { usd: 0.02 })];
    for (const c of held) expect(await store.reserve(limits, c)).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { usd: 0.02 }))).toMatchObject({ ok: false, limit: 'budget', used: 0, held: 0.04, asked: 0.02, resetAt: Date.parse('2026-11-28T00:00:00Z') });
    await store.settle(held[0]!, { tokens: 50, usd: 0.004 });
    await store.settle(held[0]!, { tokens: 50, usd: 0.004 });
    await store.settle(held[1]!, { tokens: 50, usd: 0.006 });
    const standing = (await store.standing(key, limits, T0)).budget!;
    expect(standing.spent).toBeCloseTo(0.01, 12);
    expect(standing).toMatchObject({ held: 0, max: 0.05, period: 'day' });
    expect(await store.reserve(limits, claim(key, { usd: 0.04 }))).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { usd: 0.001 }))).toMatchObject({ ok: false, limit: 'budget' });
    const tomorrow = Date.parse('2026-11-28T00:00:00Z');
    expect(await store.reserve(limits, claim(key, { usd: 0.04, at: tomorrow, expiresAt: tomorrow + 600_000 }))).toEqual({ ok: true });
  });
});

describe('three daemons on one PostgreSQL store', () => {
  let stores: LimitStore[];
  beforeAll(async () => {
    const url = await freshDatabase();
    stores = [0, 1, 2].map(() => new PgLimitStore(pool(url, 8)));
  });

  it('reserving at once, they never let a key past its rpm, its concurrency or its budget', async () => {
    const burst = async (key: string, limits: KeyLimits, n: number, over: Partial<Claim> = {}) => {
      const verdicts = await Promise.all(Array.from({ length: n }, (_, i) => stores[i % 3]!.reserve(limits, claim(key, over))));
      return verdicts.filter((v) => v.ok).length;
    };
    expect(await burst(`k${++seq}`, { rpm: 50 }, 300)).toBe(50);
    expect(await burst(`k${++seq}`, { concurrency: 7 }, 100)).toBe(7);
    expect(await burst(`k${++seq}`, { budget: { usd: 1, period: 'month' } }, 300, { usd: 0.01 })).toBe(100);
  });

  it('a settlement through any daemon counts once', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 1, period: 'total' } };
    const c = claim(key, { usd: 0.5 });
    expect(await stores[0]!.reserve(limits, c)).toEqual({ ok: true });
    await Promise.all(stores.map((s) => s.settle(c, { tokens: 10, usd: 0.25 })));
    expect((await stores[2]!.standing(key, limits, T0)).budget).toMatchObject({ spent: 0.25, held: 0, left: 0.75 });
  });

  it('a database of a newer schema is refused with a clear message', async () => {
    const db = pool(await freshDatabase(), 1);
    await db.query('INSERT INTO gateway_schema (version, description) VALUES ($1, $2)', [PG_SCHEMA_VERSION + 1, 'from the future']);
    await expect(migratePg(db)).rejects.toThrow(/newer than this gateway understands/);
  });
});

describe('PostgreSQL: settlements written back after an outage, and old claims pruned', () => {
  let store: PgLimitStore;
  beforeAll(async () => {
    store = new PgLimitStore(pool(await freshDatabase(), 4));
  });

  it('a write-back counts each request once: an open claim is settled, a missing one added, a repeat or a late settlement changes nothing', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 1, period: 'day' }, rpm: 10 };
    const open = claim(key, { usd: 0.3 });
    expect(await store.reserve(limits, open)).toEqual({ ok: true });
    const rows = [
      { requestId: open.requestId, keyId: key, at: T0, tokens: 50, usd: 0.1 }, // reserved here, settled while the store was away
      { requestId: `r${++seq}`, keyId: key, at: T0 + 1000, tokens: 60, usd: 0.2 }, // reserved and settled on a daemon's share
    ];
    await store.record(rows);
    await store.record(rows);
    await store.settle(open, { tokens: 50, usd: 0.1 });
    const s = await store.standing(key, limits, T0 + 2000);
    expect(s.budget!.spent).toBeCloseTo(0.3, 12);
    expect(s.budget!.held).toBe(0);
    expect(s.rpm).toEqual({ max: 10, used: 2 });
    // The next decision counts them: $0.70 is left, and not a cent more.
    expect(await store.reserve(limits, claim(key, { usd: 0.7, at: T0 + 2000 }))).toEqual({ ok: true });
    expect(await store.reserve(limits, claim(key, { usd: 0.01, at: T0 + 2000 }))).toMatchObject({ ok: false, limit: 'budget' });
  });

  it('pruning drops the claims older than any window or period needs, and a total budget still counts their spend', async () => {
    const key = `k${++seq}`;
    const total: KeyLimits = { budget: { usd: 10, period: 'total' } };
    const DAY = 86_400_000;
    const old = claim(key, { at: T0 - 50 * DAY, expiresAt: T0 - 50 * DAY + 600_000, usd: 1 });
    const vanished = claim(key, { at: T0 - 45 * DAY, expiresAt: T0 - 45 * DAY + 600_000, usd: 2 }); // its request never settled
    const recent = claim(key, { usd: 0.5 });
    for (const c of [old, vanished, recent]) expect(await store.reserve(total, c)).toEqual({ ok: true });
    await store.settle(old, { tokens: 10, usd: 1 });
    await store.settle(recent, { tokens: 10, usd: 0.5 });

    expect(await store.prune(T0)).toBe(2);
    expect(await store.prune(T0)).toBe(0);
    expect((await store.standing(key, total, T0)).budget).toMatchObject({ spent: 1.5, held: 0 });
    // Another zone is another period id: its spend is read again from the claims left and what was folded.
    const rezoned: KeyLimits = { budget: { usd: 1.6, period: 'total' }, tz: 'Europe/Berlin' };
    expect(await store.reserve(rezoned, claim(key, { usd: 0.2 }))).toMatchObject({ ok: false, limit: 'budget', used: 1.5 });
    expect(await store.reserve(rezoned, claim(key, { usd: 0.1 }))).toEqual({ ok: true });
  });
});

describe('PostgreSQL at a busy key\'s rate: windows in per-second buckets, settlements in batches', () => {
  let url: string;
  let store: PgLimitStore;
  /** The statements the store sent, by the function they call. */
  const sent: string[] = [];
  beforeAll(async () => {
    url = await freshDatabase();
    const p = pool(url, 4);
    store = new PgLimitStore({ query: (text, values) => { sent.push(/limit_\w+/.exec(text)?.[0] ?? text); return p.query(text, values); } });
  });

  it('a bucket counts until its latest admission leaves the window: two in one second at the edge refuse early, by less than that second, never admit late', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 2 };
    for (const dt of [100, 900]) expect(await store.reserve(limits, claim(key, { at: T0 + dt }))).toEqual({ ok: true });
    // Exactly, the admission at +100 has left at +60 100; its bucket holds the one at +900 too.
    expect(await store.reserve(limits, claim(key, { at: T0 + 60_100 }))).toMatchObject({ ok: false, limit: 'rpm', used: 2, retryAfterMs: 800 });
    expect(await store.reserve(limits, claim(key, { at: T0 + 60_900 }))).toEqual({ ok: true });
  });

  it('over minutes of bursts, no sliding window ever holds more than the limit, and every retry-after is exact or up to a second late', async () => {
    const key = `k${++seq}`;
    const rpm = 7;
    const admitted: number[] = [];
    let rand = 42;
    const next = () => (rand = (rand * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let t = T0;
    for (let i = 0; i < 400; i++) {
      t += next() < 0.7 ? Math.floor(next() * 300) : Math.floor(next() * 9000);
      const v = await store.reserve({ rpm }, claim(key, { at: t }));
      const inWindow = admitted.filter((a) => a > t - WINDOW_MS);
      if (v.ok) {
        admitted.push(t);
        expect(inWindow.length + 1).toBeLessThanOrEqual(rpm);
      } else {
        expect(v.limit).toBe('rpm');
        // Exactly, the request fits once enough of the oldest admissions have left the window.
        const exact = inWindow.length >= rpm ? inWindow[inWindow.length - rpm]! + WINDOW_MS - t : 0;
        expect(v.retryAfterMs!).toBeGreaterThanOrEqual(exact);
        expect(v.retryAfterMs!).toBeLessThan(exact + 1000);
      }
    }
    expect(admitted.length).toBeGreaterThan(50); // the bursts did reach the limit and leave it again
  });

  it('a key\'s reservations made at once go in two calls, decided in the order they came', async () => {
    const key = `k${++seq}`;
    sent.length = 0;
    const verdicts = await Promise.all(Array.from({ length: 50 }, (_, i) => store.reserve({ rpm: 20 }, claim(key, { at: T0 + i }))));
    expect(sent).toEqual(['limit_reserve_many', 'limit_reserve_many']); // the first alone, the rest while it was out
    expect(verdicts.map((v) => v.ok)).toEqual(Array.from({ length: 50 }, (_, i) => i < 20));
  });

  it('settlements made at once go to the store together, each counted once', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 10, period: 'day' } };
    const claims = Array.from({ length: 40 }, () => claim(key, { usd: 0.1 }));
    for (const c of claims) expect(await store.reserve(limits, c)).toEqual({ ok: true });
    sent.length = 0;
    await Promise.all([...claims, ...claims].map((c) => store.settle(c, { tokens: 10, usd: 0.05 })));
    expect(sent).toEqual(['limit_settle_many']);
    expect((await store.standing(key, limits, T0)).budget).toMatchObject({ held: 0 });
    expect((await store.standing(key, limits, T0)).budget!.spent).toBeCloseTo(2, 9);
  });

  it('a settlement whose claim the store lost (a server crash after its reservation) adds it, once, to its window and its budget', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 1, period: 'day' }, rpm: 1, tpm: 1000 };
    const first = claim(key, { at: T0 - 1000, usd: 0 });
    expect(await store.reserve(limits, first)).toEqual({ ok: true }); // the key's period is known
    await store.settle(first, { tokens: 0, usd: 0 });
    const lost = claim(key, { at: T0 + 30_000, usd: 0.5 });
    await store.settle(lost, { tokens: 700, usd: 0.4 });
    await store.settle(lost, { tokens: 700, usd: 0.4 });
    const s = await store.standing(key, limits, T0 + 30_000);
    expect(s.budget!.spent).toBeCloseTo(0.4, 12);
    expect(s.tpm).toEqual({ max: 1000, used: 700 });
    expect(await store.reserve(limits, claim(key, { at: T0 + 61_000, usd: 0.5, tokens: 100 }))).toMatchObject({ ok: false, limit: 'rpm', retryAfterMs: 29_000 });
    expect(await store.reserve(limits, claim(key, { at: T0 + 90_000, usd: 0.7, tokens: 100 }))).toMatchObject({ ok: false, limit: 'budget', used: expect.closeTo(0.4, 9) });
  });

  it('a voided claim leaves its window, and its request id cannot be reserved after', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 1 };
    const c = claim(key);
    expect(await store.reserve(limits, c)).toEqual({ ok: true });
    await store.release([{ requestId: c.requestId, keyId: key }]);
    expect(await store.reserve(limits, claim(key))).toEqual({ ok: true });
    const late = claim(key, { at: T0 + 120_000 });
    await store.release([{ requestId: late.requestId, keyId: key }]);
    await expect(store.reserve(limits, late)).rejects.toThrow(/taken already/);
  });
});

it('PostgreSQL: a reservation commits without waiting for the disk, a batch of settlements durably (pg-store.ts says what a server crash can lose)', async () => {
  const c = new pg.Client({ connectionString: await freshDatabase() });
  await c.connect();
  try {
    const commitMode = async (call: string, values: unknown[]) => {
      await c.query('BEGIN');
      await c.query(call, values);
      const { rows: [r] } = await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      await c.query('COMMIT');
      return r!.synchronous_commit;
    };
    expect(await commitMode('SELECT * FROM limit_reserve($1, $2, $3, 100, 0, $4, 10, NULL, NULL, NULL, \'\', 0, 60000)', ['k', 'r1', T0, T0 + 600_000])).toBe('off');
    expect(await commitMode('SELECT limit_settle_many($1, $2, $3, $4, $5)', [['r1'], ['k'], [T0], [50], [0]])).toBe('on');
    const { rows: [s] } = await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    expect(s!.synchronous_commit).toBe('on'); // the reservation's setting ended with its transaction
  } finally {
    await c.end();
  }
});
