// Leases of a busy key's headroom on the PostgreSQL limit store (limits/pg-store.ts): a key far
// from its limits costs a few calls for many requests, what it reports afterwards is what its
// requests used, and however three daemons' stores lease and admit at once, no sliding window,
// budget or concurrency limit is ever exceeded. Time is the claims' own admission times, never
// the wall clock's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaseState } from '../../src/daemon/limits/lease.js';
import { WINDOW_MS, type KeyLimits } from '../../src/daemon/limits/limits.js';
import { PgLimitStore, type Queryable } from '../../src/daemon/limits/pg-store.js';
import type { Claim, Refused, Verdict } from '../../src/daemon/limits/store.js';
import { refusal } from '../../src/daemon/limits/limiter.js';
import { TeamLimitStore } from '../../src/daemon/limits/team-store.js';
import { migratePg } from '../../src/daemon/store/pg-schema.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startStallProxy } from '../helpers/stall-proxy.js';
import { until } from '../helpers/wait.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
let seq = 0;
let postgres: TestPostgres;
let db: pg.Pool;
const pools: pg.Pool[] = [];

const pool = (url: string): pg.Pool => {
  const p = new pg.Pool({ connectionString: url, max: 6 });
  p.on('error', () => {});
  pools.push(p);
  return p;
};

beforeAll(async () => {
  postgres = await startPostgres();
  const url = await postgres.database('leases');
  db = pool(url);
  await migratePg(db);
}, 120_000);
afterAll(async () => {
  await Promise.all(pools.filter((p) => !p.ended).map((p) => p.end()));
  postgres?.destroy();
});

/** A store on the test database whose calls are counted by the function they call; `cut()` makes every later call fail (a daemon gone). */
function store(): { store: PgLimitStore; calls: string[]; cut: () => void } {
  const calls: string[] = [];
  let dead = false;
  const p = pool(db.options.connectionString!);
  const q: Queryable = {
    query: (text, values) => {
      if (dead) return Promise.reject(new Error('this daemon is gone'));
      calls.push(/limit_\w+/.exec(text)?.[0] ?? text);
      return p.query(text, values);
    },
  };
  return { store: new PgLimitStore(q), calls, cut: () => { dead = true; } };
}

const claim = (keyId: string, at: number, over: Partial<Claim> = {}): Claim => ({ requestId: `r${++seq}`, keyId, at, tokens: 100, usd: 0.01, expiresAt: at + 600_000, ...over });

/** A small deterministic random source (the same bursts every run). */
function random(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

async function leaseRows(keyId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM limit_claims WHERE key_id = $1 AND request_id LIKE 'lease:%'", [keyId]);
  return Number(rows[0]!.n);
}

/** The counters the store decides by: the window's requests and tokens at `now`, the key's requests in flight, held USD and spend. */
async function counters(keyId: string, now: number) {
  const { rows: [w] } = await db.query<{ requests: string; tokens: string }>(
    'SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(tokens), 0) AS tokens FROM limit_windows WHERE key_id = $1 AND last_at > $2',
    [keyId, now - WINDOW_MS]);
  const { rows: [k] } = await db.query<{ open_n: string; held_usd: number; spent: number }>('SELECT open_n, held_usd, spent FROM limit_keys WHERE key_id = $1', [keyId]);
  return { requests: Number(w!.requests), tokens: Number(w!.tokens), open: Number(k!.open_n), held: k!.held_usd, spent: k!.spent };
}

describe('a key far from its limits', () => {
  it('costs far fewer limit calls than requests, and reports afterwards exactly what its requests used', async () => {
    const { store: s, calls } = store();
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 100_000, tpm: 100_000_000, concurrency: 1000, budget: { usd: 1000, period: 'day' } };
    let tokens = 0;
    let usd = 0;
    let served = 0;
    // 20 clients, one request at a time each, over 2.5 s of admission times.
    await Promise.all(Array.from({ length: 20 }, async (_, w) => {
      for (let i = 0; i < 25; i++) {
        const c = claim(key, T0 + (i * 20 + w) * 5, { tokens: 300, usd: 0.02 });
        expect(await s.reserve(limits, c)).toEqual({ ok: true });
        const used = { tokens: 100 + ((i * 7 + w) % 50), usd: 0.001 * (1 + ((i + w) % 9)) };
        tokens += used.tokens;
        usd += used.usd;
        served++;
        await s.settle(c, used);
      }
    }));
    const reservations = calls.filter((c) => c === 'limit_reserve_many').length;
    console.log(`${served} requests: ${reservations} reservation calls, ${calls.filter((c) => c === 'limit_settle_many').length} settlement calls, ${await leaseRows(key)} leases`);
    expect(served).toBe(500);
    expect(reservations).toBeLessThan(served / 10);
    expect(calls.filter((c) => c === 'limit_settle_many').length).toBeLessThan(served / 2);

    // While its leases may still admit: their unused parts are not what the key used.
    const now = T0 + 3000;
    const expected = { rpm: { max: 100_000, used: 500 }, tpm: { max: 100_000_000, used: tokens }, concurrency: { max: 1000, used: 0 } };
    const open = await s.standing(key, limits, now);
    expect(open).toMatchObject(expected);
    expect(open.budget!.spent).toBeCloseTo(usd, 9);
    expect(open.budget!.held).toBeCloseTo(0, 9);
    // Closed, every lease gives back what it did not use: the counters the store decides by hold only what was used.
    await s.close();
    const closed = await store().store.standing(key, limits, now);
    expect(closed).toMatchObject(expected);
    expect(closed.budget!.spent).toBeCloseTo(usd, 9);
    expect(closed.budget!.held).toBe(0);
    const c = await counters(key, now);
    expect(c).toMatchObject({ requests: 500, tokens, open: 0 });
    expect(c.held).toBeCloseTo(0, 9);
    expect(c.spent).toBeCloseTo(usd, 9);
  });
});

