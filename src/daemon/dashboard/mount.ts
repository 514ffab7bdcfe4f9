// The dashboard and its JSON admin API, mounted into the daemon (`startDaemon({ mounts })`).
// Owns /dashboard* and /admin/{keys,providers,usage,prices,dashboard}*; the daemon's own
// /admin/{status,reload,events,shutdown} fall through to admin.ts. Every request here passes the
// Host and Origin checks first; /admin/* then needs an admin credential (the local admin token from
// this machine, or an admin key: access/admin-auth.ts), or the session cookie plus, for writes, the
// CSRF token; pages need the session cookie, which a one-time link or an admin key signs in for.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { adminCaller, adminCredential } from '../access/admin-auth.js';
import { peerOf } from '../http/peer.js';
import type { Mount, RunningDaemon } from '../server.js';
import type { GatewaySecretSource } from '../store/secret-source.js';
import type { UsageRecorder } from '../observe/usage/recorder.js';
import { dashboardAssets } from './assets.js';
import { ApiError, readFormBody, readJsonBody, sendApiError, sendAsset, sendHtml, sendJson, sendText } from './http.js';
import { createKey, listKeys, revokeKey, setKeyLimits, type KeyDeps } from './keys-api.js';
import { providerParam, listProviders, storeProviderKey, testProvider, type ProviderDeps } from './providers-api.js';
import { anyHost, checkHost, csrfMatches, DashboardSessions, fetchSiteAllowed, sameOrigin, type Session } from './security.js';
import { signedInHop, signInPage } from './page-signin.js';
import { handleUsageApi, pricesView, requestBody, requireRecorder } from './usage-api.js';
import { renderPage, type PageDeps } from './pages.js';

export interface DashboardOptions {
  dir: string;
  daemon: () => RunningDaemon;
  recorder: () => UsageRecorder | undefined;
  secrets: GatewaySecretSource;
  log?: (line: string) => void;
  now?: () => number;
}

export interface Dashboard {
  mount: Mount;
  /** A one-time sign-in link for `gateway dashboard`. */
  loginUrl(): { url: string; expiresAt: string };
}

const ADMIN_PREFIXES = ['/admin/keys', '/admin/providers', '/admin/usage', '/admin/prices', '/admin/dashboard'];

