// The parts of team mode's usage history a crash lands between, each at its exact moment: a row
// journaled but not yet written (replayed once at the next start), a push PostgreSQL refused (kept
// in the outbox), a push PostgreSQL committed but whose outbox entries were never deleted (pushed
// again, counted once), rows read twice (kept once); and a usage.db from before daemons were
// recorded (its history kept, as "not recorded").
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/daemon/observe/events.js';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { recentRequests, usageGroups } from '../../src/daemon/observe/usage/queries.js';
import { UsageRecorder } from '../../src/daemon/observe/usage/recorder.js';
import { MIGRATIONS } from '../../src/daemon/observe/usage/schema.js';
import { UsageStore, type UsageRow } from '../../src/daemon/observe/usage/store.js';
import { TeamHistory } from '../../src/daemon/observe/usage/team-history.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { loadSqlite } from '../../src/daemon/store/sqlite.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';

const prices = buildPriceTable(readShippedPrices()).table;
let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'gateway-team-history-')); });
afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

function finish(bus: EventBus, id: string, model: string): void {
  const time = Date.now();
  bus.publish({ type: 'started', id, time, keyId: 'k1', keyName: 'app', mode: 'native', provider: 'openai', model, method: 'POST', path: '/openai/v1/chat/completions', stream: false, requestBytes: 42 });
  bus.publish({ type: 'finished', id, time: time + 5, status: 200, durationMs: 5, ttfbMs: 3, outputBytes: 10, usage: { inputTokens: 100, outputTokens: 20 }, model: null });
}

describe('the journal', () => {
  it('a killed daemon\'s rows not yet written are written at the next start, once, with those written before left alone', async () => {
    const path = join(dir, 'usage.db');
    const store = await UsageStore.open(path);
    const bus = new EventBus();
    const team = { journalDir: dir };
    // No batch on a timer: what is written is exactly what flush() wrote.
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 3_600_000, maxBatch: 1e9, backgroundCheckpoints: false, daemon: 'd1', team }).start();
    finish(bus, 'req_1', 'm-1');
    finish(bus, 'req_2', 'm-2');
    rec.flush(); // these two are in usage.db (and still in the journal)
    finish(bus, 'req_3', 'm-3'); // this one only in memory and the journal (written at the end of the turn)
    await new Promise((r) => setImmediate(r));
    expect(store.count()).toBe(2);
    store.db.close(); // the kill: nothing more is written

    const again = await UsageStore.open(path);
    const rec2 = new UsageRecorder({ store: again, bus: new EventBus(), prices, backgroundCheckpoints: false, daemon: 'd1', team }).start();
    const rows = recentRequests(again.db, { limit: 10 }).rows;
    expect(rows.map((r) => [r.requestId, r.model, r.daemon]).sort()).toEqual([['req_1', 'm-1', 'd1'], ['req_2', 'm-2', 'd1'], ['req_3', 'm-3', 'd1']]);
    expect(again.outboxSize()).toBe(3); // every one of them still goes to the shared store
    expect(usageGroups(again.db, { since: Date.now() - 3_600_000, until: Date.now() }, 'daemon').map((g) => [g.group, g.requests])).toEqual([['d1', 3]]);
    await rec2.close();
    expect(readdirSync(dir).filter((f) => f.startsWith('usage.journal'))).toEqual([]);
  });

  it('what a daemon from before the journal\'s own directory left in the state directory is replayed by the next one', async () => {
    const path = join(dir, 'usage.db');
    const store = await UsageStore.open(path);
    const bus = new EventBus();
    // The former layout: segments beside usage.db.
    new UsageRecorder({ store, bus, prices, flushIntervalMs: 3_600_000, maxBatch: 1e9, backgroundCheckpoints: false, daemon: 'd1', team: { journalDir: dir } }).start();
    finish(bus, 'req_1', 'm-1');
    await new Promise((r) => setImmediate(r));
    expect(readdirSync(dir).filter((f) => f.startsWith('usage.journal'))).toHaveLength(1);
    store.db.close(); // killed before its batch

    const again = await UsageStore.open(path);
    const journalDir = join(dir, 'usage-journal');
    const rec = new UsageRecorder({ store: again, bus: new EventBus(), prices, backgroundCheckpoints: false, daemon: 'd1', team: { journalDir, formerJournalDir: dir } }).start();
    expect(recentRequests(again.db, { limit: 10 }).rows.map((r) => r.requestId)).toEqual(['req_1']);
    expect(readdirSync(dir).filter((f) => f.startsWith('usage.journal'))).toEqual([]);
    await rec.close();
    expect(readdirSync(journalDir)).toEqual([]);
  });
});

