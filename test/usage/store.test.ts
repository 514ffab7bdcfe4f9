// The usage store on real SQLite files: migrations, rollups agreeing with raw rows, batching and
// flush-on-close in the recorder, retention, and a corrupt file moved aside.
import { mkdtempSync, rmSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBus, type GatewayEvent } from '../../src/daemon/observe/events.js';
import { buildPriceTable, readShippedPrices } from '../../src/daemon/observe/usage/prices.js';
import { filterOptions, latencyByProvider, localDay, recentRequests, usageGroups, usageSeries, usageTotals } from '../../src/daemon/observe/usage/queries.js';
import { UsageRecorder } from '../../src/daemon/observe/usage/recorder.js';
import { migrate, MIGRATIONS, SCHEMA_VERSION, schemaVersion, type Migration } from '../../src/daemon/observe/usage/schema.js';
import { loadSqlite } from '../../src/daemon/store/sqlite.js';
import { HOUR_MS, UsageStore, type UsageRow } from '../../src/daemon/observe/usage/store.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'gateway-usage-')); });
afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

const DAY = 86_400_000;
const prices = buildPriceTable(readShippedPrices()).table;

function row(over: Partial<UsageRow> = {}): UsageRow {
  return {
    requestId: `req_${Math.random().toString(36).slice(2)}`, startedAt: Date.now(), keyId: 'k1', keyName: 'app', mode: 'native',
    provider: 'openai', model: 'gpt-4o', requestedModel: 'gpt-4o', method: 'POST', path: '/v1/chat/completions', stream: false, status: 200,
    errorCode: null, errorMessage: null, durationMs: 120, ttfbMs: 80, requestBytes: 100, outputBytes: 300,
    inputTokens: 10, outputTokens: 5, cachedTokens: 0, cacheWriteTokens: null, cacheWrite1hTokens: null, reasoningTokens: null, cost: 0.001,
    cacheSaved: 0, session: null, route: null, waitedMs: null, keyLabel: null, ...over,
  };
}

/** One request's worth of bus events. */
function request(bus: EventBus, id: string, over: { model?: string; status?: number; keyId?: string; time?: number } = {}): void {
  const time = over.time ?? Date.now();
  const started: GatewayEvent = { type: 'started', id, time, keyId: over.keyId ?? 'k1', keyName: 'app', mode: 'native', provider: 'openai', model: over.model ?? 'gpt-4o', method: 'POST', path: '/v1/chat/completions', stream: false, requestBytes: 42 };
  bus.publish(started);
  bus.publish({ type: 'finished', id, time: time + 5, status: over.status ?? 200, durationMs: 5, ttfbMs: 3, outputBytes: 10, usage: { inputTokens: 100, outputTokens: 20 }, model: null });
}

