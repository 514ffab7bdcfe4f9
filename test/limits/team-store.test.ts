// Team mode's limit store when PostgreSQL goes away (limits/team-store.ts), against a real server
// that the tests stop and start, and a relay in front of it that goes silent: each daemon keeps to
// its share of every limit, a key set to fail closed is refused, a store that does not answer
// costs a reservation a bounded wait, and what was settled meanwhile is written back once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { KeyLimits } from '../../src/daemon/limits/limits.js';
import { StoreUnreachable, type Claim, type Verdict } from '../../src/daemon/limits/store.js';
import { TeamLimitStore } from '../../src/daemon/limits/team-store.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { openDatabase } from '../../src/daemon/store/sqlite.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startStallProxy } from '../helpers/stall-proxy.js';
import { until } from '../helpers/wait.js';

let postgres: TestPostgres;
beforeAll(async () => { postgres = await startPostgres(); }, 120_000);
afterAll(() => postgres?.destroy());

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c(); });

let seq = 0;
let dbs = 0;
const claim = (keyId: string, over: Partial<Claim> = {}): Claim => {
  const at = Date.now();
  return { requestId: `req-${++seq}`, keyId, at, tokens: 100, usd: 0, expiresAt: at + 600_000, ...over };
};


/** One daemon's side: its shared store and its team limit store, on a state directory of its own (or `dir`). */
async function daemon(url: string, o: { dir?: string; waitMs?: number } = {}) {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'team-limits-'));
  const lines: string[] = [];
  const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: `d${++seq}`, log: (l) => lines.push(l) });
  const limits = new TeamLimitStore({ shared, stateDir: dir, clock: Date.now, log: (l) => lines.push(l), ...(o.waitMs ? { reserveWaitMs: o.waitMs } : {}) });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await limits.close();
    await shared.close();
  };
  cleanups.push(async () => { await close(); if (!o.dir) rmSync(dir, { recursive: true, force: true }); });
  return { shared, limits, lines, dir, close };
}

/** A daemon that reaches the store through a relay the test can silence (or take away). */
async function behindRelay(url: string, o: { dir?: string; waitMs?: number } = {}) {
  const proxy = await startStallProxy(postgres.port);
  cleanups.push(() => proxy.close());
  return { proxy, ...(await daemon(url.replace(`:${postgres.port}/`, `:${proxy.port}/`), o)) };
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return (await c.query<R>(text, values)).rows; } finally { await c.end(); }
}

const ok = (vs: Verdict[]) => vs.filter((v) => v.ok).length;

it('with PostgreSQL stopped, a daemon keeps to its share of each limit (of three daemons alive), refuses a key set to fail closed, and writes back what it settled once the store returns', async () => {
  const url = await postgres.database(`team_${++dbs}`);
  const d = await daemon(url);
  // Two other daemons beat in the last minute.
  await query(url, 'INSERT INTO gateway_daemons (daemon_id, seen_at) VALUES ($1, $3), ($2, $3)', ['b', 'c', Date.now()]);
  await d.shared.startHeartbeat();
  expect(d.shared.daemonsAlive()).toBe(3);

  const rpm: KeyLimits = { rpm: 30 };
  const budget: KeyLimits = { budget: { usd: 1.2, period: 'day' } };
  const closed: KeyLimits = { rpm: 100, failClosed: true };
  // The store states the budget key's spend and holds with every answer: $0.30 held, then spent.
  const first = claim('budget', { usd: 0.3 });
  expect(await d.limits.reserve(budget, first)).toEqual({ ok: true });
  await d.limits.settle(first, { tokens: 10, usd: 0.3 });

  postgres.stop();
  try {
    // rpm 30 among three daemons: this one's share is 10 a minute.
    const rpmClaims = Array.from({ length: 12 }, () => claim('rpm'));
    const rpmVerdicts: Verdict[] = [];
    for (const c of rpmClaims) rpmVerdicts.push(await d.limits.reserve(rpm, c));
    expect(d.shared.status()).toMatchObject({ connected: false });
    expect(ok(rpmVerdicts)).toBe(10);
    expect(rpmVerdicts[10]).toMatchObject({ ok: false, limit: 'rpm', max: 30, used: 10, share: { max: 10, daemons: 3 } });

    // $1.20 a day, $0.30 of it spent when the store last said: a third of the $0.90 left is this daemon's.
    const budgetClaims = Array.from({ length: 4 }, () => claim('budget', { usd: 0.1 }));
    const budgetVerdicts: Verdict[] = [];
    for (const c of budgetClaims) budgetVerdicts.push(await d.limits.reserve(budget, c));
    expect(ok(budgetVerdicts)).toBe(3);
    expect(budgetVerdicts[3]).toMatchObject({ ok: false, limit: 'budget', max: 1.2, share: { daemons: 3 } });
    expect((budgetVerdicts[3] as { share: { max: number } }).share.max).toBeCloseTo(0.3, 9);

    await expect(d.limits.reserve(closed, claim('closed'))).rejects.toBeInstanceOf(StoreUnreachable);

    for (const [i, c] of rpmClaims.entries()) if (rpmVerdicts[i]!.ok) await d.limits.settle(c, { tokens: 10, usd: 0 });
    for (const [i, c] of budgetClaims.entries()) if (budgetVerdicts[i]!.ok) await d.limits.settle(c, { tokens: 10, usd: 0.05 });
    expect(await d.limits.report()).toEqual({ unreconciled: 13 });
  } finally {
    postgres.start();
  }

  await until('the store back and written back to', async () => d.shared.status().connected && (await d.limits.report()).unreconciled === 0);
  const counted = await query<{ key_id: string; n: string; usd: number; open: string }>(url,
    'SELECT key_id, count(*) AS n, sum(usd) AS usd, count(*) FILTER (WHERE NOT settled) AS open FROM limit_claims GROUP BY key_id ORDER BY key_id');
  expect(counted.map((r) => ({ key: r.key_id, n: Number(r.n), open: Number(r.open) }))).toEqual([{ key: 'budget', n: 4, open: 0 }, { key: 'rpm', n: 10, open: 0 }]);
  expect(counted[0]!.usd).toBeCloseTo(0.45, 9);
  // The shared window holds the ten served on the share: twenty more fit the minute, and not one after.
  const after: Verdict[] = [];
  for (let i = 0; i < 21; i++) after.push(await d.limits.reserve(rpm, claim('rpm')));
  expect(ok(after)).toBe(20);
  expect(after[20]).toMatchObject({ ok: false, limit: 'rpm', max: 30, used: 30 });
  expect(after[20]).not.toHaveProperty('share');
  expect(d.lines.some((l) => /wrote back 13 settlements/.test(l))).toBe(true);
}, 60_000);

