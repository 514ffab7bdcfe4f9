// usage.logBodies against a real daemon and the mock providers: off by default (nothing stored,
// native bodies still stream); on, the request and the response the client received are stored,
// capped, with every credential redacted, outside the event stream, readable through the admin
// API and the dashboard, and pruned with the raw-request retention.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactCredentials, REDACTED } from '../../src/daemon/observe/body-log.js';
import type { DaemonContext } from '../../src/daemon/context.js';
import type { GatewayEvent } from '../../src/daemon/observe/events.js';
import { storeBodies, type UsageHistory, type UsageRecorder } from '../../src/daemon/observe/usage/index.js';
import { parseUsageSettings, USAGE_DEFAULTS } from '../../src/daemon/observe/usage/settings.js';
import { startDashboardGateway, type DashboardGateway } from '../dashboard/harness.js';
import type { MockHandler } from '../helpers/mock-provider.js';
import { startGatewayProcess } from './gateway-process.js';

const CAP = 4096;
const DAY_MS = 86_400_000;
/** Appears in every body we send and every answer the mock gives, never in an event. */
const MARKER = 'zebra-marker-7f3a';

/** A body sent in two pieces with no Content-Length (chunked), the way a streaming client sends it. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const half = Math.floor(bytes.length / 2);
  return new ReadableStream({ start(c) { c.enqueue(bytes.slice(0, half)); c.enqueue(bytes.slice(half)); c.close(); } });
}

async function nativeStream(gw: DashboardGateway, body: string): Promise<string> {
  const res = await fetch(`${gw.url}/openai/v1/chat/completions`, {
    method: 'POST', body: chunked(body), duplex: 'half',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
  } as RequestInit);
  expect(res.status).toBe(200);
  return res.text();
}

async function unified(gw: DashboardGateway, body: unknown): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
  });
}

const bodyCount = (rec: UsageRecorder): number => {
  rec.flush();
  return Number((rec.store.db.prepare('SELECT COUNT(*) AS n FROM bodies').get() as { n: number }).n);
};

interface Row { requestId: string; mode: string; stream: boolean; provider: string; requestBytes: number }
async function recentRows(gw: DashboardGateway): Promise<Row[]> {
  const r = await gw.raw('GET', '/admin/usage/requests?limit=20', { headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
  expect(r.status).toBe(200);
  return r.json.rows as Row[];
}

describe('redactCredentials', () => {
  it('replaces proxy keys, the given keys and credential-named JSON fields, even one cut off at the end', () => {
    const text = `{"apiKey":"a1","api_key": "b\\"2","x-api-key":"c3","Authorization":"Bearer d4","other":"sk-proxy-Abc_12-x and real-key-123456789","API-KEY":"e5`;
    const out = redactCredentials(text, ['real-key-123456789', 'short']);
    expect(out).toBe(`{"apiKey":"${REDACTED}","api_key": "${REDACTED}","x-api-key":"${REDACTED}","Authorization":"${REDACTED}","other":"${REDACTED} and ${REDACTED}","API-KEY":"${REDACTED}"`);
    expect(redactCredentials('send sk-proxy-… keys; short words stay', ['short'])).toBe('send sk-proxy-… keys; short words stay');
  });
});

describe('settings', () => {
  it('logBodies is off and bodies are capped at 64 KiB by default; a bad cap falls back with a warning', () => {
    expect(parseUsageSettings(undefined).settings).toMatchObject({ logBodies: false, bodyCapBytes: 65_536 });
    const on = parseUsageSettings({ logBodies: true, bodyCapBytes: 2048 });
    expect(on.settings).toMatchObject({ logBodies: true, bodyCapBytes: 2048 });
    expect(on.warnings).toEqual([]);
    const bad = parseUsageSettings({ bodyCapBytes: 12.5 });
    expect(bad.settings.bodyCapBytes).toBe(65_536);
    expect(bad.warnings.join()).toMatch(/bodyCapBytes must be a whole number/);
  });

  it('when on, the daemon says loudly at start that bodies are stored, and where', () => {
    const lines: string[] = [];
    const ctx = { providerKeys: { values: () => [] } } as unknown as DaemonContext;
    const history = { settings: { ...USAGE_DEFAULTS, logBodies: true, prices: {} }, store: { path: '/state/usage.db' } } as unknown as UsageHistory;
    storeBodies(history, {} as UsageRecorder, ctx, (l) => lines.push(l));
    expect(ctx.bodyLog).toBeDefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/WARNING: logBodies is on: request and response bodies .* are being stored in \/state\/usage\.db/);
    const off = { providerKeys: { values: () => [] } } as unknown as DaemonContext;
    storeBodies({ ...history, settings: { ...history.settings, logBodies: false } }, {} as UsageRecorder, off, (l) => lines.push(l));
    expect(off.bodyLog).toBeUndefined();
    expect(lines).toHaveLength(1);
  });
});

describe('logBodies off (the default)', () => {
  let gw: DashboardGateway;
  beforeAll(async () => { gw = await startDashboardGateway(); });
  afterAll(async () => { await gw?.close(); });

  it('stores no body, streams native bodies without reading them whole, and has no body route or link', async () => {
    expect(gw.daemon.ctx.bodyLog).toBeUndefined();
    const sent = JSON.stringify({ model: 'gpt-5.4', stream: true, messages: [{ role: 'user', content: MARKER }] });
    await nativeStream(gw, sent);
    expect((await unified(gw, { model: 'openai/gpt-5.4', messages: [{ role: 'user', content: MARKER }] })).status).toBe(200);
    expect(gw.mocks.openai.requests.at(-2)!.body.toString()).toBe(sent);
    expect(bodyCount(gw.recorder)).toBe(0);
    const rows = await recentRows(gw);
    expect(rows).toHaveLength(2);
    // A chunked native body is streamed upstream as it arrives, so its size is not known up front.
    expect(rows.find((r) => r.mode === 'native')!.requestBytes).toBe(0);
    const route = await gw.raw('GET', `/admin/usage/requests/${rows[0]!.requestId}/body`, { headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
    expect(route.status).toBe(404);
    const { cookie } = await gw.login();
    const page = await gw.raw('GET', '/dashboard/usage', { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('requests-table');
    expect(page.text).not.toContain('data-body');
  });
});

describe('logBodies on', () => {
  let gw: DashboardGateway;
  let auth: Record<string, string>;
  const events: GatewayEvent[] = [];
  beforeAll(async () => {
    gw = await startDashboardGateway({ usageConfig: { logBodies: true, bodyCapBytes: CAP } });
    auth = { authorization: `Bearer ${gw.daemon.adminToken}` };
    gw.daemon.ctx.bus.subscribe((ev) => events.push(ev));
    // The mock echoes the provider key it was given, as a careless provider error might.
    const echo: MockHandler = (r) => {
      const body = JSON.parse(r.body.toString('utf8')) as { model: string; stream?: boolean };
      const presented = String(r.headers.authorization ?? '').replace(/^Bearer /, '');
      if (body.stream) {
        const chunk = (i: number) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: `${MARKER} ${i} ${'w'.repeat(150)}` }, finish_reason: null }], echo: presented })}\n\n`;
        return { headers: { 'content-type': 'text/event-stream' }, chunks: [...Array.from({ length: 30 }, (_, i) => chunk(i)), 'data: [DONE]\n\n'] };
      }
      return {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: `${MARKER}: upstream saw ${presented}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
      };
    };
    gw.mocks.openai.setHandler(echo);
  });
  afterAll(async () => { await gw?.close(); });

  const secretsIn = (text: string): string[] => [gw.key, gw.mocks.openai.key, gw.mocks.gemini.key, 'sk-proxy-', 'real-openai', 'field-secret'].filter((s) => text.includes(s));

  it('stores capped, redacted bodies of unified and native requests; native bytes reach the provider unchanged', async () => {
    // Unified, larger than the cap, with the proxy key pasted into the prompt on purpose.
    const big = `${MARKER} my key is ${gw.key} ${'y'.repeat(6000)}`;
    const u = await unified(gw, { model: 'openai/gpt-5.4', messages: [{ role: 'user', content: big }] });
    expect(u.status).toBe(200);
    expect(await u.text()).toContain(`upstream saw ${gw.mocks.openai.key}`); // the client still gets what the provider said
    // Native, streamed both ways, chunked, with the proxy key and a credential field in the body.
    const sent = JSON.stringify({ model: 'gpt-5.4', stream: true, api_key: 'field-secret-123', messages: [{ role: 'user', content: `${MARKER} ${gw.key}` }] });
    const streamed = await nativeStream(gw, sent);
    expect(gw.mocks.openai.requests.at(-1)!.body.equals(Buffer.from(sent))).toBe(true);
    expect(streamed).toContain(gw.mocks.openai.key);
    // Unified stream (translated from Gemini): the SSE text the client received.
    const s = await unified(gw, { model: 'gemini/gemini-3.5-flash', stream: true, messages: [{ role: 'user', content: MARKER }] });
    const sseText = await s.text();
    expect(sseText).toContain('[DONE]');

    const rows = await recentRows(gw);
    expect(rows).toHaveLength(3);
    const get = async (row: Row) => {
      const r = await gw.raw('GET', `/admin/usage/requests/${row.requestId}/body`, { headers: auth });
      expect(r.status).toBe(200);
      expect(r.headers['cache-control']).toBe('no-store');
      return r.json as { requestId: string; startedAt: string; request: string | null; response: string | null };
    };
    const nativeRow = rows.find((r) => r.mode === 'native')!;
    expect(nativeRow.requestBytes).toBe(Buffer.byteLength(sent)); // read whole, since bodies are logged

    const ub = await get(rows.find((r) => r.mode === 'unified' && !r.stream)!);
    expect(Math.abs(Date.parse(ub.startedAt) - Date.now())).toBeLessThan(60_000);
    expect(ub.request).toContain(`my key is ${REDACTED}`);
    expect(ub.request!.length).toBeLessThan(CAP + 200);
    expect(ub.request).toMatch(/\[gateway: cut at 4096 bytes \(usage\.bodyCapBytes\); the body was \d+ bytes, \d+ more than the cap\]$/);
    expect(ub.response).toBe(JSON.stringify(JSON.parse(ub.response!))); // whole: under the cap
    expect(ub.response).toContain(`upstream saw ${REDACTED}`);

    const nb = await get(nativeRow);
    expect(nb.request).toBe(sent.replace('field-secret-123', REDACTED).replace(gw.key, REDACTED));
    expect(nb.response).toMatch(/^data: \{/);
    expect(nb.response).toContain(`"echo":"${REDACTED}"`);
    expect(nb.response).toMatch(/cut at 4096 bytes \(usage\.bodyCapBytes\); the body was \d+ bytes/);
    expect(Buffer.byteLength(nb.response!)).toBeLessThan(CAP + 200);

    const sb = await get(rows.find((r) => r.mode === 'unified' && r.stream)!);
    expect(sb.response).toBe(sseText); // small: stored whole

    for (const b of [ub, nb, sb]) expect(secretsIn(`${b.request}${b.response}`)).toEqual([]);
    const stored = gw.recorder.store.db.prepare('SELECT request, response FROM bodies').all() as Array<{ request: string; response: string }>;
    expect(stored).toHaveLength(3);
    for (const b of stored) expect(secretsIn(`${b.request}${b.response}`)).toEqual([]);
  });

  it('never puts a body on the event stream', () => {
    expect(events.filter((e) => e.type === 'finished' || e.type === 'failed')).toHaveLength(3);
    expect(JSON.stringify(events)).not.toContain(MARKER);
  });

  it('the dashboard links the bodies; the route answers the session and 404s the unknown', async () => {
    const [row] = await recentRows(gw);
    const { cookie } = await gw.login();
    const page = await gw.raw('GET', '/dashboard/usage', { headers: { cookie } });
    expect(page.text).toContain(`data-body="/admin/usage/requests/${row!.requestId}/body"`);
    expect(page.text.match(/<details class="body-peek"/g)).toHaveLength(3);
    const viaSession = await gw.raw('GET', `/admin/usage/requests/${row!.requestId}/body`, { headers: { cookie } });
    expect(viaSession.status).toBe(200);
    expect((await gw.raw('GET', `/admin/usage/requests/${row!.requestId}/body`)).status).toBe(401);
    expect((await gw.raw('POST', `/admin/usage/requests/${row!.requestId}/body`, { headers: auth })).status).toBe(405);
    const none = await gw.raw('GET', '/admin/usage/requests/req_nope/body', { headers: auth });
    expect(none.status).toBe(404);
    expect(none.json.error.code).toBe('not_found');
  });

  it('bodies are pruned with the raw requests', async () => {
    const [row] = await recentRows(gw);
    const db = gw.recorder.store.db;
    for (const table of ['requests', 'bodies']) db.prepare(`UPDATE ${table} SET started_at = started_at - ?`).run(40 * DAY_MS);
    gw.recorder.prune();
    expect(bodyCount(gw.recorder)).toBe(0);
    expect((await gw.raw('GET', `/admin/usage/requests/${row!.requestId}/body`, { headers: auth })).status).toBe(404);
  });
});

describe('gateway start with usage.logBodies in config.json', () => {
  it('logs loudly where bodies go, and stores them', async () => {
    const gw = await startGatewayProcess({}, { usage: { logBodies: true } });
    try {
      const key = (await gw.cli(['keys', 'create', '--name', 'bodies'])).stdout.trim();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: `${MARKER} ${key}` }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      const log = readFileSync(join(gw.dir, 'daemon.log'), 'utf8');
      expect(log).toContain(`WARNING: logBodies is on: request and response bodies (up to 65536 bytes each, credentials redacted) are being stored in ${join(gw.dir, 'usage.db')}`);
      expect(log).not.toMatch(/not supported/);
      const auth = { authorization: `Bearer ${gw.adminToken()}` };
      const rows = (await (await fetch(`${gw.url}/admin/usage/requests`, { headers: auth })).json()) as { rows: Row[] };
      const body = await fetch(`${gw.url}/admin/usage/requests/${rows.rows[0]!.requestId}/body`, { headers: auth });
      expect(body.status).toBe(200);
      const stored = (await body.json()) as { request: string; response: string };
      expect(stored.request).toContain(`${MARKER} ${REDACTED}`);
      expect(stored.response).toContain('mock provider');
      expect(`${stored.request}${stored.response}`).not.toContain(key);
    } finally {
      await gw.close();
    }
  });
});
