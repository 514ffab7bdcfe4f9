// Who may use /admin/* (the CLI's routes and the dashboard's API): an admin key (`sk-gwadmin-…`,
// from anywhere the daemon is reachable), or the local admin token, written 0600 in the state
// directory at start, only from this machine (http/peer.ts): it never works over the network.
// A proxy key is never an admin credential, as an admin key is never a door's key (auth.ts).
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { KeyIndex } from './auth.js';
import { peerOf } from '../http/peer.js';
import { ADMIN_KEY_PREFIX, PROXY_KEY_PREFIX } from '../store/keys.js';

export type AdminCaller = { kind: 'token' } | { kind: 'key'; id: string; name: string };

const CREATE_HINT = 'create one on the gateway\'s machine: gateway keys create --admin --name <name>';

function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  return h && /^bearer\s+/i.test(h) ? h.replace(/^bearer\s+/i, '').trim() : undefined;
}

function isToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The admin caller a request's `Authorization: Bearer …` names, or why it is refused (one line). */
export function adminCaller(req: IncomingMessage, token: string, keys: KeyIndex): AdminCaller | { refused: string } {
  return adminCredential(bearer(req), peerOf(req).local, token, keys);
}

/** The same for a credential given another way (the sign-in page's form); `local`: the request came from this machine. */
export function adminCredential(given: string | undefined, local: boolean, token: string, keys: KeyIndex): AdminCaller | { refused: string } {
  if (!given) {
    return { refused: local ? 'admin routes need the daemon admin token or an admin key (Authorization: Bearer sk-gwadmin-…)' : `admin routes need an admin key (Authorization: Bearer sk-gwadmin-…); ${CREATE_HINT}` };
  }
  if (given.startsWith(ADMIN_KEY_PREFIX)) {
    const c = keys.checkAdmin(given);
    if ('record' in c && !('refused' in c)) return { kind: 'key', id: c.record.id, name: c.record.name };
    const name = c.record ? ` "${c.record.name}"` : '';
    return { refused: c.refused === 'unknown' ? 'unknown admin key (see: gateway keys list)' : c.refused === 'revoked' ? `admin key${name} has been revoked` : `admin key${name} has expired` };
  }
  if (given.startsWith(PROXY_KEY_PREFIX)) return { refused: `a proxy key is not an admin key: admin routes take an admin key (sk-gwadmin-…); ${CREATE_HINT}` };
  if (isToken(given, token)) {
    return local ? { kind: 'token' } : { refused: `the local admin token is accepted only on the gateway's own machine; over the network use an admin key; ${CREATE_HINT}` };
  }
  return { refused: 'neither the daemon admin token (it changes on every daemon start) nor an admin key' };
}