describe('an older usage.db', () => {
  it('keeps its history through the daemon migration, grouped as not recorded', async () => {
    const { DatabaseSync } = await loadSqlite();
    const path = join(dir, 'usage.db');
    const db = new DatabaseSync(path);
    for (const m of MIGRATIONS.filter((x) => x.version <= 8)) m.up(db);
    db.exec('PRAGMA user_version = 8');
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    db.prepare(`INSERT INTO hourly (hour, key_id, provider, model, key_label, key_name, requests, errors, input_tokens, output_tokens, cached_tokens,
      cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms) VALUES (?, 'k', 'openai', 'gpt-4o', '', 'app', 4, 0, 40, 8, 0, 0, 0, 0.5, 0, 12)`).run(hour);
    db.close();
    const store = await UsageStore.open(path);
    const r = { since: hour, until: Date.now() };
    expect(usageGroups(store.db, r, 'daemon').map((g) => [g.group, g.label, g.requests, g.cost])).toEqual([['', '(not recorded)', 4, 0.5]]);
    expect(usageGroups(store.db, r, 'model').map((g) => [g.group, g.requests])).toEqual([['openai/gpt-4o', 4]]);
    store.close();
  });
});

describe('the outbox and the shared store', () => {
  let postgres: TestPostgres;
  let url: string;
  beforeAll(async () => {
    postgres = await startPostgres();
    url = await postgres.database('team_history');
  }, 120_000);
  afterAll(() => { postgres?.destroy(); });

  const row = (id: string, daemon: string): UsageRow => ({
    requestId: id, startedAt: Date.now(), keyId: 'k1', keyName: 'app', mode: 'native', provider: 'openai', model: `m-${id}`, requestedModel: null,
    method: 'POST', path: '/openai/v1/chat/completions', stream: false, status: 200, errorCode: null, errorMessage: null, durationMs: 12.5, ttfbMs: 3,
    requestBytes: 100, outputBytes: 300, inputTokens: 10, outputTokens: 5, cachedTokens: 0, cacheWriteTokens: null, cacheWrite1hTokens: null,
    reasoningTokens: null, cost: 0.001, cacheSaved: 0, session: null, route: null, waitedMs: null, keyLabel: null, limit: null, daemon,
  });

  const open = async (name: string, retentionDays = 30, file = `${name}.db`) => {
    const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: name, log: () => {} });
    const store = await UsageStore.open(join(dir, file));
    // No timers in the way: each push, pull and prune below is called by the test.
    const team = new TeamHistory({ store, shared, daemon: name, log: () => {}, retentionDays: () => retentionDays, backstopMs: 3_600_000 });
    return { shared, store, team };
  };

  it('rows leave the outbox only once PostgreSQL has committed them', async () => {
    const c = await open('c');
    try {
      c.store.insert([row('req_c1', 'c'), row('req_c2', 'c')], [], true);
      // PostgreSQL refuses the push (as it would a statement cut off by a crash): nothing is lost.
      await c.shared.query("ALTER TABLE usage_requests ADD CONSTRAINT refuse_c CHECK (request_id <> 'req_c2')");
      await c.team.push();
      expect(c.store.outboxSize()).toBe(2);
      expect((await c.shared.query("SELECT 1 FROM usage_requests WHERE daemon = 'c'")).rowCount).toBe(0);
      await c.shared.query('ALTER TABLE usage_requests DROP CONSTRAINT refuse_c');
      await c.team.push();
      expect(c.store.outboxSize()).toBe(0);
      expect((await c.shared.query("SELECT request_id FROM usage_requests WHERE daemon = 'c' ORDER BY 1")).rows).toEqual([{ request_id: 'req_c1' }, { request_id: 'req_c2' }]);
    } finally {
      await c.team.close(); c.store.close(); await c.shared.close();
    }
  }, 60_000);

  it('a push committed but never taken off the outbox is pushed again and counted once; rows read twice are kept once', async () => {
    const a = await open('a');
    const b = await open('b');
    try {
      a.store.insert([row('req_a1', 'a'), row('req_a2', 'a')], [], true);
      await a.team.push();
      expect(a.store.outboxSize()).toBe(0);
      // The kill between PostgreSQL's commit and the outbox delete: the entries are back.
      a.store.db.exec('INSERT INTO usage_outbox (id) SELECT id FROM requests');
      a.store.insert([row('req_a3', 'a')], [], true);
      await a.team.push();
      expect(a.store.outboxSize()).toBe(0);
      const inStore = await a.shared.query<{ request_id: string; n: string }>("SELECT request_id, count(*) AS n FROM usage_requests WHERE daemon = 'a' GROUP BY 1 ORDER BY 1");
      expect(inStore.rows.map((r) => [r.request_id, Number(r.n)])).toEqual([['req_a1', 1], ['req_a2', 1], ['req_a3', 1]]);

      await b.team.pull();
      // Read again from the start, as a daemon killed before its cursor moved would.
      b.store.db.exec('DELETE FROM usage_pulled');
      await b.team.pull();
      const rows = recentRequests(b.store.db, { limit: 10 }).rows;
      expect(rows.filter((r) => r.daemon === 'a').map((r) => r.requestId).sort()).toEqual(['req_a1', 'req_a2', 'req_a3']);
      const back = rows.find((r) => r.requestId === 'req_a1')!;
      const { id: _, ...sent } = back;
      expect(sent).toEqual({ ...row('req_a1', 'a'), startedAt: back.startedAt });
      expect(b.store.outboxSize()).toBe(0); // another daemon's rows are never sent on
      // And its own rows coming back are not written twice.
      await a.team.pull();
      expect(recentRequests(a.store.db, { limit: 10, daemon: 'a' }).rows).toHaveLength(3);
    } finally {
      for (const d of [a, b]) { await d.team.close(); d.store.close(); await d.shared.close(); }
    }
  }, 60_000);

  it('a daemon reads the others\' rows and not its own back, except those from before it started (a lost usage.db gets its history back)', async () => {
    const own = await open('own');
    const other = await open('other');
    try {
      own.store.insert([row('req_own1', 'own')], [], true);
      await own.team.push();
      await own.team.pull();
      other.store.insert([row('req_other1', 'other')], [], true);
      await other.team.push();
      // Its own row pushed since it started is not read back: taken out of its usage.db (never
      // done by the gateway; here it shows which rows the read brings), it stays out.
      own.store.insert([row('req_own2', 'own')], [], true);
      await own.team.push();
      own.store.db.exec("DELETE FROM requests WHERE request_id = 'req_own2'");
      await own.team.pull();
      const ids = (d: { store: UsageStore }) => recentRequests(d.store.db, { limit: 50 }).rows.map((r) => r.requestId).filter((id) => /^req_(own|other)/.test(id)).sort();
      expect(ids(own)).toEqual(['req_other1', 'req_own1']);
      await other.team.pull();
      expect(ids(other)).toEqual(['req_other1', 'req_own1', 'req_own2']);
    } finally {
      for (const d of [own, other]) { await d.team.close(); d.store.close(); await d.shared.close(); }
    }
    // The same daemon started again on an empty usage.db reads its own earlier rows too.
    const again = await open('own', 30, 'own-again.db');
    try {
      await again.team.pull();
      const rows = recentRequests(again.store.db, { limit: 50 }).rows;
      expect(rows.map((r) => r.requestId).filter((id) => /^req_(own|other)/.test(id)).sort()).toEqual(['req_other1', 'req_own1', 'req_own2']);
      expect(again.store.outboxSize()).toBe(0);
    } finally {
      await again.team.close(); again.store.close(); await again.shared.close();
    }
  }, 60_000);

  it('rows written are pushed soon after, those written meanwhile with them in one statement', async () => {
    const g = await open('gather');
    const pushes: string[] = [];
    const query = g.shared.query.bind(g.shared);
    g.shared.query = ((text: string, ...rest: unknown[]) => {
      if (text.includes('usage_push')) pushes.push(text);
      return (query as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof g.shared.query;
    try {
      for (const id of ['req_g1', 'req_g2', 'req_g3']) {
        g.store.insert([row(id, 'gather')], [], true);
        g.team.soon();
      }
      await until('the three rows in PostgreSQL', async () => (await g.shared.query("SELECT 1 FROM usage_requests WHERE daemon = 'gather'")).rowCount === 3);
      expect(g.store.outboxSize()).toBe(0);
      expect(pushes).toHaveLength(1);
    } finally {
      await g.team.close(); g.store.close(); await g.shared.close();
    }
  }, 60_000);

  it('a daemon of the previous schema, still pushing while a newer one upgraded it, has its rows kept, each once', async () => {
    const d = await open('older');
    try {
      const rows = JSON.stringify([row('req_old1', 'older'), row('req_old2', 'older')]);
      const pushed = async (as: 'json' | 'jsonb') => Number((await d.shared.query<{ n: number }>(`SELECT usage_push($1::${as}) AS n`, [rows])).rows[0]!.n);
      expect(await pushed('jsonb')).toBe(2);
      expect(await pushed('json')).toBe(0);
      expect((await d.shared.query("SELECT 1 FROM usage_requests WHERE daemon = 'older'")).rowCount).toBe(2);
    } finally {
      await d.team.close(); d.store.close(); await d.shared.close();
    }
  }, 60_000);

  it('a row pushed from the journal\'s JSON and one made again from usage.db arrive the same as they were recorded', async () => {
    const from = await open('journaled');
    const to = await open('reader');
    try {
      const kept = { ...row('req_j1', 'journaled'), cost: 0.1 + 0.2, durationMs: 1 / 3, stream: true };
      const made = { ...row('req_j2', 'journaled'), errorMessage: 'quote " and \\ and ünïcode', cost: null };
      from.store.insert([kept, made], [], true);
      from.team.remember(kept.requestId, JSON.stringify(kept));
      await from.team.push();
      expect(from.store.outboxSize()).toBe(0);
      await to.team.pull();
      const back = recentRequests(to.store.db, { limit: 50, daemon: 'journaled' }).rows.map(({ id: _, ...r }) => r);
      expect(back.sort((a, b) => a.requestId.localeCompare(b.requestId))).toEqual([kept, made].map((r) => ({ ...r, startedAt: r.startedAt })));
    } finally {
      for (const d of [from, to]) { await d.team.close(); d.store.close(); await d.shared.close(); }
    }
  }, 60_000);

  it('a row whose JSON PostgreSQL refuses (a fractional token count) is sent again as usage.db has it: the pushes after it go on', async () => {
    const d = await open('fractional');
    try {
      const odd = { ...row('req_f1', 'fractional'), inputTokens: 10.5 };
      d.store.insert([odd, row('req_f2', 'fractional')], [], true);
      d.team.remember(odd.requestId, JSON.stringify(odd));
      await d.team.push();
      await d.team.push();
      expect(d.store.outboxSize()).toBe(0);
      const { rows } = await d.shared.query<{ request_id: string; input_tokens: string }>("SELECT request_id, input_tokens FROM usage_requests WHERE daemon = 'fractional' ORDER BY 1");
      expect(rows.map((r) => [r.request_id, Number(r.input_tokens)])).toEqual([['req_f1', 11], ['req_f2', 10]]);
    } finally {
      await d.team.close(); d.store.close(); await d.shared.close();
    }
  }, 60_000);

  it('each daemon prunes only the rows it served, by its own retention: a short one never cuts the team\'s history', async () => {
    const brief = await open('brief', 1);
    const long = await open('long', 30);
    const daysAgo = (n: number) => Date.now() - n * 86_400_000;
    try {
      brief.store.insert([{ ...row('req_brief_old', 'brief'), startedAt: daysAgo(10) }, row('req_brief_new', 'brief')], [], true);
      long.store.insert([{ ...row('req_long_old', 'long'), startedAt: daysAgo(10) }, { ...row('req_long_older', 'long'), startedAt: daysAgo(40) }], [], true);
      await brief.team.push();
      await long.team.push();
      const left = async () => (await brief.shared.query<{ request_id: string }>("SELECT request_id FROM usage_requests WHERE daemon IN ('brief', 'long') ORDER BY 1")).rows.map((r) => r.request_id);
      await brief.team.prune();
      expect(await left()).toEqual(['req_brief_new', 'req_long_old', 'req_long_older']);
      await long.team.prune();
      expect(await left()).toEqual(['req_brief_new', 'req_long_old']);
    } finally {
      for (const d of [brief, long]) { await d.team.close(); d.store.close(); await d.shared.close(); }
    }
  }, 60_000);
});
