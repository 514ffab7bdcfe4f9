// The JSON admin API behind the dashboard, with the admin token: keys (create once, list, revoke
// with immediate effect), providers (where from, test, store in keychain), usage and the live stream.
import { request } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboardGateway, type DashboardGateway } from './harness.js';
import type { LiveEvent } from '../../src/daemon/observe/usage/recorder.js';
import { SCHEMA_VERSION } from '../../src/daemon/observe/usage/schema.js';

let gw: DashboardGateway;
let auth: Record<string, string>;
beforeAll(async () => {
  gw = await startDashboardGateway({ usageConfig: { prices: { 'openai/gpt-5.4': { input: 2, output: 10 } } } });
  auth = { authorization: `Bearer ${gw.daemon.adminToken}` };
});
afterAll(async () => { await gw?.close(); });

const chat = (key: string, model = 'gpt-5.4') => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
  .chat.completions.create({ model: `openai/${model}`, messages: [{ role: 'user', content: 'hi' }] });

describe('/admin/keys', () => {
  it('creates a key (returned once), which works at once and shows up with its last use', async () => {
    const r = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'ci-bot', expires: '7d', models: ['gpt-5.4', 'claude-*'] } });
    expect(r.status).toBe(201);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.json.key).toMatch(/^sk-proxy-[A-Za-z0-9_-]{43}$/);
    expect(r.json.record).toMatchObject({ name: 'ci-bot', status: 'active', models: ['gpt-5.4', 'claude-*'], revokedAt: null, lastUsedAt: null });
    expect(Date.parse(r.json.record.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    const done = await chat(r.json.key);
    expect(done.choices[0]!.message.content).toContain('mock');
    const list = await gw.raw('GET', '/admin/keys', { headers: auth });
    const mine = list.json.keys.find((k: { id: string }) => k.id === r.json.record.id);
    expect(Date.now() - Date.parse(mine.lastUsedAt)).toBeLessThan(10_000);
    await expect(chat(r.json.key, 'gpt-4o')).rejects.toMatchObject({ status: 403 }); // allow-list applies
  });

  it('revokes with immediate effect: the next call is a 401', async () => {
    const { json } = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'short-lived' } });
    await chat(json.key);
    const rev = await gw.raw('POST', `/admin/keys/${json.record.id}/revoke`, { headers: auth });
    expect(rev.status).toBe(200);
    expect(rev.json.key).toMatchObject({ status: 'revoked', name: 'short-lived' });
    await expect(chat(json.key)).rejects.toMatchObject({ status: 401, code: 'key_revoked' });
    const again = await gw.raw('POST', `/admin/keys/${json.record.id}/revoke`, { headers: auth });
    expect(again.status).toBe(200); // idempotent
  });

  it('says exactly what is wrong', async () => {
    const dup = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'test' } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.message).toMatch(/already exists/);
    const badName = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'has space' } });
    expect(badName.status).toBe(400);
    const badExp = await gw.raw('POST', '/admin/keys', { headers: auth, body: { expires: 'tomorrow-ish' } });
    expect(badExp.status).toBe(400);
    expect(badExp.json.error.message).toMatch(/"expires" takes a duration/);
    const badModels = await gw.raw('POST', '/admin/keys', { headers: auth, body: { models: [1, 2] } });
    expect(badModels.status).toBe(400);
    const notJson = await gw.raw('POST', '/admin/keys', { headers: auth, body: '{nope' });
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.code).toBe('invalid_json');
    expect((await gw.raw('POST', '/admin/keys/nope/revoke', { headers: auth })).status).toBe(404);
    expect((await gw.raw('DELETE', '/admin/keys', { headers: auth })).status).toBe(405);
    expect((await gw.raw('GET', '/admin/keys/x/y/z', { headers: auth })).status).toBe(404);
  });

  it('leaves the daemon\'s own admin routes to the daemon', async () => {
    const s = await gw.raw('GET', '/admin/status', { headers: auth });
    expect(s.status).toBe(200);
    expect(s.json.pid).toBe(process.pid);
  });
});

