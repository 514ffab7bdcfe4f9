// The dashboard's defences against web pages that try to reach localhost: Host (DNS rebinding),
// Origin and Sec-Fetch-Site (cross-site and other-port pages), the session cookie, CSRF on writes,
// one-time login links, no CORS, and a key list that never carries a key or its hash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/daemon/store/keys.js';
import { startDashboardGateway, type DashboardGateway, type Reply } from './harness.js';

let gw: DashboardGateway;
let session: { cookie: string; csrf: string };
let admin: Record<string, string>;
beforeAll(async () => {
  gw = await startDashboardGateway();
  session = await gw.login();
  admin = { authorization: `Bearer ${gw.daemon.adminToken}` };
});
afterAll(async () => { await gw?.close(); });

const noCors = (r: Reply) => expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);

describe('Host header (DNS rebinding)', () => {
  const foreign = () => ['evil.example', `evil.example:${gw.port}`, `localhost.evil.example:${gw.port}`, `127.0.0.1:${gw.port + 1}`, '127.0.0.1', `10.0.0.5:${gw.port}`];

  it('refuses a foreign Host on pages, the API, assets and the login link, whatever the credentials', async () => {
    for (const host of foreign()) {
      for (const [path, headers] of [
        ['/admin/keys', admin], ['/admin/keys', { cookie: session.cookie }], ['/dashboard/usage', { cookie: session.cookie }],
        ['/dashboard/assets/app.js', {}], ['/dashboard/login?token=x', {}], ['/admin/usage/summary', admin],
      ] as const) {
        const r = await gw.raw('GET', path, { headers: { ...headers, host } });
        expect(r.status, `${host} ${path}`).toBe(403);
        expect(r.text).not.toContain('"keys"');
        noCors(r);
      }
    }
  });

  it('accepts localhost, 127.0.0.1 and [::1] with the daemon port', async () => {
    for (const host of [`localhost:${gw.port}`, `127.0.0.1:${gw.port}`, `[::1]:${gw.port}`, `LOCALHOST:${gw.port}`]) {
      expect((await gw.raw('GET', '/admin/keys', { headers: { ...admin, host } })).status, host).toBe(200);
    }
  });
});

describe('session cookie and admin token', () => {
  it('refuses the API and the pages without a cookie or token', async () => {
    const api = await gw.raw('GET', '/admin/keys');
    expect(api.status).toBe(401);
    expect(api.json.error.code).toBe('unauthorized');
    const page = await gw.raw('GET', '/dashboard/keys');
    expect(page.status).toBe(401);
    expect(page.text).toContain('gateway dashboard');
    expect(page.text).not.toContain('data-key-id');
    expect((await gw.raw('GET', '/admin/usage/summary')).status).toBe(401);
    expect((await gw.raw('GET', '/admin/usage/live')).status).toBe(401);
    expect((await gw.raw('GET', '/admin/keys', { headers: { cookie: `${session.cookie.split('=')[0]}=forged` } })).status).toBe(401);
  });

  it('a wrong admin token is refused even next to a valid cookie', async () => {
    const r = await gw.raw('GET', '/admin/keys', { headers: { authorization: 'Bearer nope', cookie: session.cookie } });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('invalid_admin_token');
  });

  it('the cookie is HttpOnly, SameSite=Strict, and named for this port', async () => {
    const link = new URL(gw.dashboard.loginUrl().url);
    expect(link.origin).toBe(`http://127.0.0.1:${gw.port}`);
    const r = await gw.raw('GET', `${link.pathname}${link.search}`);
    expect(r.status).toBe(200);
    const c = String(r.headers['set-cookie']?.[0]);
    expect(c).toMatch(new RegExp(`^gateway_session_${gw.port}=[A-Za-z0-9_-]{43};`));
    expect(c).toContain('HttpOnly');
    expect(c).toContain('SameSite=Strict');
    expect(c).toContain('Path=/');
    expect(r.text).toContain('http-equiv="refresh"'); // same-origin hop, so the Strict cookie is sent on arrival
  });
});