it('a store that does not answer costs a reservation no more than the wait: it is decided on the share, the store counts as down, and once it answers each request is counted once', async () => {
  const url = await postgres.database(`team_${++dbs}`);
  const d = await behindRelay(url, { waitMs: 300 });
  const { proxy } = d;
  const limits: KeyLimits = { concurrency: 5 };

  const before = claim('k');
  expect(await d.limits.reserve(limits, before)).toEqual({ ok: true });
  proxy.freeze();
  const unanswered = claim('k');
  expect(await d.limits.reserve(limits, unanswered)).toEqual({ ok: true });
  expect(d.shared.status()).toMatchObject({ connected: false, lastError: expect.stringContaining('got no answer within 0.3 s') });
  const local = claim('k');
  expect(await d.limits.reserve(limits, local)).toEqual({ ok: true });
  for (const c of [before, unanswered, local]) await d.limits.settle(c, { tokens: 7, usd: 0 });
  expect(await d.limits.report()).toEqual({ unreconciled: 3 });

  // The reservation held in the silence reaches the server now, besides the write-back of the same request.
  proxy.thaw();
  await until('the store back and written back to', async () => d.shared.status().connected && (await d.limits.report()).unreconciled === 0);
  const rows = await query<{ request_id: string; settled: boolean; tokens: string }>(url, 'SELECT request_id, settled, tokens FROM limit_claims ORDER BY request_id');
  expect(rows.map((r) => [r.request_id, r.settled, Number(r.tokens)]).sort()).toEqual([before, unanswered, local].map((c) => [c.requestId, true, 7]).sort());
}, 60_000);

it('a reservation refused on the share after the store did not answer holds nothing in the store once it answers', async () => {
  const url = await postgres.database(`team_${++dbs}`);
  const d = await behindRelay(url, { waitMs: 300 });
  const { proxy } = d;
  const limits: KeyLimits = { budget: { usd: 1, period: 'day' } };
  // The store last said the whole dollar was held; it was settled at nothing since.
  const first = claim('k', { usd: 1 });
  expect(await d.limits.reserve(limits, first)).toEqual({ ok: true });
  await d.limits.settle(first, { tokens: 0, usd: 0 });

  proxy.freeze();
  // Sent, unanswered: this daemon's share of what it knew was left is nothing, so it refuses; the store would have admitted it.
  expect(await d.limits.reserve(limits, claim('k', { usd: 0.5 }))).toMatchObject({ ok: false, limit: 'budget', share: { max: 0, daemons: 1 } });
  expect(await d.limits.report()).toEqual({ unreconciled: 1 });
  proxy.thaw();
  await until('the store back and written back to', async () => d.shared.status().connected && (await d.limits.report()).unreconciled === 0);

  expect((await d.limits.standing('k', limits, Date.now())).budget).toMatchObject({ spent: 0, held: 0, left: 1 });
  expect(await d.limits.reserve(limits, claim('k', { usd: 1 }))).toEqual({ ok: true });
}, 60_000);

