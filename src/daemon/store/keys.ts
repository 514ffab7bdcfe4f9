// Proxy keys (`sk-proxy-…`) and admin keys (`sk-gwadmin-…`): created once, stored only as a SHA-256
// hash beside a short, non-secret id, so they can be listed and revoked without ever being shown
// again. The two never stand in for each other: a proxy key opens the doors, an admin key /admin/*
// (and the dashboard) from anywhere the daemon is reachable.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { FILES } from './paths.js';
import { readJsonSync, writePrivateFileSync } from './atomic.js';
import { applyLimitsPatch, readStoredLimits, type KeyLimits, type LimitsPatch } from '../limits/limits.js';

export const PROXY_KEY_PREFIX = 'sk-proxy-';
export const ADMIN_KEY_PREFIX = 'sk-gwadmin-';

export interface KeyRecord {
  id: string;
  name: string;
  hash: string; // hex SHA-256 of the whole key
  createdAt: string; // ISO
  expiresAt: string | null;
  models: string[] | null; // null: every model
  revokedAt: string | null;
  /** A short-lived key the daemon gave `chat` or `run` (POST /admin/session-keys); absent otherwise. */
  session?: true;
  /** Budget, rate and concurrency limits (limits/limits.ts); absent: none. */
  limits?: KeyLimits;
  /** An admin key (`sk-gwadmin-…`): it opens /admin/* and the dashboard, never a door; absent otherwise. */
  admin?: true;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export const ADMIN_KEY_HAS_NO_LIMITS = 'an admin key has no models or limits: it never serves a door (give those to a proxy key)';

/** A record as read from keys.json: limits a hand edit broke are dropped field by field, never half-applied. */
export function withValidLimits(k: KeyRecord): KeyRecord {
  if (k?.limits === undefined) return k;
  const limits = readStoredLimits(k.limits);
  if (limits) return { ...k, limits };
  const { limits: _dropped, ...rest } = k;
  return rest;
}

interface KeyFile { version: 1; keys: KeyRecord[] }

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Equality of two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function keyStatus(rec: KeyRecord, now = Date.now()): KeyStatus {
  if (rec.revokedAt) return 'revoked';
  if (rec.expiresAt && Date.parse(rec.expiresAt) <= now) return 'expired';
  return 'active';
}

/** `30d`, `12h`, `45m`, `2w`, or an ISO date → absolute expiry. */
export function parseExpiry(text: string, now = Date.now()): Date {
  const m = /^(\d+)\s*([mhdw])$/i.exec(text.trim());
  if (m) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2]!.toLowerCase() as 'm' | 'h' | 'd' | 'w'];
    const n = Number(m[1]);
    if (n <= 0) throw new Error(`--expires must be positive, got "${text}"`);
    return new Date(now + n * unit);
  }
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new Error(`--expires takes a duration like 30d, 12h, 45m, 2w or an ISO date, got "${text}"`);
  if (t <= now) throw new Error(`--expires ${text} is in the past`);
  return new Date(t);
}

/** Shows a key without revealing it: the prefix and its last four characters. */
export function maskKey(key: string): string {
  const prefix = [PROXY_KEY_PREFIX, ADMIN_KEY_PREFIX].find((p) => key.startsWith(p));
  return prefix ? `${prefix}…${key.slice(-4)}` : `…${key.slice(-4)}`;
}

/** A proxy key as `keys create` makes it. */
export interface ProxyKeyOptions { name?: string; expiresAt?: Date | null; models?: string[] | null; limits?: KeyLimits }
/** An admin key: a name and an expiry, no models or limits (it is never a door's key). */
export interface AdminKeyOptions { name?: string; expiresAt?: Date | null }
/** A key just made: its plaintext (shown once, never stored) and its record. */
export interface CreatedKey { key: string; record: KeyRecord }

export function adminKeyOptions(opts: AdminKeyOptions): NewKeyOptions {
  return { ...opts, admin: true, namePrefix: 'admin-' };
}

/** What a new key is made of; `namePrefix` starts the generated name when none is given. */
export interface NewKeyOptions {
  name?: string; expiresAt?: Date | null; models?: string[] | null; limits?: KeyLimits; session?: boolean; admin?: boolean; namePrefix?: string;
}

/**
 * A new key and its record (nothing stored yet): 256 random bits after its prefix, an 8-hex id, and
 * the name given or `<namePrefix><id>`, checked. Every key store makes its keys here.
 */
export function mintKey(opts: NewKeyOptions, now: Date): CreatedKey {
  const id = randomBytes(4).toString('hex');
  const name = opts.name ?? `${opts.namePrefix ?? 'key-'}${id}`;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw new Error(`key name "${name}" must be 1-64 letters, digits, '.', '_' or '-'`);
  const key = (opts.admin ? ADMIN_KEY_PREFIX : PROXY_KEY_PREFIX) + randomBytes(32).toString('base64url'); // 256 bits
  const record: KeyRecord = {
    id, name, hash: hashKey(key), createdAt: now.toISOString(),
    expiresAt: opts.expiresAt ? opts.expiresAt.toISOString() : null,
    models: opts.models && opts.models.length > 0 ? opts.models : null,
    revokedAt: null,
    ...(opts.session ? { session: true as const } : {}),
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.admin ? { admin: true as const } : {}),
  };
  return { key, record };
}