describe('a busy key\'s lease', () => {
  it('is renewed before it runs out: while the next is asked for, the other requests are admitted under it; what it did not use comes back, and a request settled twice counts once', async () => {
    // A store whose reservation calls can be held (a slow round trip).
    let held: Promise<void> | undefined;
    let release = () => {};
    const calls: string[] = [];
    const p = pool(db.options.connectionString!);
    const s = new PgLimitStore({
      query: async (text, values) => {
        calls.push(/limit_\w+/.exec(text)?.[0] ?? text);
        if (held && text.includes('limit_reserve_many')) await held;
        return p.query(text, values);
      },
    });
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 100_000, concurrency: 1000 };
    const ok: Claim[] = [];
    // A burst of 41: the first alone, then a lease of the 40 that waited for it.
    const first = Array.from({ length: 41 }, (_, i) => claim(key, T0 + i));
    for (const v of await Promise.all(first.map((c) => s.reserve(limits, c)))) expect(v).toEqual({ ok: true });
    ok.push(...first);
    // The next asks for a lease of about what was admitted lately (41), admitted under it.
    const c0 = claim(key, T0 + 100);
    expect(await s.reserve(limits, c0)).toEqual({ ok: true });
    ok.push(c0);
    await new Promise((r) => setImmediate(r)); // the call's end is done with (requests arrive in later events)
    const reserveCalls = () => calls.filter((c) => c === 'limit_reserve_many').length;
    const callsBefore = reserveCalls();
    held = new Promise((r) => { release = r; });
    // Requests one after another: admitted at once until three quarters of the lease is used...
    let at = T0 + 200;
    let immediate = 1;
    for (;;) {
      const c = claim(key, at++);
      if (!s.admitNow(limits, c)) {
        // ...then one asks for the next lease (its call is held),
        const renewal = s.reserve(limits, c);
        await until('the call for the next lease', () => reserveCalls() > callsBefore, 10_000, 5);
        // and the rest of the lease still admits the others with no call.
        let more = 0;
        for (;;) {
          const d = claim(key, at++);
          if (!s.admitNow(limits, d)) break;
          ok.push(d);
          more++;
        }
        expect(immediate + more).toBe(41); // the whole lease is used, and none waited for the call
        expect(reserveCalls()).toBe(callsBefore + 1);
        release();
        held = undefined;
        expect(await renewal).toEqual({ ok: true });
        ok.push(c);
        break;
      }
      ok.push(c);
      immediate++;
    }
    expect(immediate).toBe(Math.ceil(41 * 3 / 4));
    // Once the next lease is granted, requests are admitted under it at once.
    const last = claim(key, at++);
    expect(s.admitNow(limits, last)).toBe(true);
    ok.push(last);
    await Promise.all(ok.map((c) => s.settle(c, { tokens: 50, usd: 0 })));
    // A second settlement of a request changes nothing.
    await Promise.all(ok.slice(0, 5).map((c) => s.settle(c, { tokens: 50, usd: 0 })));
    await s.close();
    // Every lease closed gave back what it did not use: the window holds the requests admitted.
    const c = await counters(key, at);
    expect(c).toMatchObject({ requests: ok.length, tokens: ok.length * 50, open: 0 });
  });
});