it('what a daemon settled during an outage survives its crash: the outbox is written back when it starts again', async () => {
  const url = await postgres.database(`team_${++dbs}`);
  const dir = mkdtempSync(join(tmpdir(), 'team-limits-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  // This daemon reaches the store through a relay, which goes away for good: an outage the daemon does not outlive.
  const first = await behindRelay(url, { dir });
  await first.proxy.close();
  const limits: KeyLimits = { budget: { usd: 5, period: 'total' } };
  for (const c of [claim('k', { usd: 0.5 }), claim('k', { usd: 0.5 })]) {
    expect(await first.limits.reserve(limits, c)).toEqual({ ok: true });
    await first.limits.settle(c, { tokens: 10, usd: 0.25 });
  }
  expect(first.shared.status().connected).toBe(false);
  // On disk once the ledger's write delay passed; then the daemon is as good as killed.
  const outbox = await openDatabase(join(dir, 'limit-outbox.db'));
  await until('the settlements on disk', () => (outbox.prepare('SELECT count(*) AS n FROM limit_spend').get() as { n: number }).n === 2);
  outbox.close();

  const again = await daemon(url, { dir });
  await until('the outbox written back', async () => (await again.limits.report()).unreconciled === 0);
  const [row] = await query<{ n: string; usd: number }>(url, "SELECT count(*) AS n, sum(usd) AS usd FROM limit_claims WHERE key_id = 'k' AND settled");
  expect(Number(row!.n)).toBe(2);
  expect(row!.usd).toBeCloseTo(0.5, 9);
  expect((await again.limits.standing('k', limits, Date.now())).budget).toMatchObject({ spent: 0.5, held: 0 });
}, 60_000);

/**
 * A daemon on `dir` that admitted two requests of key `k` just before, and whose next reservation
 * call (asking for a lease) waits in the server on the key's row, locked by `holder` until it
 * commits; that request was decided on the daemon's share.
 */
async function leaseCallHeld(url: string, dir: string) {
  const first = await daemon(url, { dir, waitMs: 300 });
  const limits: KeyLimits = { concurrency: 100 };
  // Admission times given, so that "admitted lately" holds on a slow machine too.
  const t0 = Date.now();
  const at = (i: number) => claim('k', { at: t0 + i, expiresAt: t0 + 600_000 });
  for (const c of [at(0), at(1)]) {
    expect(await first.limits.reserve(limits, c)).toEqual({ ok: true });
    await first.limits.settle(c, { tokens: 1, usd: 0 });
  }
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  cleanups.push(() => holder.end());
  await holder.query('BEGIN');
  await holder.query("SELECT 1 FROM limit_keys WHERE key_id = 'k' FOR UPDATE");
  const late = at(2);
  expect(await first.limits.reserve(limits, late)).toEqual({ ok: true }); // on the share, after 0.3 s
  await first.limits.settle(late, { tokens: 1, usd: 0 });
  return { first, holder };
}

const openLeases = (url: string) => query<{ request_id: string }>(url, "SELECT request_id FROM limit_claims WHERE request_id LIKE 'lease:%' AND NOT settled AND at <> 0");

it('a lease whose call is still out when the daemon stops, the store reachable, holds nothing once the stop is done', async () => {
  const url = await postgres.database(`team_${++dbs}`);
  const dir = mkdtempSync(join(tmpdir(), 'team-limits-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const { first, holder } = await leaseCallHeld(url, dir);
  // The store answers again (the lock holds up that one call only).
  await until('the store reachable again', () => first.shared.status().connected);
  const stopping = first.close();
  await holder.query('COMMIT');
  await stopping;
  expect(await query(url, "SELECT count(*) AS n FROM limit_claims WHERE request_id LIKE 'lease:%'")).toEqual([{ n: '1' }]);
  expect(await openLeases(url)).toEqual([]);
  expect(await query(url, "SELECT open_n FROM limit_keys WHERE key_id = 'k'")).toEqual([{ open_n: '0' }]);
}, 60_000);

it('a lease whose call was still out when the daemon stopped, granted after, holds nothing once the daemon starts again', async () => {
  const url = await postgres.database(`team_${++dbs}`);
  const dir = mkdtempSync(join(tmpdir(), 'team-limits-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const { first, holder } = await leaseCallHeld(url, dir);
  await first.close();
  // Only now does the call go on: its lease is granted to a daemon that is gone.
  await holder.query('COMMIT');
  const [lease] = await until('the lease granted after the stop', async () => { const rows = await openLeases(url); return rows.length > 0 ? rows : undefined; });

  const again = await daemon(url, { dir });
  await until('the outbox written back', async () => again.shared.status().connected && (await again.limits.report()).unreconciled === 0);
  expect(await openLeases(url)).toEqual([]);
  expect(await query(url, 'SELECT at, closed FROM limit_claims WHERE request_id = $1', [lease!.request_id])).toEqual([{ at: '0', closed: true }]);
  // Nothing of the key is in flight: the concurrency the store decides by counts none.
  expect(await query(url, "SELECT open_n FROM limit_keys WHERE key_id = 'k'")).toEqual([{ open_n: '0' }]);
}, 60_000);