describe('one-time login links', () => {
  it('work exactly once', async () => {
    const link = new URL(gw.dashboard.loginUrl().url);
    const first = await gw.raw('GET', `${link.pathname}${link.search}`);
    expect(first.status).toBe(200);
    expect(first.headers['set-cookie']).toBeDefined();
    const second = await gw.raw('GET', `${link.pathname}${link.search}`);
    expect(second.status).toBe(401);
    expect(second.headers['set-cookie']).toBeUndefined();
    expect(second.text).toContain('expired');
    expect((await gw.raw('GET', '/dashboard/login?token=made-up')).status).toBe(401);
    expect((await gw.raw('GET', '/dashboard/login')).status).toBe(401);
  });

  it('are issued to the admin token only', async () => {
    const byCookie = await gw.raw('POST', '/admin/dashboard/login', { headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
    expect(byCookie.status).toBe(403);
    const byToken = await gw.raw('POST', '/admin/dashboard/login', { headers: admin });
    expect(byToken.status).toBe(201);
    expect(byToken.json.url).toMatch(/\/dashboard\/login\?token=/);
    expect(Date.parse(byToken.json.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
  });
});

describe('CSRF and cross-site requests', () => {
  const body = { name: 'csrf-probe' };

  it('a write with the cookie but no CSRF token (or a wrong one) is refused', async () => {
    const none = await gw.raw('POST', '/admin/keys', { headers: { cookie: session.cookie }, body });
    expect(none.status).toBe(403);
    expect(none.json.error.code).toBe('csrf_failed');
    const wrong = await gw.raw('POST', '/admin/keys', { headers: { cookie: session.cookie, 'x-csrf-token': 'x'.repeat(session.csrf.length) }, body });
    expect(wrong.status).toBe(403);
    const revoke = await gw.raw('POST', '/admin/keys/whatever/revoke', { headers: { cookie: session.cookie } });
    expect(revoke.status).toBe(403);
    expect((await gw.raw('PUT', '/admin/providers/openai/key', { headers: { cookie: session.cookie }, body: { key: 'sk-x' } })).status).toBe(403);
    expect(gw.keychain.entries.size).toBe(0);
  });

  it('a cross-site or other-port Origin is refused, even with cookie and CSRF token', async () => {
    for (const origin of ['http://evil.example', `http://127.0.0.1:${gw.port + 1}`, `https://127.0.0.1:${gw.port}`, 'null']) {
      const r = await gw.raw('POST', '/admin/keys', { headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, origin }, body });
      expect(r.status, origin).toBe(403);
      expect(r.json.error.code).toBe('cross_origin');
      noCors(r);
      expect((await gw.raw('GET', '/admin/keys', { headers: { cookie: session.cookie, origin } })).status).toBe(403);
      expect((await gw.raw('GET', '/admin/keys', { headers: { ...admin, origin } })).status).toBe(403);
    }
  });

  it('Sec-Fetch-Site other than same-origin is refused for cookie requests', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const r = await gw.raw('GET', '/admin/keys', { headers: { cookie: session.cookie, 'sec-fetch-site': site } });
      expect(r.status, site).toBe(403);
    }
    expect((await gw.raw('GET', '/admin/keys', { headers: { cookie: session.cookie, 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
  });

  it('a same-origin write with the CSRF token succeeds; the admin token needs none', async () => {
    const r = await gw.raw('POST', '/admin/keys', { headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, origin: `http://${gw.host}` }, body });
    expect(r.status).toBe(201);
    const t = await gw.raw('POST', `/admin/keys/${r.json.record.id}/revoke`, { headers: admin });
    expect(t.status).toBe(200);
  });

  it('never sends CORS headers, preflight included', async () => {
    const pre = await gw.raw('OPTIONS', '/admin/keys', { headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
    expect(pre.status).toBeGreaterThanOrEqual(400);
    noCors(pre);
    noCors(await gw.raw('OPTIONS', '/admin/keys', { headers: admin }));
    noCors(await gw.raw('GET', '/admin/keys', { headers: admin }));
    noCors(await gw.raw('GET', '/dashboard/usage', { headers: { cookie: session.cookie } }));
  });
});

describe('pages', () => {
  it('carry a strict CSP and refuse framing', async () => {
    const r = await gw.raw('GET', '/dashboard/usage', { headers: { cookie: session.cookie } });
    expect(r.status).toBe(200);
    expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    expect(r.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['cache-control']).toBe('no-store');
    const scripts = r.text.match(/<script[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/src="\/dashboard\/assets\/app\.js"|type="application\/json"/); // no inline code
  });

  it('escape whatever a client put in a model name', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    await fetch(`${gw.url}/openai/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: evil, messages: [{ role: 'user', content: 'hi' }] }),
    });
    for (const p of ['usage', 'live']) {
      const r = await gw.raw('GET', `/dashboard/${p}`, { headers: { cookie: session.cookie } });
      expect(r.text, p).not.toContain(evil);
    }
    const usage = await gw.raw('GET', '/dashboard/usage', { headers: { cookie: session.cookie } });
    expect(usage.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const live = await gw.raw('GET', '/dashboard/live', { headers: { cookie: session.cookie } });
    expect(live.text).toContain('\\u003cimg');
  });
});

describe('the key list', () => {
  it('never includes a key or its hash, in JSON or HTML', async () => {
    const created = await gw.raw('POST', '/admin/keys', { headers: admin, body: { name: 'secret-holder' } });
    expect(created.status).toBe(201);
    const key: string = created.json.key;
    expect(key).toMatch(/^sk-proxy-/);
    const hash = hashKey(key);
    const testHash = hashKey(gw.key);
    const list = await gw.raw('GET', '/admin/keys', { headers: admin });
    const page = await gw.raw('GET', '/dashboard/keys', { headers: { cookie: session.cookie } });
    for (const text of [list.text, page.text, JSON.stringify(created.json.record)]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(gw.key);
      expect(text).not.toContain(hash);
      expect(text).not.toContain(testHash);
      expect(text).not.toMatch(/sk-proxy-[A-Za-z0-9_-]{8}/);
      expect(text).not.toMatch(/[0-9a-f]{64}/);
    }
    for (const k of list.json.keys) expect(Object.keys(k).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'limits', 'models', 'name', 'revokedAt', 'standing', 'status']);
  });
});

describe('sign out', () => {
  it('ends the session', async () => {
    const s = await gw.login();
    expect((await gw.raw('GET', '/admin/keys', { headers: { cookie: s.cookie } })).status).toBe(200);
    const out = await gw.raw('POST', '/admin/dashboard/logout', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie']?.[0])).toContain('Max-Age=0');
    expect((await gw.raw('GET', '/admin/keys', { headers: { cookie: s.cookie } })).status).toBe(401);
    expect((await gw.raw('GET', '/dashboard/usage', { headers: { cookie: s.cookie } })).status).toBe(401);
  });
});
