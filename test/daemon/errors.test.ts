// Every error the daemon raises itself: the right status, in the protocol shape of the endpoint.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
/** The daemon judges expiry by this clock: tests move it forward instead of sleeping. */
let clockSkewMs = 0;
beforeAll(async () => { gw = await startTestGateway({ settings: { bodyLimitBytes: 1024 * 1024, aliases: {} }, clock: () => Date.now() + clockSkewMs }); });
afterAll(async () => { await gw?.close(); });

const ENDPOINTS = {
  openai: { path: '/openai/v1/chat/completions', body: '{"model":"gpt-5.4","messages":[{"role":"user","content":"x"}]}' },
  anthropic: { path: '/anthropic/v1/messages', body: '{"model":"claude-opus-5","max_tokens":5,"messages":[{"role":"user","content":"x"}]}' },
  gemini: { path: '/gemini/v1beta/models/gemini-3.5-flash:generateContent', body: '{"contents":[{"parts":[{"text":"x"}]}]}' },
  unified: { path: '/v1/chat/completions', body: '{"model":"gpt-5.4","messages":[{"role":"user","content":"x"}]}' },
} as const;

type Ep = keyof typeof ENDPOINTS;

async function call(ep: Ep, headers: Record<string, string>, body?: string | Buffer, url = gw.url) {
  const r = await fetch(`${url}${ENDPOINTS[ep].path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body ?? ENDPOINTS[ep].body });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

/** Checks the body is the endpoint protocol's error shape and returns its message. */
function messageOf(ep: Ep, body: Record<string, any>, status: number): string {
  if (ep === 'anthropic') {
    expect(body.type).toBe('error');
    expect(typeof body.error.type).toBe('string');
    return body.error.message;
  }
  if (ep === 'gemini') {
    expect(body.error.code).toBe(status);
    expect(typeof body.error.status).toBe('string');
    return body.error.message;
  }
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return body.error.message;
}

describe.each(Object.keys(ENDPOINTS) as Ep[])('%s endpoint', (ep) => {
  it('401 without a key', async () => {
    const r = await call(ep, {});
    expect(r.status).toBe(401);
    expect(messageOf(ep, r.body, 401)).toMatch(/missing proxy key/);
  });
  it('401 with an unknown key, and with a provider key instead of a proxy key', async () => {
    const r = await call(ep, { authorization: 'Bearer sk-proxy-nope' });
    expect(r.status).toBe(401);
    expect(messageOf(ep, r.body, 401)).toMatch(/unknown proxy key/);
    const r2 = await call(ep, { authorization: 'Bearer sk-ant-real-looking' });
    expect(r2.status).toBe(401);
    expect(messageOf(ep, r2.body, 401)).toMatch(/not a proxy key/);
  });
  it('401 for revoked and expired keys, on the very next request', async () => {
    const { key, record } = gw.keys.create({ name: `rev-${ep}` });
    await gw.daemon.reload();
    expect((await call(ep, { authorization: `Bearer ${key}` })).status).toBe(200);
    gw.keys.revoke(record.id);
    await fetch(`${gw.url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
    const r = await call(ep, { authorization: `Bearer ${key}` });
    expect(r.status).toBe(401);
    expect(messageOf(ep, r.body, 401)).toMatch(/revoked/);
    const exp = gw.keys.create({ name: `exp-${ep}`, expiresAt: new Date(Date.now() + 60_000) });
    await gw.daemon.reload();
    expect((await call(ep, { authorization: `Bearer ${exp.key}` })).status).toBe(200);
    clockSkewMs = 61_000; // a minute later, by the daemon's clock
    try {
      const r2 = await call(ep, { authorization: `Bearer ${exp.key}` });
      expect(r2.status).toBe(401);
      expect(messageOf(ep, r2.body, 401)).toMatch(/expired/);
    } finally { clockSkewMs = 0; }
  });
  it('403 when the key may not use the model; the original bytes still go upstream when allowed', async () => {
    const denied = gw.keys.create({ name: `deny-${ep}`, models: ['some-other-model'] });
    const allowedModel = ep === 'anthropic' ? 'claude-opus-5' : ep === 'gemini' ? 'gemini-3.5-flash' : 'gpt-5.4';
    const allowed = gw.keys.create({ name: `allow-${ep}`, models: [allowedModel] });
    await gw.daemon.reload();
    const r = await call(ep, { authorization: `Bearer ${denied.key}` });
    expect(r.status).toBe(403);
    expect(messageOf(ep, r.body, 403)).toMatch(/may not use model/);
    const ok = await call(ep, { authorization: `Bearer ${allowed.key}` });
    expect(ok.status).toBe(200);
    if (ep !== 'unified') {
      const mock = gw.mocks[ep];
      expect(mock.requests.at(-1)!.body.toString()).toBe(ENDPOINTS[ep].body);
    }
  });
  it('413 when the body is over the limit, before anything goes upstream', async () => {
    const before = gw.mocks.openai.requests.length + gw.mocks.anthropic.requests.length + gw.mocks.gemini.requests.length;
    const r = await call(ep, { authorization: `Bearer ${gw.key}` }, Buffer.alloc(1024 * 1024 + 1, 'x'));
    expect(r.status).toBe(413);
    expect(messageOf(ep, r.body, 413)).toMatch(/limit of 1048576 bytes/);
    expect(gw.mocks.openai.requests.length + gw.mocks.anthropic.requests.length + gw.mocks.gemini.requests.length).toBe(before);
  });
});