describe('schema and migrations', () => {
  it('creates a fresh database at the newest version, with private file mode', async () => {
    const path = join(dir, 'usage.db');
    const store = await UsageStore.open(path);
    expect(schemaVersion(store.db)).toBe(SCHEMA_VERSION);
    const tables = (store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['hourly', 'latency_hourly', 'requests']));
    expect((store.db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
    store.close();
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = await UsageStore.open(path); // idempotent
    expect(schemaVersion(again.db)).toBe(SCHEMA_VERSION);
    again.close();
  });

  it('applies only newer migrations, keeps data, and rolls a failed one back', async () => {
    const { DatabaseSync } = await loadSqlite();
    const db = new DatabaseSync(join(dir, 'm.db'));
    expect(migrate(db)).toEqual(MIGRATIONS.map((m) => m.version));
    db.prepare(`INSERT INTO hourly (hour, key_id, provider, model, key_name, requests, errors, input_tokens, output_tokens, cached_tokens,
      cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms) VALUES (0, 'k', 'openai', 'm', 'n', 1, 0, 1, 1, 0, 0, 0, 0.5, 0, 3)`).run();
    const v2: Migration = { version: SCHEMA_VERSION + 1, description: 'add a note column', up: (d) => d.exec('ALTER TABLE hourly ADD COLUMN note TEXT') };
    expect(migrate(db, [...MIGRATIONS, v2])).toEqual([SCHEMA_VERSION + 1]);
    expect(db.prepare('SELECT requests, note FROM hourly').get()).toEqual({ requests: 1, note: null });
    const broken: Migration = { version: SCHEMA_VERSION + 2, description: 'broken', up: (d) => { d.exec('CREATE TABLE half (x)'); d.exec('THIS IS NOT SQL'); } };
    expect(() => migrate(db, [...MIGRATIONS, v2, broken])).toThrow(/migration to version .* failed/);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION + 1);
    expect(db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'half'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('v1 → v2 backfills per-hour totals and daily rollups from the hourly ones', async () => {
    const path = join(dir, 'v1.db');
    const { DatabaseSync } = await loadSqlite();
    const db = new DatabaseSync(path);
    migrate(db, MIGRATIONS.slice(0, 1));
    expect(schemaVersion(db)).toBe(1);
    const day = Math.floor(Date.now() / DAY) * DAY - 10 * DAY;
    const ins = db.prepare('INSERT INTO hourly VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (let h = 0; h < 48; h++) for (const key of ['k1', 'k2']) ins.run(day + h * HOUR_MS, key, 'openai', 'gpt-4o', `name-${key}`, 3, 1, 30, 20, 10, 0, 5, 0.25, 1, 300);
    db.prepare("INSERT INTO latency_hourly VALUES (?, 'openai', 'duration', 40, 7)").run(day + HOUR_MS);
    db.prepare("INSERT INTO latency_hourly VALUES (?, 'openai', 'duration', 40, 5)").run(day + 30 * HOUR_MS);
    db.close();
    const store = await UsageStore.open(path);
    expect(schemaVersion(store.db)).toBe(SCHEMA_VERSION);
    expect(store.db.prepare('SELECT COUNT(*) AS n, SUM(requests) AS r FROM hourly_totals').get()).toEqual({ n: 48, r: 288 });
    expect(store.db.prepare('SELECT day, key_id, requests, cost FROM daily ORDER BY day, key_id').all()).toEqual([
      { day, key_id: 'k1', requests: 72, cost: 6 }, { day, key_id: 'k2', requests: 72, cost: 6 },
      { day: day + DAY, key_id: 'k1', requests: 72, cost: 6 }, { day: day + DAY, key_id: 'k2', requests: 72, cost: 6 },
    ]);
    expect(store.db.prepare('SELECT day, hist FROM latency_daily ORDER BY day').all()).toEqual([{ day, hist: '{"40":7}' }, { day: day + DAY, hist: '{"40":5}' }]);
    const r = { since: day - DAY, until: Date.now() };
    expect(usageTotals(store.db, r)).toMatchObject({ requests: 288, errors: 96, unpricedRequests: 96 });
    expect(usageGroups(store.db, r, 'key').map((g) => [g.label, g.requests])).toEqual([['name-k1', 144], ['name-k2', 144]]);
    store.close();
  });

  it('v5 → the cache columns: older rows keep their cache reads and writes, their 1-hour writes, savings and session unknown; new rows add theirs', async () => {
    const path = join(dir, 'v5.db');
    const { DatabaseSync } = await loadSqlite();
    const db = new DatabaseSync(path);
    migrate(db, MIGRATIONS.slice(0, 5));
    expect(schemaVersion(db)).toBe(5);
    const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const sums = 'requests, errors, input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost, unpriced, duration_ms';
    db.prepare(`INSERT INTO hourly (hour, key_id, provider, model, key_label, key_name, ${sums}) VALUES (?, 'k1', 'anthropic', 'claude-opus-4-6', '', 'app', 1, 0, 1000, 10, 600, 300, 0, 0.01, 0, 100)`).run(hour);
    db.prepare(`INSERT INTO hourly_totals (hour, ${sums}) VALUES (?, 1, 0, 1000, 10, 600, 300, 0, 0.01, 0, 100)`).run(hour);
    db.prepare(`INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, method, path, stream, status, duration_ms, request_bytes,
      output_bytes, input_tokens, output_tokens, cached_tokens, cache_write_tokens, cost) VALUES ('old', ?, 'k1', 'app', 'messages', 'anthropic', 'claude-opus-4-6',
      'POST', '/v1/messages', 0, 200, 100, 10, 10, 1000, 10, 600, 300, 0.01)`).run(hour);
    db.close();
    const store = await UsageStore.open(path);
    expect(schemaVersion(store.db)).toBe(SCHEMA_VERSION);
    expect(recentRequests(store.db, {}).rows[0]).toMatchObject({ requestId: 'old', cachedTokens: 600, cacheWriteTokens: 300, cacheWrite1hTokens: null, cacheSaved: null, session: null });
    store.insert([row({
      provider: 'anthropic', model: 'claude-opus-4-6', startedAt: hour + 1, inputTokens: 1540, cachedTokens: 1200, cacheWriteTokens: 300,
      cacheWrite1hTokens: 200, outputTokens: 30, cost: 0.004175, cacheSaved: 0.004275, session: 'a7c1b9e2-3d4f-4a5b-8c6d-7e8f9a0b1c2d',
    })]);
    const r = { since: hour, until: hour + HOUR_MS - 1 };
    expect(usageTotals(store.db, r)).toMatchObject({
      requests: 2, inputTokens: 2540, cachedTokens: 1800, cacheWriteTokens: 600, cacheWrite1hTokens: 200, cacheHitRatio: 0.7087, cost: 0.014175, cacheSaved: 0.004275,
    });
    expect(usageGroups(store.db, r, 'model')).toEqual([expect.objectContaining({ group: 'anthropic/claude-opus-4-6', cacheWrite1hTokens: 200, cacheSaved: 0.004275 })]);
    expect(usageGroups(store.db, r, 'session').map((g) => [g.group, g.label, g.requests, g.cachedTokens, g.cacheSaved])).toEqual([
      ['', '(none named)', 1, 600, 0], ['a7c1b9e2-3d4f-4a5b-8c6d-7e8f9a0b1c2d', 'a7c1b9e2-3d4f-4a5b-8c6d-7e8f9a0b1c2d', 1, 1200, 0.004275],
    ]);
    store.close();
  });

  it('refuses a database written by a newer gateway', async () => {
    const { DatabaseSync } = await loadSqlite();
    const path = join(dir, 'future.db');
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 5}`);
    db.close();
    await expect(UsageStore.open(path)).rejects.toThrow(/newer than this gateway understands/);
  });

  it('moves a corrupt file aside and starts a fresh history', async () => {
    const path = join(dir, 'usage.db');
    writeFileSync(path, Buffer.alloc(8192, 0x5a));
    const lines: string[] = [];
    const store = await UsageStore.open(path, { log: (l) => lines.push(l) });
    expect(store.count()).toBe(0);
    store.close();
    expect(readdirSync(dir).some((f) => f.startsWith('usage.db.corrupt-'))).toBe(true);
    expect(lines.join('\n')).toMatch(/moved it to/);
  });
});

describe('rollups agree with the raw rows', () => {
  it('totals, groups, series, filters and latency', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const now = Date.now();
    const rows: UsageRow[] = [];
    for (let i = 0; i < 300; i++) {
      rows.push(row({
        startedAt: now - (i % 50) * HOUR_MS - 1000,
        keyId: i % 3 === 0 ? 'k2' : 'k1', keyName: i % 3 === 0 ? 'batch' : 'app',
        provider: i % 2 === 0 ? 'anthropic' : 'openai', model: i % 2 === 0 ? 'claude-sonnet-4-5' : 'gpt-4o',
        status: i % 10 === 0 ? 502 : 200, durationMs: 100 + (i % 7) * 50, inputTokens: i, outputTokens: 2 * i,
        cachedTokens: i % 4, reasoningTokens: i % 5, cost: i % 6 === 0 ? null : i / 1000,
      }));
    }
    store.insert(rows.slice(0, 137));
    store.insert(rows.slice(137)); // rollups of the same hour accumulate across batches
    const raw = store.db.prepare(`SELECT COUNT(*) AS requests, SUM(status >= 400) AS errors, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
      SUM(cached_tokens) AS cached, SUM(reasoning_tokens) AS reasoning, SUM(cost) AS cost, SUM(cost IS NULL) AS unpriced FROM requests`).get() as Record<string, number>;
    const r = { since: now - 3 * DAY, until: now };
    const t = usageTotals(store.db, r);
    expect(t).toMatchObject({ requests: raw.requests, errors: raw.errors, inputTokens: raw.input, outputTokens: raw.output, cachedTokens: raw.cached, reasoningTokens: raw.reasoning, unpricedRequests: raw.unpriced });
    expect(t.cost).toBeCloseTo(raw.cost!, 9);

    for (const by of ['model', 'key', 'provider', 'day'] as const) {
      const groups = usageGroups(store.db, r, by);
      expect(groups.reduce((s, g) => s + g.requests, 0)).toBe(300);
      expect(groups.reduce((s, g) => s + (g.cost ?? 0), 0)).toBeCloseTo(raw.cost!, 9);
    }
    const byKey = usageGroups(store.db, r, 'key');
    expect(byKey.map((g) => g.label).sort()).toEqual(['app', 'batch']);
    expect(byKey.find((g) => g.group === 'k2')!.requests).toBe(100);
    const days = usageGroups(store.db, r, 'day');
    const rawDays = new Map<string, number>();
    for (const x of rows) rawDays.set(localDay(x.startedAt), (rawDays.get(localDay(x.startedAt)) ?? 0) + 1);
    expect(Object.fromEntries(days.map((d) => [d.group, d.requests]))).toEqual(Object.fromEntries(rawDays));

    const hourly = usageSeries(store.db, r, 'hour');
    expect(hourly.length).toBe(73); // 72 whole hours back plus the current one
    expect(hourly.reduce((s, p) => s + p.requests, 0)).toBe(300);
    expect(hourly.every((p, i) => i === 0 || p.t - hourly[i - 1]!.t === HOUR_MS)).toBe(true);
    const daily = usageSeries(store.db, r, 'day');
    expect(daily.reduce((s, p) => s + p.requests, 0)).toBe(300);

    const lat = latencyByProvider(store.db, r);
    expect(lat.map((l) => l.provider)).toEqual(['anthropic', 'openai']);
    const okDurations = rows.filter((x) => x.provider === 'openai' && x.status < 400).map((x) => x.durationMs).sort((a, b) => a - b);
    const p50 = okDurations[Math.ceil(0.5 * okDurations.length) - 1]!;
    const got = lat.find((l) => l.provider === 'openai')!;
    expect(got.duration.count).toBe(okDurations.length);
    expect(Math.abs(got.duration.p50! - p50) / p50).toBeLessThan(0.06);

    const opts = filterOptions(store.db, r);
    expect(opts.models.sort()).toEqual(['claude-sonnet-4-5', 'gpt-4o']);
    const page1 = recentRequests(store.db, { limit: 40, status: 'error' });
    expect(page1.rows).toHaveLength(30);
    expect(page1.rows.every((x) => x.status >= 400)).toBe(true);
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const p = recentRequests(store.db, { limit: 64, before: cursor, keyId: 'k1' });
      all.push(...p.rows.map((x) => x.requestId));
      cursor = p.next ?? undefined;
    } while (cursor);
    expect(new Set(all).size).toBe(200);
    store.close();
  });
});

describe('the recorder', () => {
  it('never writes in the publish path, batches, and flushes on its timer', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 60, maxBatch: 10_000, chunkRows: 250 }).start();
    for (let i = 0; i < 500; i++) request(bus, `r${i}`);
    expect(store.count()).toBe(0); // queued, not written
    expect(rec.stats.buffered).toBe(500);
    // No batch is full (maxBatch 10,000), so only the timer writes them.
    await expect.poll(() => store.count(), { timeout: 5_000, interval: 5 }).toBe(500);
    expect(rec.stats.flushes).toBe(2); // 250 rows per transaction, one per event-loop turn
    await rec.close();
  });

  it('drains a backlog one chunk per event-loop turn', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 60_000, maxBatch: 1_000, chunkRows: 100 }).start();
    for (let i = 0; i < 1_000; i++) request(bus, `r${i}`);
    await new Promise((r) => setImmediate(r)); // the full batch schedules a drain
    expect(store.count()).toBe(100); // one chunk, then the loop is free for requests
    await expect.poll(() => store.count(), { timeout: 5_000, interval: 5 }).toBe(1_000);
    expect(rec.stats.flushes).toBe(10);
    await rec.close();
  });

  it('writes a full batch on the next turn without waiting for the timer', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 60_000, maxBatch: 100, chunkRows: 1_000 }).start();
    for (let i = 0; i < 250; i++) request(bus, `r${i}`);
    await new Promise((r) => setImmediate(r));
    expect(store.count()).toBe(250);
    await rec.close();
  });

  it('loses nothing on close (gateway stop), and prices each row', async () => {
    const path = join(dir, 'usage.db');
    const store = await UsageStore.open(path);
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 60_000 }).start();
    for (let i = 0; i < 1234; i++) request(bus, `r${i}`, { model: i % 2 ? 'gpt-4o' : 'no-such-model', status: i % 100 === 0 ? 500 : 200 });
    await rec.close();
    const again = await UsageStore.open(path);
    expect(again.count()).toBe(1234);
    const t = usageTotals(again.db, { since: Date.now() - DAY, until: Date.now() });
    expect(t.requests).toBe(1234);
    expect(t.errors).toBe(13);
    expect(t.unpricedRequests).toBe(617); // every request of the model the price table does not know
    expect(t.cost).toBeCloseTo(617 * (100 * 2.5 + 20 * 10) / 1e6, 9); // gpt-4o: $2.50 in, $10 out per million
    again.close();
  });

  it('checkpoints the WAL from a worker thread, not on the event loop', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 20, checkpointIntervalMs: 50 }).start();
    expect(store.db.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 });
    for (let i = 0; i < 3_000; i++) request(bus, `r${i}`);
    const deadline = Date.now() + 5_000;
    while ((rec.checkpointer!.stats.checkpoints < 2 || rec.checkpointer!.stats.lastFrames === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(rec.checkpointer!.stats.lastFrames).toBeGreaterThan(0); // the worker copied the log back
    expect(rec.checkpointer!.stats.failures).toBe(0);
    await rec.close();
    const again = await UsageStore.open(join(dir, 'usage.db'));
    expect(again.count()).toBe(3_000);
    expect(again.db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    again.close();
  });

  it('keeps rows when the database refuses a write, and retries', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const bus = new EventBus();
    const lines: string[] = [];
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 60_000, log: (l) => lines.push(l) }).start();
    request(bus, 'a');
    store.db.exec('BEGIN IMMEDIATE'); // a transaction is open: the recorder's BEGIN fails
    expect(rec.flush()).toBe(0);
    expect(rec.stats.failures).toBe(1);
    expect(lines[0]).toMatch(/will retry/);
    store.db.exec('ROLLBACK');
    request(bus, 'b');
    expect(rec.flush()).toBe(2);
    await rec.close();
  });
});

describe('the recorder, when a large flush is refused part way', () => {
  it('writes no row twice: what was committed leaves the queue, the rest is retried', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, flushIntervalMs: 60_000, maxBatch: 1e9 }).start();
    for (let i = 0; i < 6_000; i++) request(bus, `r${i}`);
    // The database refuses one row of the second transaction (a flush writes 5,000 rows to one).
    store.db.exec("CREATE TEMP TRIGGER refuse BEFORE INSERT ON requests WHEN NEW.request_id = 'r5500' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    expect(rec.flush()).toBe(5_000);
    expect(store.count()).toBe(5_000);
    store.db.exec('DROP TRIGGER refuse');
    expect(rec.flush()).toBe(1_000);
    expect(store.count()).toBe(6_000);
    await rec.close();
  });
});

describe('retention', () => {
  it('prunes raw rows after retentionDays and rollups after rollupRetentionDays', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const now = Date.now();
    store.insert([
      row({ startedAt: now - 500 * DAY }),
      row({ startedAt: now - 45 * DAY }),
      row({ startedAt: now - 10 * DAY }),
      row({ startedAt: now - 1000 }),
    ]);
    const bus = new EventBus();
    const rec = new UsageRecorder({ store, bus, prices, retentionDays: 30, rollupRetentionDays: 400, now: () => now });
    rec.prune();
    expect(store.count()).toBe(2);
    // The 45-day-old request is gone from the raw table but still counted by the rollups.
    expect(usageTotals(store.db, { since: now - 60 * DAY, until: now }).requests).toBe(3);
    expect(usageTotals(store.db, { since: now - 600 * DAY, until: now }).requests).toBe(3);
    expect(recentRequests(store.db, { since: now - 60 * DAY }).rows).toHaveLength(2);
    await rec.close();
  });

  it('prunes a large backlog in chunks', async () => {
    const store = await UsageStore.open(join(dir, 'usage.db'));
    const now = Date.now();
    const old = Array.from({ length: 12_000 }, (_, i) => row({ startedAt: now - 40 * DAY - i }));
    store.insert(old);
    store.insert([row({ startedAt: now })]);
    const res = store.prune(now - 30 * DAY, now - 400 * DAY, 5_000);
    expect(res.requests).toBe(12_000);
    expect(store.count()).toBe(1);
    store.close();
  });
});