describe('a lease asked to be succeeded when the key\'s window is full', () => {
  it('still admits the request that asked, under the lease, when the store grants none and refuses it', async () => {
    const p = pool(db.options.connectionString!);
    const q: Queryable = { query: (text, values) => p.query(text, values) };
    const a = new PgLimitStore(q);
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 200 };
    // A busy daemon: a burst, then a lease of about that many.
    for (const v of await Promise.all(Array.from({ length: 41 }, (_, i) => a.reserve(limits, claim(key, T0 + i))))) expect(v).toEqual({ ok: true });
    expect(await a.reserve(limits, claim(key, T0 + 100))).toEqual({ ok: true });
    await new Promise((r) => setImmediate(r));
    // Another daemon fills the window, request by request (a fresh store each time: no lease).
    let at = T0 + 200;
    for (let n = 0; ; n++) {
      expect(n).toBeLessThan(200);
      if (!(await new PgLimitStore(q).reserve(limits, claim(key, at++))).ok) break;
    }
    // The lease's requests until it asks to be succeeded; the one that asks is refused by the store, yet the lease has room.
    let admitted = 0;
    for (;;) {
      const c = claim(key, at++);
      if (a.admitNow(limits, c)) { admitted++; continue; }
      expect(await a.reserve(limits, c)).toEqual({ ok: true });
      break;
    }
    expect(admitted).toBeGreaterThan(0);
    await a.close();
    expect((await counters(key, at)).requests).toBeLessThanOrEqual(200);
  });
});

describe('three daemons leasing one key at once', () => {
  /** Bursts from the three stores at advancing admission times (`gap`: the longest step between bursts, ms); each verdict is told to `seen`. */
  async function drive(key: string, limits: KeyLimits, o: { steps: number; burst: number; gap?: number; over?: (rand: () => number) => Partial<Claim>; seen: (c: Claim, v: Verdict, s: PgLimitStore) => Promise<void> | void }) {
    const stores = [store(), store(), store()].map((x) => x.store);
    const rand = random(7);
    let t = T0;
    for (let step = 0; step < o.steps; step++) {
      t += Math.floor(rand() * (o.gap ?? (rand() < 0.8 ? 400 : 5000)));
      const at = t;
      await Promise.all(stores.flatMap((s, d) => Array.from({ length: o.burst }, async (_, i) => {
        const c = claim(key, at + d * 3 + (i % 5), o.over?.(rand) ?? {});
        await o.seen(c, await s.reserve(limits, c), s);
      })));
    }
    return stores;
  }

  it('rpm: no sliding window ever holds more than the limit', async () => {
    const key = `k${++seq}`;
    const rpm = 600;
    const admitted: number[] = [];
    let refused = 0;
    const stores = await drive(key, { rpm }, {
      steps: 500, burst: 4, gap: 700,
      seen: (c, v) => {
        if (v.ok) admitted.push(c.at);
        else { expect(v.limit).toBe('rpm'); refused++; }
      },
    });
    admitted.sort((a, b) => a - b);
    let most = 0;
    for (let i = 0, j = 0; i < admitted.length; i++) {
      while (admitted[j]! <= admitted[i]! - WINDOW_MS) j++;
      most = Math.max(most, i - j + 1);
    }
    console.log(`rpm ${rpm}: ${admitted.length} admitted, ${refused} refused, at most ${most} in a window, ${await leaseRows(key)} leases`);
    expect(most).toBeLessThanOrEqual(rpm);
    expect(refused).toBeGreaterThan(0); // driven past the limit
    expect(await leaseRows(key)).toBeGreaterThan(3); // and leases were granted
    await Promise.all(stores.map((s) => s.close()));
  });

  it('budget: what was settled never exceeds it', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 5, period: 'day' } };
    let spent = 0;
    let refused = 0;
    const settling: Array<Promise<void>> = [];
    const stores = await drive(key, limits, {
      steps: 80, burst: 10, over: () => ({ usd: 0.01 }),
      seen: (c, v, s) => {
        if (!v.ok) { expect(v.limit).toBe('budget'); refused++; return; }
        spent += 0.006;
        settling.push(s.settle(c, { tokens: 50, usd: 0.006 }));
      },
    });
    await Promise.all(settling);
    await Promise.all(stores.map((s) => s.close()));
    const standing = (await store().store.standing(key, limits, T0)).budget!;
    console.log(`budget $5: $${spent.toFixed(3)} settled, ${refused} refused, ${await leaseRows(key)} leases`);
    expect(refused).toBeGreaterThan(0);
    expect(await leaseRows(key)).toBeGreaterThan(3);
    expect(spent).toBeLessThanOrEqual(5 + 1e-9);
    expect(standing.spent).toBeCloseTo(spent, 9);
    expect(standing.held).toBe(0);
  });

  it('concurrency: never more in flight than the limit', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { concurrency: 60 };
    let flying = 0;
    let most = 0;
    let refused = 0;
    const rand = random(3);
    const held: Array<{ c: Claim; s: PgLimitStore }> = [];
    const stores = await drive(key, limits, {
      steps: 40, burst: 15,
      seen: async (c, v, s) => {
        if (!v.ok) { expect(v.limit).toBe('concurrency'); refused++; return; }
        flying++;
        most = Math.max(most, flying);
        expect(flying).toBeLessThanOrEqual(60);
        held.push({ c, s });
        // Some end at once, the others with a later burst.
        while (held.length > 0 && rand() < 0.5) {
          const h = held.splice(Math.floor(rand() * held.length), 1)[0]!;
          flying--; // counted out before the store hears it: the count never runs below the store's
          await h.s.settle(h.c, { tokens: 10, usd: 0 });
        }
      },
    });
    console.log(`concurrency 60: at most ${most} in flight, ${refused} refused, ${await leaseRows(key)} leases`);
    expect(refused).toBeGreaterThan(0);
    expect(most).toBeGreaterThan(30);
    expect(await leaseRows(key)).toBeGreaterThan(3);
    await Promise.all(held.map((h) => h.s.settle(h.c, { tokens: 10, usd: 0 })));
    await Promise.all(stores.map((s) => s.close()));
    expect((await counters(key, T0)).open).toBe(0);
  });
});

