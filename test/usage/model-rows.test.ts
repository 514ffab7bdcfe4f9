// One model, one row: providers answer a requested name with a dated snapshot (claude-sonnet-4-5 →
// claude-sonnet-4-5-20250929). Every way of asking (unified or native, streamed or whole) is
// recorded under the model the provider served, priced by it, with the name asked for kept beside
// it; a failure before the provider said which model joins the same row, across daemon restarts;
// a usage.db from before the requested_model column keeps working.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestRow } from '../../src/daemon/dashboard/page-usage.js';
import { openUsageHistory, recordUsage, type UsageRecorder } from '../../src/daemon/observe/usage/index.js';
import { recentRequests, usageGroups, type StoredRequest } from '../../src/daemon/observe/usage/queries.js';
import { MIGRATIONS, SCHEMA_VERSION, schemaVersion } from '../../src/daemon/observe/usage/schema.js';
import { loadSqlite } from '../../src/daemon/store/sqlite.js';
import { UsageStore } from '../../src/daemon/observe/usage/store.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, type MockHandler } from '../helpers/mock-provider.js';

/** What each provider serves for a requested name, as the real APIs do. */
const SNAPSHOTS: Record<string, string> = {
  'claude-sonnet-4-5': 'claude-sonnet-4-5-20250929',
  'gpt-4o': 'gpt-4o-2024-08-06',
  'gemini-flash-latest': 'gemini-2.5-flash',
};

/** The mock's usual answer, naming the snapshot instead of the name asked for. */
const servesSnapshots: MockHandler = (r, provider) => {
  if (provider === 'gemini') {
    const url = r.url.replace(/\/models\/([^/:]+)/, (m, name: string) => `/models/${SNAPSHOTS[name] ?? name}`);
    return defaultReply(provider, { ...r, url });
  }
  const body = JSON.parse(r.body.toString('utf8') || '{}') as { model?: string };
  if (!body.model || !SNAPSHOTS[body.model]) return undefined;
  return defaultReply(provider, { ...r, body: Buffer.from(JSON.stringify({ ...body, model: SNAPSHOTS[body.model] })) });
};

let gw: TestGateway;
let recorder: UsageRecorder;
const start = async () => recordUsage(await openUsageHistory({ dir: gw.dir, config: {}, log: () => {} }), gw.daemon.ctx.bus, () => {});

beforeAll(async () => {
  gw = await startTestGateway();
  recorder = await start();
  for (const m of Object.values(gw.mocks)) m.setHandler(servesSnapshots);
});
afterAll(async () => { await recorder?.close(); await gw?.close(); });

const rows = (n: number): StoredRequest[] => { recorder.flush(); return recentRequests(recorder.store.db, { limit: n }).rows.reverse(); };
const groups = () => { recorder.flush(); return usageGroups(recorder.store.db, { since: Date.now() - 3_600_000, until: Date.now() }, 'model'); };
const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': gw.key }, body: JSON.stringify(body),
});

