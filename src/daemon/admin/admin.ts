// The daemon's own admin API for the CLI (status, reload, events, shutdown, session keys). Every
// route requires an admin credential (access/admin-auth.ts: the local admin token from this
// machine, or an admin key); no CORS headers are ever sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import type { GatewayEvent } from '../observe/events.js';
import { handleSessionKeys, SESSION_KEYS_PATH } from '../access/session-keys.js';
import { sseData } from '../http/sse.js';
import { DEFAULT_ROUTING } from '../routing/settings.js';
import { adminCaller } from '../access/admin-auth.js';
import type { StoreStatusView } from '../store/store-health.js';

export interface AdminHooks {
  adminToken: string;
  version: string;
  url: () => string;
  reload: () => Promise<void>;
  onShutdown: () => void;
  sessionLeaseMs: number;
}

/** Team mode: the shared store, whether it answers, and what the limits still have to write back to it. */
export async function storeStatus(ctx: DaemonContext): Promise<StoreStatusView | undefined> {
  const s = ctx.shared;
  if (!s) return undefined;
  const h = s.status();
  const limits = await ctx.limits.report()?.catch(() => undefined);
  return {
    display: s.display, daemonId: s.daemonId, connected: h.connected,
    downSince: h.downSince === undefined ? null : new Date(h.downSince).toISOString(), lastError: h.lastError ?? null,
    daemons: s.daemonsAlive(), unreconciled: limits?.unreconciled ?? 0,
  };
}

/** Throws the 401 of a request without an admin credential. */
function requireAdmin(ctx: DaemonContext, hooks: AdminHooks, req: IncomingMessage): void {
  const caller = adminCaller(req, hooks.adminToken, ctx.keys);
  if ('refused' in caller) throw new GatewayError('invalid_api_key', caller.refused);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
}

export async function handleAdmin(ctx: DaemonContext, hooks: AdminHooks, req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  if (path === SESSION_KEYS_PATH || path.startsWith(`${SESSION_KEYS_PATH}/`)) {
    requireAdmin(ctx, hooks, req);
    await handleSessionKeys(ctx, req, res, path.slice(SESSION_KEYS_PATH.length), hooks.sessionLeaseMs);
    return true;
  }
  const routes: Record<string, string> = {
    '/admin/status': 'GET', '/admin/reload': 'POST', '/admin/events': 'GET', '/admin/shutdown': 'POST',
  };
  const method = routes[path];
  if (!method) return false;
  requireAdmin(ctx, hooks, req);
  if (req.method !== method) throw new GatewayError('method_not_allowed', `use ${method} for ${path}`);
  switch (path) {
    case '/admin/status': {
      const routing = ctx.settings.routing ?? DEFAULT_ROUTING;
      const store = await storeStatus(ctx);
      json(res, 200, {
        pid: process.pid, url: hooks.url(), version: hooks.version,
        startedAt: new Date(ctx.stats.startedAt).toISOString(), uptimeMs: Date.now() - ctx.stats.startedAt,
        requestsServed: ctx.stats.requestsServed, inFlight: ctx.stats.inFlight,
        providerKeys: ctx.providerKeys.origins(),
        // What the daemon routes by now: after a bad hand edit, still the last good routing.
        routing: { retries: routing.retries, routes: routing.routes },
        // Targets the circuit breaker rests now (`provider/model`, or a provider it cannot reach), and until when.
        breakers: ctx.breaker.open().map((b) => ({ target: b.key, until: new Date(b.until).toISOString() })),
        // Each held key's label, masked form and state (ok, resting until, refused): never a key.
        keyPools: ctx.providerKeys.allStates(),
        // Team mode: the shared store (never its password) and whether it answers; "degraded" while it does not.
        ...(store ? { store } : {}),
      });
      return true;
    }
    case '/admin/reload':
      await hooks.reload();
      json(res, 200, { reloaded: true, keys: ctx.keys.size });
      return true;
    case '/admin/shutdown':
      json(res, 202, { stopping: true, inFlight: ctx.stats.inFlight });
      res.on('finish', () => hooks.onShutdown());
      return true;
    case '/admin/events': {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(': connected\n\n');
      // Team mode: the store's health now and on every change, as a `store` event (the monitor's header).
      const sendStore = () => { void storeStatus(ctx).then((st) => { if (st && !res.writableEnded) res.write(`event: store\ndata: ${JSON.stringify(st)}\n\n`); }); };
      sendStore();
      const offHealth = ctx.shared?.onHealth(sendStore);
      // Queue the events and serialise them on a timer, off the request path: a slow subscriber
      // only grows its own (bounded) queue.
      let queue: GatewayEvent[] = [];
      let dropped = 0;
      const unsubscribe = ctx.bus.subscribe((ev) => {
        if (queue.length >= 10_000) { dropped++; return; }
        queue.push(ev);
      });
      const timer = setInterval(() => {
        if (queue.length === 0 && dropped === 0) return;
        if (res.writableNeedDrain) return;
        let out = '';
        for (const ev of queue) out += sseData(ev);
        queue = [];
        if (dropped > 0) { res.write(`: dropped ${dropped} events\n\n`); dropped = 0; }
        res.write(out);
      }, 50);
      const keepAlive = setInterval(() => res.write(': ping\n\n'), 15_000);
      res.on('close', () => { clearInterval(timer); clearInterval(keepAlive); unsubscribe(); offHealth?.(); });
      return true;
    }
    default:
      return false;
  }
}