function owns(path: string): boolean {
  return path === '/dashboard' || path.startsWith('/dashboard/') || ADMIN_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

function loopbackOrigin(d: RunningDaemon): string {
  const h = d.host === '::1' || d.host === '[::1]' ? '[::1]' : d.host === 'localhost' ? 'localhost' : '127.0.0.1';
  return `${d.exposure.tls ? 'https' : 'http'}://${h}:${d.port}`;
}

/** The origin the browser reached us by: its Host (checked), over HTTPS when the request came that way. */
interface Site { host: string; origin: string; secure: boolean }

/**
 * The sign-in page: its form posts the admin key back to us, and a browser sends that POST's true
 * Origin (which the Origin check wants; `null` is refused) only under a referrer policy that allows
 * one to ourselves (its <meta name="referrer"> says the same); every other response keeps no-referrer.
 */
function sendSignIn(res: ServerResponse, status: number, page: string): void {
  sendHtml(res, status, page, { 'referrer-policy': 'same-origin' });
}

type Auth = { kind: 'admin' } | { kind: 'session'; session: Session };

export function createDashboard(opts: DashboardOptions): Dashboard {
  const log = opts.log ?? (() => {});
  const now = opts.now ?? Date.now;
  let sessions: DashboardSessions | undefined;
  const sess = (): DashboardSessions => (sessions ??= new DashboardSessions(opts.daemon().port, now));

  const keyDeps: KeyDeps = {
    dir: opts.dir,
    store: () => opts.daemon().ctx.keys.store,
    loaded: () => opts.daemon().ctx.keys.loaded(),
    reloadKeys: () => opts.daemon().ctx.keys.reload(),
    lastUsed: (id) => opts.recorder()?.lastUsed(id),
    standing: (k) => opts.daemon().ctx.limits.standing(k),
  };
  const providerDeps: ProviderDeps = { dir: opts.dir, secrets: opts.secrets, ctx: () => opts.daemon().ctx, reload: () => opts.daemon().reload() };
  const pageDeps: PageDeps = { ...keyDeps, providers: providerDeps, daemon: opts.daemon, recorder: opts.recorder, now };

  /** The session the request's cookie names, while it lasts and the admin key that opened it is active. */
  function liveSession(req: IncomingMessage): Session | undefined {
    const session = sess().fromRequest(req);
    if (session?.keyId !== undefined && !opts.daemon().ctx.keys.adminKeyActive(session.keyId)) {
      sess().end(session);
      return undefined;
    }
    return session;
  }

  function authenticate(req: IncomingMessage, path: string): Auth {
    const d = opts.daemon();
    if (req.headers.authorization !== undefined) {
      const caller = adminCaller(req, d.adminToken, d.ctx.keys);
      if ('refused' in caller) throw new ApiError(401, 'invalid_admin_token', caller.refused);
      return { kind: 'admin' };
    }
    const session = liveSession(req);
    if (!session) throw new ApiError(401, 'unauthorized', 'sign in: with an admin key on the sign-in page, or `gateway dashboard` on the gateway\'s machine; or send an admin key as a Bearer token');
    if (!fetchSiteAllowed(req)) throw new ApiError(403, 'cross_site', 'cross-site requests are refused');
    const write = req.method !== 'GET' && req.method !== 'HEAD';
    if (write && !csrfMatches(req, session)) throw new ApiError(403, 'csrf_failed', `missing or wrong x-csrf-token for ${req.method} ${path}`);
    return { kind: 'session', session };
  }

  /** The Host check: loopback names for a daemon on loopback, the name it is reached by for one that serves the network. */
  function siteOf(req: IncomingMessage): Site {
    const d = opts.daemon();
    const host = d.exposure.loopback ? checkHost(req, d.port) : anyHost(req);
    if (!host) {
      throw new ApiError(403, 'host_not_allowed', d.exposure.loopback
        ? 'the dashboard and admin API answer only to Host localhost, 127.0.0.1 or [::1] with the daemon\'s port'
        : 'the request has no usable Host header');
    }
    const secure = peerOf(req).secure;
    return { host, origin: `${secure ? 'https' : 'http'}://${host}`, secure };
  }

  async function api(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams, site: Site): Promise<void> {
    const auth = authenticate(req, path);
    const m = req.method ?? 'GET';
    const parts = path.split('/').slice(2); // ['keys', id, 'revoke']
    const [area, id, action] = parts;
    const expect = (method: string | string[]) => {
      const ok = Array.isArray(method) ? method.includes(m) : m === method;
      if (!ok) throw new ApiError(405, 'method_not_allowed', `use ${[method].flat().join(' or ')} for ${path}`);
    };
    switch (area) {
      case 'keys':
        if (id === undefined) {
          if (m === 'GET') return sendJson(res, 200, { keys: await listKeys(keyDeps, now()) });
          expect('POST');
          return sendJson(res, 201, await createKey(keyDeps, await readJsonBody(req), now()));
        }
        if (parts.length === 2) { expect('PATCH'); return sendJson(res, 200, { key: await setKeyLimits(keyDeps, decodeURIComponent(id), await readJsonBody(req), now()) }); }
        if (action === 'revoke' && parts.length === 3) { expect('POST'); return sendJson(res, 200, { key: await revokeKey(keyDeps, decodeURIComponent(id), now()) }); }
        break;
      case 'providers':
        if (id === undefined) { expect('GET'); return sendJson(res, 200, await listProviders(providerDeps)); }
        if (action === 'key' && parts.length === 3) {
          expect(['PUT', 'POST']);
          return sendJson(res, 200, await storeProviderKey(providerDeps, providerParam(id), await readJsonBody(req)));
        }
        if (action === 'test' && parts.length === 3) { expect('POST'); return sendJson(res, 200, await testProvider(opts.daemon().ctx, providerParam(id))); }
        break;
      case 'usage':
        if (id === 'requests' && action !== undefined && parts.length === 4 && parts[3] === 'body') {
          expect('GET');
          return sendJson(res, 200, requestBody(requireRecorder(opts.recorder()), decodeURIComponent(action)));
        }
        if (id !== undefined && parts.length === 2 && (await handleUsageApi(req, res, id, q, opts.recorder()))) return;
        break;
      case 'prices':
        if (parts.length === 1) { expect('GET'); return sendJson(res, 200, pricesView(requireRecorder(opts.recorder()))); }
        break;
      case 'dashboard':
        if (id === 'login' && parts.length === 2) {
          expect('POST');
          if (auth.kind !== 'admin') throw new ApiError(403, 'admin_token_required', 'sign-in links are issued to the admin token or an admin key only');
          return sendJson(res, 201, dashboard.loginUrl());
        }
        if (id === 'logout' && parts.length === 2) {
          expect('POST');
          if (auth.kind === 'session') sess().end(auth.session);
          res.writeHead(204, { 'set-cookie': sess().clearedCookie(site.secure), 'cache-control': 'no-store' }).end();
          return;
        }
        break;
      default:
        break;
    }
    throw new ApiError(404, 'not_found', `no admin route ${m} ${path}`);
  }

  /** POST /dashboard/login from the sign-in page's form: an admin key (or, from this machine, the admin token) opens a session. */
  async function signInWithKey(req: IncomingMessage, res: ServerResponse, site: Site): Promise<void> {
    if (!fetchSiteAllowed(req)) throw new ApiError(403, 'cross_site', 'cross-site requests are refused');
    const given = (await readFormBody(req)).get('key')?.trim() ?? '';
    const d = opts.daemon();
    // Judged exactly as a Bearer credential of the admin API is, so the form opens nothing more.
    const caller = adminCredential(given || undefined, peerOf(req).local, d.adminToken, d.ctx.keys);
    if ('refused' in caller) {
      log(`dashboard: sign-in refused from ${peerOf(req).client}: ${caller.refused}`);
      return sendSignIn(res, 401, signInPage('bad-key', caller.refused));
    }
    const opened = sess().open(caller.kind === 'key' ? caller.id : undefined);
    return sendHtml(res, 200, signedInHop('/dashboard/usage'), { 'set-cookie': sess().cookie(opened.cookie, site.secure) });
  }

  async function pageRoute(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams, site: Site): Promise<void> {
    if (path.startsWith('/dashboard/assets/')) {
      const asset = dashboardAssets().get(path.slice('/dashboard/assets/'.length));
      if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) return sendText(res, 404, 'not found');
      return sendAsset(req, res, asset.body, asset.type, asset.etag);
    }
    if (path === '/dashboard/login' && req.method === 'POST') return signInWithKey(req, res, site);
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', 'dashboard pages are read with GET; changes go through /admin/…');
    if (path === '/dashboard/login') {
      const redeemed = sess().redeem(q.get('token') ?? '');
      if (!redeemed) return sendSignIn(res, 401, signInPage('expired'));
      return sendHtml(res, 200, signedInHop('/dashboard/usage'), { 'set-cookie': sess().cookie(redeemed.cookie, site.secure) });
    }
    if (path === '/dashboard/signed-out') return sendSignIn(res, 200, signInPage('signed-out'));
    const session = liveSession(req);
    if (!session) return sendSignIn(res, 401, signInPage('none'));
    if (path === '/dashboard' || path === '/dashboard/') { res.writeHead(303, { location: '/dashboard/usage', 'cache-control': 'no-store' }).end(); return; }
    const html = await renderPage(pageDeps, path.slice('/dashboard/'.length), q, session, site.origin);
    if (html === undefined) return sendText(res, 404, `no dashboard page ${path}`);
    sendHtml(res, 200, html);
  }

  const mount: Mount = async (req, res, path, query) => {
    if (!owns(path)) return false;
    const isApi = path.startsWith('/admin/');
    try {
      const site = siteOf(req);
      if (!sameOrigin(req, site.origin)) throw new ApiError(403, 'cross_origin', 'requests from other origins are refused');
      if (isApi) await api(req, res, path, new URLSearchParams(query), site);
      else await pageRoute(req, res, path, new URLSearchParams(query), site);
    } catch (e) {
      if (res.headersSent) { res.destroy(); return true; }
      const err = e instanceof ApiError ? e : new ApiError(500, 'internal_error', 'internal gateway error');
      if (!(e instanceof ApiError)) log(`dashboard: error on ${req.method} ${path}: ${(e as Error)?.stack ?? String(e)}`);
      if (!req.complete) req.resume();
      if (isApi) sendApiError(res, err);
      else sendText(res, err.status, `${err.status} ${err.message}`);
    }
    return true;
  };

  const dashboard: Dashboard = {
    mount,
    loginUrl() {
      const { token, expiresAt } = sess().issueLoginToken();
      return { url: `${loopbackOrigin(opts.daemon())}/dashboard/login?token=${token}`, expiresAt: new Date(expiresAt).toISOString() };
    },
  };
  return dashboard;
}
