// The dashboard's defences, since any web page the user visits can try to reach localhost:
// - Host must name loopback with the daemon's port (a DNS-rebinding page sends its own name), on a
//   daemon that listens on loopback; one that serves the network answers to the name it is reached
//   by (its TLS certificate names it, and a rebinding page's origin never holds its cookie);
// - an Origin header, when present, must be the daemon's own origin (cross-site and other-port pages are refused);
// - a one-time login token (minutes, single use), or an admin key typed into the sign-in page,
//   becomes an HttpOnly, SameSite=Strict session cookie (Secure over HTTPS);
// - writes made with the cookie need the session's CSRF token in `x-csrf-token`;
// - nothing here ever sets a CORS header, so other origins can never read an answer.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Cookies are shared by every port of a host, so the name carries the port: two daemons never clash. */
export const sessionCookieName = (port: number): string => `gateway_session_${port}`;
export const LOGIN_TOKEN_TTL_MS = 10 * 60_000;
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
const MAX_SESSIONS = 50;
const MAX_LOGIN_TOKENS = 20;

const digest = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The Host values a loopback browser sends for this daemon. */
export function allowedHosts(port: number): Set<string> {
  const names = ['localhost', '127.0.0.1', '[::1]'];
  const hosts = new Set(names.map((n) => `${n}:${port}`));
  if (port === 80) for (const n of names) hosts.add(n);
  return hosts;
}

/** The request's Host when it is one of ours (lower-cased), else undefined. */
export function checkHost(req: IncomingMessage, port: number): string | undefined {
  const host = req.headers.host?.trim().toLowerCase();
  return host && allowedHosts(port).has(host) ? host : undefined;
}

/** The request's Host (lower-cased) when it is a plain host[:port], for a daemon that serves the network. */
export function anyHost(req: IncomingMessage): string | undefined {
  const host = req.headers.host?.trim().toLowerCase();
  return host && /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/.test(host) ? host : undefined;
}

/** True when there is no Origin header or it is exactly `origin` (this daemon's, as the request reached it). */
export function sameOrigin(req: IncomingMessage, origin: string): boolean {
  const given = req.headers.origin;
  if (given === undefined) return true;
  return given.toLowerCase() === origin;
}

/** Sec-Fetch-Site, when the browser sends it, must say the request came from our own pages (or the user). */
export function fetchSiteAllowed(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

export interface Session {
  /** Hash of the cookie value (the value itself is never kept). */
  id: string;
  /** The admin key it was opened with; the session ends with that key (revoked, expired). Absent: a one-time link's. */
  keyId?: string;
  csrf: string;
  createdAt: number;
  lastSeen: number;
}

export class DashboardSessions {
  private loginTokens = new Map<string, number>(); // hash → expiry
  private sessions = new Map<string, Session>(); // hash of cookie value → session

  readonly cookieName: string;

  constructor(port: number, private readonly now: () => number = Date.now) {
    this.cookieName = sessionCookieName(port);
  }

  /** A fresh one-time login token, valid for LOGIN_TOKEN_TTL_MS. */
  issueLoginToken(): { token: string; expiresAt: number } {
    this.sweep();
    while (this.loginTokens.size >= MAX_LOGIN_TOKENS) this.loginTokens.delete(this.loginTokens.keys().next().value!);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + LOGIN_TOKEN_TTL_MS;
    this.loginTokens.set(digest(token), expiresAt);
    return { token, expiresAt };
  }

  /** Spends a login token: a new session and its cookie value, or undefined (unknown, used, expired). */
  redeem(token: string): { cookie: string; session: Session } | undefined {
    const h = digest(token);
    const expiry = this.loginTokens.get(h);
    this.loginTokens.delete(h);
    if (expiry === undefined || expiry < this.now()) return undefined;
    return this.open();
  }

  /** A new session and its cookie value; `keyId`: the admin key that signed in. */
  open(keyId?: string): { cookie: string; session: Session } {
    this.sweep();
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    const cookie = randomBytes(32).toString('base64url');
    const t = this.now();
    const session: Session = { id: digest(cookie), ...(keyId ? { keyId } : {}), csrf: randomBytes(24).toString('base64url'), createdAt: t, lastSeen: t };
    this.sessions.set(session.id, session);
    return { cookie, session };
  }

  /** The live session named by the request's cookie, touched; undefined otherwise. */
  fromRequest(req: IncomingMessage): Session | undefined {
    const value = parseCookies(req.headers.cookie).get(this.cookieName);
    if (!value) return undefined;
    const s = this.sessions.get(digest(value));
    if (!s) return undefined;
    const t = this.now();
    if (t - s.lastSeen > SESSION_IDLE_MS || t - s.createdAt > SESSION_MAX_MS) {
      this.sessions.delete(s.id);
      return undefined;
    }
    s.lastSeen = t;
    return s;
  }

  end(session: Session): void {
    this.sessions.delete(session.id);
  }

  /** `secure`: the browser reached us over HTTPS, so the cookie is never sent in clear text. */
  cookie(value: string, secure = false): string {
    return `${this.cookieName}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(SESSION_MAX_MS / 1000)}${secure ? '; Secure' : ''}`;
  }

  clearedCookie(secure = false): string {
    return `${this.cookieName}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure ? '; Secure' : ''}`;
  }

  private sweep(): void {
    const t = this.now();
    for (const [h, exp] of this.loginTokens) if (exp < t) this.loginTokens.delete(h);
    for (const [h, s] of this.sessions) if (t - s.lastSeen > SESSION_IDLE_MS || t - s.createdAt > SESSION_MAX_MS) this.sessions.delete(h);
  }
}

export function csrfMatches(req: IncomingMessage, session: Session): boolean {
  const given = req.headers['x-csrf-token'];
  if (typeof given !== 'string' || !given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}