/** Throws when one of `keys` is an active key named `name` (a name is reused only once its key is gone). */
export function assertNameFree(keys: readonly KeyRecord[], name: string): void {
  if (keys.some((k) => k.name === name && keyStatus(k) === 'active')) throw new Error(`an active key named "${name}" already exists; revoke it or pick another --name`);
}

/** One key by id or name: the id first, then an active key of that name, then any of that name. */
export function findKey(keys: readonly KeyRecord[], idOrName: string): KeyRecord | undefined {
  return keys.find((k) => k.id === idOrName)
    ?? keys.find((k) => k.name === idOrName && keyStatus(k) === 'active')
    ?? keys.find((k) => k.name === idOrName);
}

export function noSuchKey(idOrName: string): Error {
  return new Error(`no key with id or name "${idOrName}" (see: gateway keys list)`);
}

/** `rec` with a limits patch applied (a value sets, null removes, absent keeps); an admin key takes none. */
export function withLimitsPatch(rec: KeyRecord, patch: LimitsPatch): KeyRecord {
  if (rec.admin) throw new Error(ADMIN_KEY_HAS_NO_LIMITS);
  const limits = applyLimitsPatch(rec.limits, patch);
  const updated: KeyRecord = { ...rec };
  if (limits) updated.limits = limits;
  else delete updated.limits;
  return updated;
}

/** A session key `<purpose>.<id>` that expires `leaseMs` from `now` unless renewed. */
export function sessionKeyOptions(purpose: string, leaseMs: number, now: Date): NewKeyOptions {
  return { namePrefix: `${purpose}.`, expiresAt: new Date(now.getTime() + leaseMs), session: true };
}

/** A session key whose holder is long gone: revoked, or expired over a lease ago. It is dropped when the next one is made. */
export function staleSession(k: KeyRecord, leaseMs: number, now: Date): boolean {
  return k.session === true && (k.revokedAt !== null || (k.expiresAt !== null && Date.parse(k.expiresAt) <= now.getTime() - leaseMs));
}

export class KeyStore {
  readonly path: string;
  constructor(dir: string) { this.path = join(dir, FILES.keys); }

  list(): KeyRecord[] {
    const file = readJsonSync<KeyFile>(this.path, { version: 1, keys: [] });
    return Array.isArray(file.keys) ? file.keys.map(withValidLimits) : [];
  }

  private save(keys: KeyRecord[]): void {
    writePrivateFileSync(this.path, JSON.stringify({ version: 1, keys } satisfies KeyFile, null, 2) + '\n');
  }

  create(opts: ProxyKeyOptions = {}, now = new Date()): CreatedKey {
    return this.add(this.list(), opts, now);
  }

  /** An admin key: a name and an expiry, no models or limits (it is never a door's key). */
  createAdmin(opts: AdminKeyOptions = {}, now = new Date()): CreatedKey {
    return this.add(this.list(), adminKeyOptions(opts), now);
  }

  /** Changes a key's limits (a value sets, null removes, absent keeps); returns the record as saved. */
  setLimits(idOrName: string, patch: LimitsPatch): KeyRecord {
    const target = this.find(idOrName);
    if (!target) throw noSuchKey(idOrName);
    const updated = withLimitsPatch(target, patch);
    this.save(this.list().map((k) => (k.id === target.id ? updated : k)));
    return updated;
  }

  private add(keys: KeyRecord[], opts: NewKeyOptions, now: Date): CreatedKey {
    const created = mintKey(opts, now);
    assertNameFree(keys, created.record.name);
    this.save([...keys, created.record]);
    return created;
  }

  /**
   * A session key named `<purpose>.<id>` that expires `leaseMs` from now unless renewed. Session
   * keys whose holder is long gone (revoked, or expired over a lease ago) are dropped meanwhile.
   */
  createSession(purpose: string, leaseMs: number, now = new Date()): CreatedKey {
    return this.add(this.list().filter((k) => !staleSession(k, leaseMs, now)), sessionKeyOptions(purpose, leaseMs, now), now);
  }

  /** Moves a session key's expiry to `until` (also when it has just expired); undefined when it is gone or revoked. */
  renewSession(id: string, until: Date): KeyRecord | undefined {
    const keys = this.list();
    const target = keys.find((k) => k.id === id && k.session === true && !k.revokedAt);
    if (!target) return undefined;
    const renewed = { ...target, expiresAt: until.toISOString() };
    this.save(keys.map((k) => (k === target ? renewed : k)));
    return renewed;
  }

  /** Deletes a session key's record (ordinary keys are only ever revoked). True when there was one. */
  removeSession(id: string): boolean {
    const keys = this.list();
    const rest = keys.filter((k) => !(k.id === id && k.session === true));
    if (rest.length === keys.length) return false;
    this.save(rest);
    return true;
  }

  /** Finds one key by id or name (an active one wins when a name was reused). */
  find(idOrName: string): KeyRecord | undefined {
    return findKey(this.list(), idOrName);
  }

  revoke(idOrName: string, now = new Date()): KeyRecord {
    const target = this.find(idOrName);
    if (!target) throw noSuchKey(idOrName);
    if (target.revokedAt) return target;
    const keys = this.list().map((k) => (k.id === target.id ? { ...k, revokedAt: now.toISOString() } : k));
    this.save(keys);
    return { ...target, revokedAt: now.toISOString() };
  }
}
