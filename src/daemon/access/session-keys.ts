// Short-lived proxy keys for `gateway chat` and `gateway run` (admin token only), so they need no
// keychain: the CLI asks for one, renews its lease while it runs and ends it when it exits; a CLI
// that is killed stops renewing, and its key expires by itself within one lease.
//
// They live in the daemon's key store like any key (marked `session`: keys.json, or the team's shared
// store), so they survive a daemon restart, show in `keys list` and can be revoked there, and the
// per-request check of revocation and expiry stays the one in auth.ts. Their plaintext is only ever
// in the answer to their creation.
//
//   POST   /admin/session-keys {purpose: "chat"|"run"}  → 201 {id, name, key, expiresAt, leaseMs}
//   POST   /admin/session-keys/{id}/renew                → 200 {id, expiresAt}; 404 once ended or revoked
//   DELETE /admin/session-keys/{id}                      → 200 {ended: boolean}
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { readBody } from '../http/http-util.js';
import { KeyStoreUnavailable } from '../store/key-records.js';

export const SESSION_KEYS_PATH = '/admin/session-keys';
/** How long a session key lives without a renewal (the default); the CLI renews every third of it. */
export const SESSION_LEASE_MS = 10 * 60_000;
const PURPOSES = ['chat', 'run'] as const;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

async function purposeOf(req: IncomingMessage): Promise<string> {
  const text = (await readBody(req, 4096)).toString('utf8');
  let body: unknown;
  try { body = text ? JSON.parse(text) : {}; } catch { throw new GatewayError('invalid_request', 'the body must be JSON: {"purpose": "chat" | "run"}'); }
  const purpose = (body as { purpose?: unknown } | null)?.purpose;
  if (typeof purpose !== 'string' || !(PURPOSES as readonly string[]).includes(purpose)) {
    throw new GatewayError('invalid_request', `"purpose" must be one of: ${PURPOSES.join(', ')}`, 'purpose');
  }
  return purpose;
}

/** Handles `rest`, the path after /admin/session-keys; the caller has checked the admin token. */
export async function handleSessionKeys(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, rest: string, leaseMs = SESSION_LEASE_MS, now = Date.now()): Promise<void> {
  try {
    await sessionKeyRoute(ctx, req, res, rest, leaseMs, now);
  } catch (e) {
    if (e instanceof KeyStoreUnavailable) throw new GatewayError('store_unavailable', `cannot change session keys now: ${e.message}`);
    throw e;
  }
}

async function sessionKeyRoute(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, rest: string, leaseMs: number, now: number): Promise<void> {
  const store = ctx.keys.store;
  const [, id, action, ...extra] = rest.split('/'); // '' | '/{id}' | '/{id}/renew'
  const expect = (method: string) => {
    if (req.method !== method) throw new GatewayError('method_not_allowed', `use ${method} for ${SESSION_KEYS_PATH}${rest}`);
  };
  if (id === undefined) {
    expect('POST');
    const { key, record } = await store.createSession(await purposeOf(req), leaseMs, new Date(now));
    await ctx.keys.reload();
    return json(res, 201, { id: record.id, name: record.name, key, expiresAt: record.expiresAt, leaseMs });
  }
  if (!/^[0-9a-f]{1,16}$/.test(id) || extra.length > 0 || (action !== undefined && action !== 'renew')) {
    throw new GatewayError('not_found', `no admin route ${req.method} ${SESSION_KEYS_PATH}${rest}`);
  }
  if (action === 'renew') {
    expect('POST');
    const record = await store.renewSession(id, new Date(now + leaseMs));
    if (!record) throw new GatewayError('not_found', `no session key "${id}" (it ended or was revoked)`);
    await ctx.keys.reloadKey(id);
    return json(res, 200, { id, expiresAt: record.expiresAt });
  }
  expect('DELETE');
  const ended = await store.removeSession(id);
  if (ended) await ctx.keys.reloadKey(id);
  json(res, 200, { ended });
}
