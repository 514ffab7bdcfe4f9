// The dashboard and its JSON admin API, mounted into the daemon (`startDaemon({ mounts })`).
// Owns /dashboard* and /admin/{keys,providers,usage,prices,dashboard}*; the daemon's own
// /admin/{status,reload,events,shutdown} fall through to admin.ts. Every request here passes the
// Host and Origin checks first; /admin/* then needs the admin token, or the session cookie plus,
// for writes, the CSRF token; pages need the session cookie.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAdminRequest } from '../admin/admin.js';
import type { Mount, RunningDaemon } from '../server.js';
import type { GatewaySecretSource } from '../store/secret-source.js';
import type { UsageRecorder } from '../observe/usage/recorder.js';
import { dashboardAssets } from './assets.js';
import { ApiError, readJsonBody, sendApiError, sendAsset, sendHtml, sendJson, sendText } from './http.js';
import { createKey, listKeys, revokeKey, setKeyLimits, type KeyDeps } from './keys-api.js';
import { providerParam, listProviders, storeProviderKey, testProvider, type ProviderDeps } from './providers-api.js';
import { checkHost, csrfMatches, DashboardSessions, fetchSiteAllowed, sameOrigin, type Session } from './security.js';
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
  return `http://${h}:${d.port}`;
}

type Auth = { kind: 'admin' } | { kind: 'session'; session: Session };

export function createDashboard(opts: DashboardOptions): Dashboard {
  const log = opts.log ?? (() => {});
  const now = opts.now ?? Date.now;
  let sessions: DashboardSessions | undefined;
  const sess = (): DashboardSessions => (sessions ??= new DashboardSessions(opts.daemon().port, now));

  const keyDeps: KeyDeps = {
    dir: opts.dir,
    reloadKeys: () => opts.daemon().ctx.keys.reload(),
    lastUsed: (id) => opts.recorder()?.lastUsed(id),
    standing: (k) => opts.daemon().ctx.limits.standing(k),
  };
  const providerDeps: ProviderDeps = { dir: opts.dir, secrets: opts.secrets, ctx: () => opts.daemon().ctx, reload: () => opts.daemon().reload() };
  const pageDeps: PageDeps = { ...keyDeps, providers: providerDeps, daemon: opts.daemon, recorder: opts.recorder, now };

  function authenticate(req: IncomingMessage, path: string): Auth {
    const d = opts.daemon();
    if (req.headers.authorization !== undefined) {
      if (isAdminRequest(req, d.adminToken)) return { kind: 'admin' };
      throw new ApiError(401, 'invalid_admin_token', 'the admin token is not valid (it changes on every daemon start)');
    }
    const session = sess().fromRequest(req);
    if (!session) throw new ApiError(401, 'unauthorized', 'sign in: run `gateway dashboard`, or send the admin token as a Bearer token');
    if (!fetchSiteAllowed(req)) throw new ApiError(403, 'cross_site', 'cross-site requests are refused');
    const write = req.method !== 'GET' && req.method !== 'HEAD';
    if (write && !csrfMatches(req, session)) throw new ApiError(403, 'csrf_failed', `missing or wrong x-csrf-token for ${req.method} ${path}`);
    return { kind: 'session', session };
  }

  async function api(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams): Promise<void> {
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
          if (auth.kind !== 'admin') throw new ApiError(403, 'admin_token_required', 'sign-in links are issued to the admin token only');
          return sendJson(res, 201, dashboard.loginUrl());
        }
        if (id === 'logout' && parts.length === 2) {
          expect('POST');
          if (auth.kind === 'session') sess().end(auth.session);
          res.writeHead(204, { 'set-cookie': sess().clearedCookie(), 'cache-control': 'no-store' }).end();
          return;
        }
        break;
      default:
        break;
    }
    throw new ApiError(404, 'not_found', `no admin route ${m} ${path}`);
  }

  async function pageRoute(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams, host: string): Promise<void> {
    if (path.startsWith('/dashboard/assets/')) {
      const asset = dashboardAssets().get(path.slice('/dashboard/assets/'.length));
      if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) return sendText(res, 404, 'not found');
      return sendAsset(req, res, asset.body, asset.type, asset.etag);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', 'dashboard pages are read with GET; changes go through /admin/…');
    if (path === '/dashboard/login') {
      const redeemed = sess().redeem(q.get('token') ?? '');
      if (!redeemed) return sendHtml(res, 401, signInPage('expired'));
      return sendHtml(res, 200, signedInHop('/dashboard/usage'), { 'set-cookie': sess().cookie(redeemed.cookie) });
    }
    if (path === '/dashboard/signed-out') return sendHtml(res, 200, signInPage('signed-out'));
    const session = sess().fromRequest(req);
    if (!session) return sendHtml(res, 401, signInPage('none'));
    if (path === '/dashboard' || path === '/dashboard/') { res.writeHead(303, { location: '/dashboard/usage', 'cache-control': 'no-store' }).end(); return; }
    const html = await renderPage(pageDeps, path.slice('/dashboard/'.length), q, session, `http://${host}`);
    if (html === undefined) return sendText(res, 404, `no dashboard page ${path}`);
    sendHtml(res, 200, html);
  }

  const mount: Mount = async (req, res, path, query) => {
    if (!owns(path)) return false;
    const isApi = path.startsWith('/admin/');
    try {
      const host = checkHost(req, opts.daemon().port);
      if (!host) throw new ApiError(403, 'host_not_allowed', 'the dashboard and admin API answer only to Host localhost, 127.0.0.1 or [::1] with the daemon\'s port');
      if (!sameOrigin(req, host)) throw new ApiError(403, 'cross_origin', 'requests from other origins are refused');
      if (isApi) await api(req, res, path, new URLSearchParams(query));
      else await pageRoute(req, res, path, new URLSearchParams(query), host);
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