describe('a lease granted just before a budget period ends', () => {
  it('admits nothing of the next period: each request\'s spend counts in its own period', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 100, period: 'day' } };
    const midnight = Date.parse('2026-11-28T00:00:00Z');
    const { store: s } = store();
    // Busy before midnight: the third request takes a lease (of two, one left, admitting for a second).
    const before = [0, 1, 2].map(() => claim(key, midnight - 300));
    for (const c of before) expect(await s.reserve(limits, c)).toEqual({ ok: true });
    expect(await leaseRows(key)).toBe(1);
    const after = claim(key, midnight + 10);
    expect(await s.reserve(limits, after)).toEqual({ ok: true });
    await Promise.all([...before, after].map((c) => s.settle(c, { tokens: 10, usd: 0.01 })));
    await s.close();
    const { store: other } = store();
    expect((await other.standing(key, limits, midnight + 100)).budget!.spent).toBeCloseTo(0.01, 9);
  });
});

describe('a refusal while another daemon\'s lease is open', () => {
  it('says to retry no later than that lease closes; with no lease open, the exact wait', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { rpm: 40 };
    const a = store().store;
    const b = store().store;
    // Daemon A, busy: its third request takes a lease of two, one of them unused.
    for (let i = 0; i < 3; i++) expect(await a.reserve(limits, claim(key, T0))).toEqual({ ok: true });
    const { rows: [lease] } = await db.query<{ admit_until: string; spare_requests: string }>(
      "SELECT admit_until, spare_requests FROM limit_claims WHERE key_id = $1 AND request_id LIKE 'lease:%' AND NOT closed", [key]);
    expect(Number(lease!.spare_requests)).toBe(1);
    // Daemon B fills the rest of the minute; the request that finds none left is refused.
    const verdicts: Verdict[] = [];
    for (let i = 0; i < 40; i++) verdicts.push(await b.reserve(limits, claim(key, T0 + 10 + i)));
    const refused = verdicts.filter((v) => !v.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const v of refused) {
      expect(v).toMatchObject({ ok: false, limit: 'rpm' });
      const at = T0 + 10 + verdicts.indexOf(v);
      expect((v as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(Number(lease!.admit_until) - at);
    }
    // Every lease closed (what they did not use given back): the wait is the window's again, to the oldest admission's leaving it.
    await a.close();
    await b.close();
    const later = T0 + 30_000;
    const c = store().store;
    let v: Verdict = { ok: true };
    let admitted = 0;
    while (v.ok && admitted < 40) if ((v = await c.reserve(limits, claim(key, later))).ok) admitted++;
    expect(admitted).toBe(40 - (3 + verdicts.length - refused.length)); // what the leases did not use came back: the minute holds 40 again
    expect(v).toMatchObject({ ok: false, limit: 'rpm', used: 40 });
    const { rows: [oldest] } = await db.query<{ last_at: string }>('SELECT min(last_at) AS last_at FROM limit_windows WHERE key_id = $1 AND requests > 0', [key]);
    expect((v as { retryAfterMs: number }).retryAfterMs).toBe(Number(oldest!.last_at) + WINDOW_MS - later);
  });
});

describe('a budget refused while another daemon\'s lease holds some of it unused', () => {
  it('says when to retry instead of "not in this period", and the request fits once that lease closed', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 2.02, period: 'day' } };
    const a = store().store;
    const b = store().store;
    // Daemon A, busy: its third request takes a lease of two, one of them unused ($0.01 spare).
    for (let i = 0; i < 3; i++) expect(await a.reserve(limits, claim(key, T0))).toEqual({ ok: true });
    const { rows: [lease] } = await db.query<{ admit_until: string; spare_usd: number }>(
      "SELECT admit_until, spare_usd FROM limit_claims WHERE key_id = $1 AND request_id LIKE 'lease:%' AND NOT closed", [key]);
    expect(lease!.spare_usd).toBeCloseTo(0.01, 9);
    // Daemon B spends the rest (on leases while the budget has room for 100 requests, then exactly).
    let v: Verdict = { ok: true };
    let at = T0;
    for (let i = 0; i < 400 && v.ok; i++) v = await b.reserve(limits, claim(key, (at = T0 + 10 + i)));
    expect(v).toMatchObject({ ok: false, limit: 'budget' });
    const wait = (v as { retryAfterMs?: number }).retryAfterMs;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(Number(lease!.admit_until) - at);
    const e = refusal('app', limits, v as Refused);
    expect(e.headers).toMatchObject({ 'x-gateway-limit': 'budget', 'retry-after-ms': String(Math.ceil(wait!)) });
    expect(e.headers!['x-should-retry']).toBeUndefined();
    // A's lease closes and gives its unused cent back: the request fits.
    await a.close();
    await b.close();
    expect(await store().store.reserve(limits, claim(key, at + wait!))).toEqual({ ok: true });
  });
});