describe('one model, one row', () => {
  it('unified and native, streamed and whole: one row per served model, priced, the asked-for name kept', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages });
    for await (const _ of await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages, stream: true })) { /* drain */ }
    for (const stream of [false, true]) {
      const r = await post('/anthropic/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 9, stream, messages });
      expect(r.status).toBe(200);
      await r.text();
    }
    const recorded = rows(4);
    expect(recorded.map((r) => [r.mode, r.stream, r.model])).toEqual([
      ['unified', false, 'claude-sonnet-4-5-20250929'], ['unified', true, 'claude-sonnet-4-5-20250929'],
      ['native', false, 'claude-sonnet-4-5-20250929'], ['native', true, 'claude-sonnet-4-5-20250929'],
    ]);
    // The unified request names its model; a native one's body is not read (no model allow-list).
    expect(recorded.map((r) => r.requestedModel)).toEqual(['claude-sonnet-4-5', 'claude-sonnet-4-5', null, null]);
    expect(recorded.every((r) => r.cost !== null && r.cost > 0)).toBe(true);
    expect(groups().map((g) => [g.group, g.requests])).toEqual([['anthropic/claude-sonnet-4-5-20250929', 4]]);
  });

  it('OpenAI and Gemini streams are recorded under the model their chunks name', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    for (const model of ['openai/gpt-4o', 'gemini/gemini-flash-latest']) {
      const stream = await client.chat.completions.create({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
      for await (const _ of stream) { /* drain */ }
    }
    expect(rows(2).map((r) => [r.provider, r.model, r.requestedModel, r.cost !== null])).toEqual([
      ['openai', 'gpt-4o-2024-08-06', 'gpt-4o', true],
      ['gemini', 'gemini-2.5-flash', 'gemini-flash-latest', true],
    ]);
  });

  it('a failure before the provider named its model joins the row of the model the name last resolved to, after a restart too', async () => {
    const limited: MockHandler = () => ({ status: 429, headers: { 'content-type': 'application/json' }, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' });
    gw.mocks.anthropic.setHandler(limited);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] });
    await expect(ask()).rejects.toMatchObject({ status: 429 });
    expect(rows(1)[0]).toMatchObject({ status: 429, model: 'claude-sonnet-4-5-20250929', requestedModel: 'claude-sonnet-4-5' });
    // A restarted daemon learns the names from the history it recorded.
    await recorder.close();
    recorder = await start();
    await expect(ask()).rejects.toMatchObject({ status: 429 });
    expect(rows(1)[0]).toMatchObject({ status: 429, model: 'claude-sonnet-4-5-20250929', requestedModel: 'claude-sonnet-4-5' });
    const anthropic = groups().filter((g) => g.group.startsWith('anthropic/'));
    expect(anthropic.map((g) => [g.group, g.requests, g.errors])).toEqual([['anthropic/claude-sonnet-4-5-20250929', 6, 2]]);
    gw.mocks.anthropic.setHandler(servesSnapshots);
  });

  it('the dashboard shows the served model, and the name asked for beneath it when they differ', () => {
    const [row] = rows(1);
    const html = String(requestRow({ ...row!, model: 'claude-sonnet-4-5-20250929', requestedModel: 'claude-sonnet-4-5' }));
    expect(html).toContain('claude-sonnet-4-5-20250929</span>');
    expect(html).toContain('asked claude-sonnet-4-5<');
    expect(String(requestRow({ ...row!, model: 'gpt-5.4', requestedModel: 'gpt-5.4' }))).not.toContain('asked');
  });
});

describe('the usage.db schema', () => {
  it('a database from before requested_model opens, keeps its rows (asked-for name unknown) and records new ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-v3-'));
    try {
      const path = join(dir, 'usage.db');
      const { DatabaseSync } = await loadSqlite();
      const db = new DatabaseSync(path);
      const v3 = MIGRATIONS.filter((m) => m.version <= 3);
      for (const m of v3) m.up(db);
      db.exec('PRAGMA user_version = 3');
      db.prepare(`INSERT INTO requests (request_id, started_at, key_id, key_name, mode, provider, model, method, path, stream, status, duration_ms, request_bytes, output_bytes)
        VALUES ('old', ?, 'k', 'app', 'unified', 'anthropic', 'claude-sonnet-4-5', 'POST', '/v1/chat/completions', 1, 200, 10, 1, 1)`).run(Date.now() - 1000);
      db.close();
      const store = await UsageStore.open(path);
      expect(schemaVersion(store.db)).toBe(SCHEMA_VERSION);
      store.insert([{
        requestId: 'new', startedAt: Date.now(), keyId: 'k', keyName: 'app', mode: 'unified', provider: 'anthropic',
        model: 'claude-sonnet-4-5-20250929', requestedModel: 'claude-sonnet-4-5', method: 'POST', path: '/v1/chat/completions', stream: true,
        status: 200, errorCode: null, errorMessage: null, durationMs: 10, ttfbMs: 5, requestBytes: 1, outputBytes: 1,
        inputTokens: 1, outputTokens: 1, cachedTokens: null, cacheWriteTokens: null, cacheWrite1hTokens: null, reasoningTokens: null, cost: 0,
        cacheSaved: 0, session: null, route: null, waitedMs: null, keyLabel: null,
      }]);
      expect(recentRequests(store.db, {}).rows.map((r) => [r.requestId, r.model, r.requestedModel])).toEqual([
        ['new', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'], ['old', 'claude-sonnet-4-5', null],
      ]);
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
