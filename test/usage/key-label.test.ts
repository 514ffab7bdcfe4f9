// Usage per provider key label on real SQLite files: a database from before schema 5 keeps its
// rollups through the migration (as rows of no pool), and usage per label outlives the raw rows,
// since the rollups keep the label as a dimension.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { recentRequests, usageGroups } from '../../src/daemon/observe/usage/queries.js';
import { MIGRATIONS, SCHEMA_VERSION, schemaVersion } from '../../src/daemon/observe/usage/schema.js';
import { UsageStore, type UsageRow } from '../../src/daemon/observe/usage/store.js';
import { loadSqlite } from '../../src/daemon/store/sqlite.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'gateway-label-')); });
afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

const NOW = Date.now();
function row(over: Partial<UsageRow>): UsageRow {
  return {
    requestId: `req_${Math.random().toString(36).slice(2)}`, startedAt: NOW, keyId: 'k1', keyName: 'app', mode: 'messages',
    provider: 'openai', model: 'gpt-5.4', requestedModel: 'gpt-5.4', method: 'POST', path: '/v1/messages', stream: false, status: 200,
    errorCode: null, errorMessage: null, durationMs: 100, ttfbMs: 50, requestBytes: 10, outputBytes: 20,
    inputTokens: 100, outputTokens: 10, cachedTokens: null, cacheWriteTokens: null, cacheWrite1hTokens: null, reasoningTokens: null, cost: 0.01,
    cacheSaved: null, session: null, route: null, waitedMs: null, keyLabel: null, ...over,
  };
}
const range = { since: NOW - 3_600_000, until: NOW + 1 };
const byLabel = (store: UsageStore) => usageGroups(store.db, range, 'provider-key').map((g) => [g.group, g.label, g.requests, g.cost]);

it('a schema 4 database migrates: its rollups count as no pool, its rows keep no route; new rows add their label', async () => {
  const path = join(dir, 'usage.db');
  const { DatabaseSync } = await loadSqlite();
  const db = new DatabaseSync(path);
  for (const m of MIGRATIONS.filter((x) => x.version <= 4)) m.up(db);
  db.exec('PRAGMA user_version = 4');
  const hour = Math.floor(NOW / 3_600_000) * 3_600_000;
  db.prepare(`INSERT INTO hourly VALUES (?, 'k1', 'openai', 'gpt-5.4', 'app', 3, 0, 300, 30, 0, 0, 0, 0.03, 0, 300)`).run(hour);
  db.prepare(`INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, method, path, stream, status, duration_ms, request_bytes, output_bytes)
    VALUES ('old', ?, 'k1', 'app', 'messages', 'openai', 'gpt-5.4', 'POST', '/v1/messages', 0, 200, 10, 1, 1)`).run(NOW - 1000);
  db.close();
  const store = await UsageStore.open(path);
  try {
    expect(schemaVersion(store.db)).toBe(SCHEMA_VERSION);
    expect(byLabel(store)).toEqual([['openai', 'openai (no pool)', 3, 0.03]]);
    store.insert([row({ keyLabel: 'work', route: 'anthropic/claude-sonnet-4-5=529, openai/gpt-5.4#work=200', waitedMs: 1200 })]);
    expect(byLabel(store)).toEqual([['openai', 'openai (no pool)', 3, 0.03], ['openai#work', 'openai#work', 1, 0.01]]);
    // Grouped by model, the labels sum up again.
    expect(usageGroups(store.db, range, 'model').map((g) => [g.group, g.requests])).toEqual([['openai/gpt-5.4', 4]]);
    expect(recentRequests(store.db, {}).rows.map((r) => [r.requestId, r.route, r.waitedMs, r.keyLabel])).toEqual([
      [expect.any(String), 'anthropic/claude-sonnet-4-5=529, openai/gpt-5.4#work=200', 1200, 'work'], ['old', null, null, null],
    ]);
  } finally {
    store.close();
  }
});

it('usage per label outlives the raw rows: pruned requests still count in the rollups, by label', async () => {
  const store = await UsageStore.open(join(dir, 'usage.db'));
  try {
    store.insert([row({ keyLabel: 'work' }), row({ keyLabel: 'work' }), row({ keyLabel: 'home', cost: 0.05 }), row({ provider: 'gemini', model: 'gemini-3.5-flash' })]);
    store.prune(NOW + 1, 0); // every raw row goes; the rollups stay
    expect(store.count()).toBe(0);
    expect(byLabel(store)).toEqual([['openai#home', 'openai#home', 1, 0.05], ['openai#work', 'openai#work', 2, 0.02], ['gemini', 'gemini (no pool)', 1, 0.01]]);
  } finally {
    store.close();
  }
});