describe('a lease\'s write-back', () => {
  /** A lease granted on `key` (a burst under a budget), its row as written. */
  async function granted(key: string, limits: KeyLimits) {
    const { store: s } = store();
    const verdicts = await Promise.all(Array.from({ length: 8 }, () => s.reserve(limits, claim(key, T0))));
    expect(verdicts.every((v) => v.ok)).toBe(true);
    const { rows: [row] } = await db.query<{ request_id: string; admit_until: string; expires_at: string }>(
      "SELECT request_id, admit_until, expires_at FROM limit_claims WHERE key_id = $1 AND request_id LIKE 'lease:%' LIMIT 1", [key]);
    expect(row).toBeDefined();
    return { s, id: row!.request_id, until: Number(row!.admit_until), expires: Number(row!.expires_at) };
  }

  it('is idempotent: sent twice, or an older version after a newer, it changes nothing', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 100, period: 'day' }, rpm: 10_000 };
    const { s, id, until, expires } = await granted(key, limits);
    const state = (v: number, requests: number, usd: number): LeaseState => ({
      id, key, at: T0, until, expires, v, requests, tokens: requests * 100, usd, held: 0, slots: 0,
      spare_requests: 0, spare_tokens: 0, spare_usd: 0, spare_slots: 0, closed: true, settled: true,
    });
    const before = await counters(key, T0);
    // Its requests settled (five of them, as if two had been given up on): a settled claim of what they used.
    await s.record([], [state(5, 5, 0.07)]);
    const after = await counters(key, T0);
    expect(after.requests).toBeLessThan(before.requests);
    expect(after.spent).toBeCloseTo(before.spent + 0.07, 9);
    await s.record([], [state(5, 5, 0.07)]);
    expect(await counters(key, T0)).toEqual(after);
    await s.record([], [state(4, 9, 0.5)]);
    expect(await counters(key, T0)).toEqual(after);
  });

  it('of a lease the store does not have (its grant lost in a server crash) adds it as written, once', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 100, period: 'day' }, rpm: 10_000, concurrency: 100 };
    const { store: s } = store();
    expect(await s.reserve(limits, claim(key, T0))).toEqual({ ok: true }); // the key's period is known
    const before = await counters(key, T0);
    const lost: LeaseState = {
      id: `lease:lost-${seq}`, key, at: T0, until: T0 + 1000, expires: T0 + 601_000, v: 3, requests: 6, tokens: 600, usd: 0.02, held: 0.04, slots: 4,
      spare_requests: 0, spare_tokens: 0, spare_usd: 0, spare_slots: 0, closed: true, settled: false,
    };
    await s.record([], [lost]);
    await s.record([], [lost]);
    const after = await counters(key, T0);
    expect(after).toMatchObject({ requests: before.requests + 6, tokens: before.tokens + 600, open: before.open + 4 });
    expect(after.held).toBeCloseTo(before.held + 0.04, 9);
    expect(after.spent).toBeCloseTo(before.spent + 0.02, 9);
  });

  it('of a store dropped with a lease open leaves the key\'s holds at or above what was used, and release() of the lease voids it', async () => {
    const key = `k${++seq}`;
    const limits: KeyLimits = { budget: { usd: 100, period: 'day' }, concurrency: 400, rpm: 10_000 };
    const { store: s, cut } = store();
    const claims = Array.from({ length: 30 }, (_, i) => claim(key, T0 + i, { usd: 0.05 }));
    for (const c of claims) expect(await s.reserve(limits, c)).toEqual({ ok: true });
    // Ten settled and written; twenty in flight when the daemon goes.
    await Promise.all(claims.slice(0, 10).map((c) => s.settle(c, { tokens: 10, usd: 0.02 })));
    expect(await leaseRows(key)).toBeGreaterThan(0);
    cut();
    const c = await counters(key, T0 + 100);
    expect(c.requests).toBeGreaterThanOrEqual(30);
    expect(c.open).toBeGreaterThanOrEqual(20);
    expect(c.spent + c.held).toBeGreaterThanOrEqual(10 * 0.02 + 20 * 0.05 - 1e-9);

    const { rows } = await db.query<{ request_id: string }>("SELECT request_id FROM limit_claims WHERE key_id = $1 AND request_id LIKE 'lease:%' AND NOT settled", [key]);
    expect(rows.length).toBeGreaterThan(0);
    const other = store().store;
    await other.release(rows.map((r) => ({ requestId: r.request_id, keyId: key })));
    // What the voided leases counted is gone: what is left is what the other claims count (requests decided one by one, leases settled before).
    const { rows: [rest] } = await db.query<{ requests: string; open: string; usd: number; voided: string }>(
      `SELECT coalesce(sum(requests) FILTER (WHERE at <> 0), 0) AS requests, coalesce(sum(slots) FILTER (WHERE NOT settled AND at <> 0), 0) AS open,
         coalesce(sum(CASE WHEN admit_until IS NULL THEN usd ELSE held END) FILTER (WHERE NOT settled AND at <> 0), 0) AS usd,
         count(*) FILTER (WHERE at = 0 AND request_id = ANY ($2)) AS voided
       FROM limit_claims WHERE key_id = $1`, [key, rows.map((r) => r.request_id)]);
    expect(Number(rest!.voided)).toBe(rows.length);
    const v = await counters(key, T0 + 100);
    expect(v.requests).toBe(Number(rest!.requests));
    expect(v.requests).toBeLessThan(c.requests);
    expect(v.open).toBe(Number(rest!.open));
    expect(v.held).toBeCloseTo(rest!.usd, 9);
  });
});