describe('/admin/providers', () => {
  it('lists where each key comes from, never the key', async () => {
    const r = await gw.raw('GET', '/admin/providers', { headers: auth });
    expect(r.status).toBe(200);
    const byId = Object.fromEntries(r.json.providers.map((p: { provider: string }) => [p.provider, p]));
    expect(byId.openai).toMatchObject({ configured: true, origin: 'environment', last4: gw.mocks.openai.key.slice(-4), envVar: 'GATEWAY_OPENAI_API_KEY', baseUrl: gw.mocks.openai.origin });
    expect(byId.anthropic).toMatchObject({ configured: false, origin: null, last4: null });
    expect(r.json.keychain).toMatchObject({ available: true });
    expect(r.text).not.toContain(gw.mocks.openai.key);
  });

  it('tests a key against the provider\'s models endpoint', async () => {
    const ok = await gw.raw('POST', '/admin/providers/openai/test', { headers: auth });
    expect(ok.json).toMatchObject({ provider: 'openai', ok: true, status: 200, models: 1 });
    const seen = gw.mocks.openai.requests.at(-1)!;
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/v1/models');
    expect(seen.headers.authorization).toBe(`Bearer ${gw.mocks.openai.key}`);
    const gem = await gw.raw('POST', '/admin/providers/google/test', { headers: auth });
    expect(gem.json).toMatchObject({ provider: 'gemini', ok: true, models: 2 });
    const none = await gw.raw('POST', '/admin/providers/anthropic/test', { headers: auth });
    expect(none.json).toMatchObject({ ok: false, status: null });
    expect(none.json.message).toMatch(/gateway providers set anthropic/);
    expect((await gw.raw('POST', '/admin/providers/mistral/test', { headers: auth })).status).toBe(404);
  });

  it('stores a pasted key in the keychain once, and the daemon uses it at once', async () => {
    const wrong = await gw.raw('PUT', '/admin/providers/anthropic/key', { headers: auth, body: { key: 'sk-ant-wrong-key-000000' } });
    expect(wrong.status).toBe(200);
    expect(wrong.json).toMatchObject({ stored: true, origin: 'keychain', last4: '0000' });
    expect(wrong.text).not.toContain('sk-ant-wrong');
    const rejected = await gw.raw('POST', '/admin/providers/anthropic/test', { headers: auth });
    expect(rejected.json).toMatchObject({ ok: false, status: 401 });
    expect(rejected.json.message).toMatch(/rejected the key/);
    const right = await gw.raw('PUT', '/admin/providers/anthropic/key', { headers: auth, body: { key: gw.mocks.anthropic.key } });
    expect(right.json.warnings.join(' ')).toMatch(/usually start with "sk-ant-"/);
    expect(gw.keychain.entries.get('anthropic')).toBe(gw.mocks.anthropic.key);
    expect((await gw.raw('POST', '/admin/providers/anthropic/test', { headers: auth })).json).toMatchObject({ ok: true, models: 1 });
    const list = await gw.raw('GET', '/admin/providers', { headers: auth });
    expect(list.json.providers.find((p: { provider: string }) => p.provider === 'anthropic')).toMatchObject({ configured: true, origin: 'keychain' });
    const bad = await gw.raw('PUT', '/admin/providers/openai/key', { headers: auth, body: { key: 'sk-proxy-abc' } });
    expect(bad.status).toBe(400);
    expect((await gw.raw('PUT', '/admin/providers/openai/key', { headers: auth, body: { key: 'two words' } })).status).toBe(400);
  });

  it('explains when there is no keychain to store into', async () => {
    const other = await startDashboardGateway({ keychainAvailable: false });
    try {
      const r = await other.raw('PUT', '/admin/providers/openai/key', { headers: { authorization: `Bearer ${other.daemon.adminToken}` }, body: { key: 'sk-abcdefghijklmnop' } });
      expect(r.status).toBe(409);
      expect(r.json.error.message).toMatch(/--insecure-storage/);
      const page = await other.raw('GET', '/dashboard/providers', { headers: { cookie: (await other.login()).cookie } });
      expect(page.text).toContain('No usable keychain');
    } finally {
      await other.close();
    }
  });
});