describe('provider and upstream failures', () => {
  it('503 naming the command when the provider has no key', async () => {
    const g = await startTestGateway({ providerKeys: {} });
    try {
      const r = await fetch(`${g.url}/anthropic/v1/messages`, { method: 'POST', headers: { 'x-api-key': g.key }, body: '{}' });
      expect(r.status).toBe(503);
      const body = await r.json() as any;
      expect(body.type).toBe('error');
      expect(body.error.message).toContain('gateway providers set anthropic');
      const u = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.key}` }, body: ENDPOINTS.unified.body });
      expect(u.status).toBe(503);
      expect(((await u.json()) as any).error.message).toContain('gateway providers set openai');
    } finally { await g.close(); }
  });

  it('502 when the provider cannot be reached', async () => {
    const g = await startTestGateway({ origins: { gemini: 'http://127.0.0.1:9' } });
    try {
      const r = await fetch(`${g.url}/gemini/v1beta/models/gemini-3.5-flash:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': g.key }, body: '{}' });
      expect(r.status).toBe(502);
      const body = await r.json() as any;
      expect(body.error.status).toBe('UNAVAILABLE');
      expect(body.error.message).toMatch(/cannot reach Gemini/);
    } finally { await g.close(); }
  });

  it('504 when the provider does not answer in time', async () => {
    const silent = createServer(() => { /* never answers */ });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const origin = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const g = await startTestGateway({ origins: { openai: origin }, timeouts: { headersMs: 300 } });
    try {
      const r = await fetch(`${g.url}/openai/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.key}` }, body: '{}' });
      expect(r.status).toBe(504);
      expect(((await r.json()) as any).error.message).toMatch(/upstream timeout/);
    } finally { await g.close(); silent.closeAllConnections(); silent.close(); }
  });

  it('404 in OpenAI shape for unknown routes; /healthz needs no key', async () => {
    const r = await fetch(`${gw.url}/v2/nothing`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).error.code).toBe('not_found');
    const h = await fetch(`${gw.url}/healthz`);
    expect(h.status).toBe(200);
    expect(await h.json()).toEqual({ status: 'ok' });
  });

  it('admin routes need the admin token, not a proxy key', async () => {
    const r = await fetch(`${gw.url}/admin/status`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(r.status).toBe(401);
    const ok = await fetch(`${gw.url}/admin/status`, { headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
    const s = await ok.json() as any;
    expect(s.requestsServed).toBeGreaterThan(0);
  });

  it('a revocation written to keys.json applies without a reload call (file watcher)', async () => {
    const { key, record } = gw.keys.create({ name: 'watched' });
    await gw.daemon.reload();
    expect((await call('openai', { authorization: `Bearer ${key}` })).status).toBe(200);
    gw.keys.revoke(record.id);
    let status = 200;
    const deadline = Date.now() + 2000;
    while (status !== 401 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 25));
      status = (await call('openai', { authorization: `Bearer ${key}` })).status;
    }
    expect(status).toBe(401);
  });
});