describe('team mode: a lease whose write-back the store never took before the daemon stopped', () => {
  it('is kept in the outbox and written back after the restart: the spend of its requests is counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leases-'));
    const proxy = await startStallProxy(postgres.port);
    const url = db.options.connectionString!.replace(`:${postgres.port}/`, `:${proxy.port}/`);
    const daemonId = `d${++seq}`;
    const open = async () => {
      const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId, log: () => {} });
      return { shared, limits: new TeamLimitStore({ shared, stateDir: dir, clock: Date.now, log: () => {}, reserveWaitMs: 300 }) };
    };
    let first: Awaited<ReturnType<typeof open>> | undefined = await open();
    let again: Awaited<ReturnType<typeof open>> | undefined;
    try {
      const key = `k${++seq}`;
      const budget: KeyLimits = { budget: { usd: 100, period: 'day' }, rpm: 10_000 };
      // Busy: the third request takes a lease (of two, one left unused).
      const served = [0, 1, 2].map(() => claim(key, Date.now(), { usd: 0.01 }));
      for (const c of served) expect(await first.limits.reserve(budget, c)).toEqual({ ok: true });
      expect(await leaseRows(key)).toBe(1);
      await first.limits.settle(served[0]!, { tokens: 10, usd: 0.004 });
      await first.limits.settle(served[1]!, { tokens: 10, usd: 0.004 });
      // The store goes silent; the leased request ends, and the daemon stops before it is back.
      proxy.freeze();
      await first.limits.settle(served[2]!, { tokens: 10, usd: 0.004 });
      await first.limits.close();
      await first.shared.close();
      first = undefined;
      proxy.thaw();
      again = await open();
      await until('the lease written back after the restart', async () => {
        const { rows: [r] } = await db.query<{ open: string }>('SELECT count(*) AS open FROM limit_claims WHERE key_id = $1 AND NOT settled AND at <> 0', [key]);
        return Number(r!.open) === 0;
      });
      const c = await counters(key, Date.now());
      expect(c).toMatchObject({ requests: 3, open: 0 });
      expect(c.spent).toBeCloseTo(3 * 0.004, 9);
      expect(c.held).toBeCloseTo(0, 9);
      expect((await again.limits.report()).unreconciled).toBe(0);
    } finally {
      for (const d of [first, again]) if (d) { await d.limits.close(); await d.shared.close(); }
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('team mode: a lease call the store does not answer', () => {
  it('is decided on the share, and once the store answers every request served is counted once, the lease holding none of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leases-'));
    const proxy = await startStallProxy(postgres.port);
    const url = db.options.connectionString!.replace(`:${postgres.port}/`, `:${proxy.port}/`);
    const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: `d${++seq}`, log: () => {} });
    const limits = new TeamLimitStore({ shared, stateDir: dir, clock: Date.now, log: () => {}, reserveWaitMs: 300 });
    let closed: Promise<void> | undefined;
    const close = () => (closed ??= limits.close());
    try {
      const key = `k${++seq}`;
      const budget: KeyLimits = { budget: { usd: 100, period: 'day' }, rpm: 10_000 };
      const now = () => claim(key, Date.now(), { usd: 0.01 });
      // Busy: the third request takes a lease (of two, one left unused).
      const served = [now(), now(), now()];
      for (const c of served) expect(await limits.reserve(budget, c)).toEqual({ ok: true });
      expect(await leaseRows(key)).toBe(1);
      proxy.freeze();
      // More than the lease has room for: a call for a new lease, which gets no answer; decided on the share.
      const big = claim(key, Date.now(), { usd: 0.5 });
      expect(await limits.reserve(budget, big)).toEqual({ ok: true });
      expect(shared.status().connected).toBe(false);
      served.push(big);
      // They end while the store is silent (the lease's write-back waits, the share's goes to the outbox).
      const settled = Promise.all(served.map((c) => limits.settle(c, { tokens: 10, usd: 0.004 })));
      proxy.thaw();
      await settled;
      await until('the store back and written back to', async () => shared.status().connected && (await limits.report()).unreconciled === 0);
      await close();
      await until('every lease settled', async () => {
        const { rows: [r] } = await db.query<{ open: string }>('SELECT count(*) AS open FROM limit_claims WHERE key_id = $1 AND NOT settled AND at <> 0', [key]);
        return Number(r!.open) === 0;
      });
      const { rows: [r] } = await db.query<{ requests: string; usd: number }>(
        'SELECT coalesce(sum(requests), 0) AS requests, sum(usd) AS usd FROM limit_claims WHERE key_id = $1 AND at <> 0', [key]);
      expect(Number(r!.requests)).toBe(4);
      expect(r!.usd).toBeCloseTo(4 * 0.004, 9);
      const c = await counters(key, Date.now());
      expect(c).toMatchObject({ requests: 4, open: 0 });
      expect(c.spent).toBeCloseTo(4 * 0.004, 9);
      expect(c.held).toBeCloseTo(0, 9);
    } finally {
      await close();
      await shared.close();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