describe('/admin/usage', () => {
  it('summary, series, latency, requests and filters agree with each other', async () => {
    for (let i = 0; i < 3; i++) await chat(gw.key);
    const base = await gw.raw('GET', '/admin/usage/summary?since=1d&by=model', { headers: auth });
    expect(base.status).toBe(200);
    const row = base.json.rows.find((r: { group: string }) => r.group === 'openai/gpt-5.4');
    expect(row.requests).toBeGreaterThanOrEqual(3);
    expect(row.cost).toBeCloseTo((row.inputTokens * 2 + row.outputTokens * 10) / 1e6, 10);
    for (const by of ['key', 'provider', 'day']) {
      const s = await gw.raw('GET', `/admin/usage/summary?since=1d&by=${by}`, { headers: auth });
      expect(s.json.totals).toEqual(base.json.totals);
      expect(s.json.rows.reduce((n: number, r: { requests: number }) => n + r.requests, 0)).toBe(base.json.totals.requests);
    }
    const series = await gw.raw('GET', '/admin/usage/series?since=24h', { headers: auth });
    expect(series.json.bucket).toBe('hour');
    expect(series.json.points.reduce((n: number, p: { requests: number }) => n + p.requests, 0)).toBe(base.json.totals.requests);
    const lat = await gw.raw('GET', '/admin/usage/latency?since=1d', { headers: auth });
    expect(lat.json.providers.map((p: { provider: string }) => p.provider)).toContain('openai');
    const reqs = await gw.raw('GET', '/admin/usage/requests?limit=2&provider=openai&status=ok', { headers: auth });
    expect(reqs.json.rows).toHaveLength(2);
    expect(reqs.json.next).toMatch(/^\d+:\d+$/);
    const more = await gw.raw('GET', `/admin/usage/requests?limit=2&provider=openai&before=${reqs.json.next}`, { headers: auth });
    expect(more.json.rows[0].startedAt).toBeLessThanOrEqual(reqs.json.rows[1].startedAt);
    const filters = await gw.raw('GET', '/admin/usage/filters?since=1d', { headers: auth });
    expect(filters.json.models).toContain('gpt-5.4');
    const st = await gw.raw('GET', '/admin/usage/status', { headers: auth });
    expect(st.json).toMatchObject({ schemaVersion: SCHEMA_VERSION, latestSchemaVersion: SCHEMA_VERSION, prices: { overrides: 1 } });
    const prices = await gw.raw('GET', '/admin/prices', { headers: auth });
    expect(prices.json.models['openai/gpt-5.4']).toEqual({ input: 2, output: 10 });
    expect(prices.json.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('validates its parameters', async () => {
    expect((await gw.raw('GET', '/admin/usage/summary?since=soon', { headers: auth })).status).toBe(400);
    expect((await gw.raw('GET', '/admin/usage/summary?by=color', { headers: auth })).status).toBe(400);
    expect((await gw.raw('GET', '/admin/usage/requests?status=meh', { headers: auth })).status).toBe(400);
    expect((await gw.raw('GET', '/admin/usage/nothing', { headers: auth })).status).toBe(404);
    expect((await gw.raw('POST', '/admin/usage/summary', { headers: auth })).status).toBe(405);
  });

  it('streams requests live: started, then done with tokens and cost', async () => {
    const events: LiveEvent[] = []; // the recorder's live events, as JSON
    let snapshot = false;
    const req = request({ host: '127.0.0.1', port: gw.port, path: '/admin/usage/live', headers: { ...auth, host: gw.host } });
    const opened = new Promise<void>((resolve, reject) => {
      req.on('response', (res) => {
        expect(res.headers['content-type']).toContain('text/event-stream');
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i;
          while ((i = buf.indexOf('\n\n')) !== -1) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (frame.startsWith('event: snapshot')) { snapshot = true; resolve(); }
            const data = frame.split('\n').find((l) => l.startsWith('data: '));
            if (data && !frame.startsWith('event:')) events.push(JSON.parse(data.slice(6)) as LiveEvent);
          }
        });
      });
      req.on('error', reject);
    });
    req.end();
    await opened;
    expect(snapshot).toBe(true);
    await chat(gw.key);
    const deadline = Date.now() + 3000;
    while (!events.some((e) => e.type === 'done') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    req.destroy();
    const started = events.find((e) => e.type === 'started');
    expect(started?.request).toMatchObject({ keyName: 'test', model: 'gpt-5.4' });
    const done = events.find((e) => e.type === 'done');
    expect(done?.row).toMatchObject({ status: 200, inputTokens: 12 });
    expect(done?.row.cost).toBeGreaterThan(0);
  });
});

describe('pages', () => {
  it('render for a signed-in session', async () => {
    const { cookie } = await gw.login();
    for (const [p, marker] of [['usage', 'id="chart-requests"'], ['live', 'id="live-table"'], ['keys', 'id="keys-table"'], ['providers', 'data-provider="openai"']]) {
      const r = await gw.raw('GET', `/dashboard/${p}`, { headers: { cookie } });
      expect(r.status, p).toBe(200);
      expect(r.text).toContain(marker);
      expect(r.text).toContain(`aria-current="page">${p[0]!.toUpperCase()}${p.slice(1)}</a>`);
    }
    for (const range of ['24h', '7d', '30d', '90d', '1y']) {
      expect((await gw.raw('GET', `/dashboard/usage?range=${range}&status=error&provider=openai`, { headers: { cookie } })).status).toBe(200);
    }
    const root = await gw.raw('GET', '/dashboard', { headers: { cookie } });
    expect(root.status).toBe(303);
    expect(root.headers.location).toBe('/dashboard/usage');
    expect((await gw.raw('GET', '/dashboard/nope', { headers: { cookie } })).status).toBe(404);
    const css = await gw.raw('GET', '/dashboard/assets/app.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
    expect((await gw.raw('GET', '/dashboard/assets/app.css', { headers: { 'if-none-match': String(css.headers.etag) } })).status).toBe(304);
    expect((await gw.raw('GET', '/dashboard/assets/../../package.json')).status).toBeGreaterThanOrEqual(400);
  });
});
