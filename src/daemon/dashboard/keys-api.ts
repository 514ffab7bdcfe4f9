// Proxy keys for the dashboard and `/admin/keys`: the daemon's key store (keys.json, or the team's
// shared store, which tells every other daemon), then an immediate reload of this daemon's key index
// so a new key works, a revoked one fails and new limits hold, at once. A key's secret leaves this
// module exactly once, in the answer to its creation.
import { join } from 'node:path';
import { LimitInputError, type KeyLimits, type LimitsPatch } from '../limits/limits.js';
import { isEmptyPatch, LIMIT_FIELDS, limitsPatchOf, patchedLimits } from '../limits/limits-input.js';
import { standingView, type StandingView } from '../limits/standing-view.js';
import type { Standing } from '../limits/store.js';
import { readJsonSync } from '../store/atomic.js';
import { ADMIN_KEY_HAS_NO_LIMITS, keyStatus, parseExpiry, type KeyRecord, type KeyStatus } from '../store/keys.js';
import { KeyStoreUnavailable, type KeyRecords } from '../store/key-records.js';
import { FILES } from '../store/paths.js';
import { ApiError } from './http.js';

export interface KeyView {
  id: string;
  name: string;
  status: KeyStatus;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  models: string[] | null;
  /** Budget, rate and concurrency limits; null: none. */
  limits: KeyLimits | null;
  /** What the key used and has left of each limit, as the daemon counts it now; null without limits (or when it cannot tell). */
  standing: StandingView | null;
  /** An admin key (`sk-gwadmin-…`): it opens the admin API and the dashboard, never a door. */
  admin?: true;
  /** A short-lived key of `gateway chat` or `gateway run`. */
  session?: true;
}

export interface KeyDeps {
  /** The state directory (this daemon's last-used times). */
  dir: string;
  /** The daemon's key store. */
  store: () => KeyRecords;
  /** The keys the daemon serves, as it last read them: listed while the store cannot be reached. */
  loaded?: () => KeyRecord[];
  /** Makes the running daemon see the key store as it is now. */
  reloadKeys: () => Promise<void>;
  /** Last use seen by this daemon run (ms), when any. */
  lastUsed?: (keyId: string) => number | undefined;
  /** What a key with limits used and has left (the daemon's limiter); absent: standing is not shown. */
  standing?: (key: KeyRecord) => Promise<Standing | undefined>;
}

/** Only the listed fields: never the key, never its hash. */
function view(k: KeyRecord, lastUsedAt: string | null, now: number, standing: Standing | undefined = undefined): KeyView {
  return {
    id: k.id, name: k.name, status: keyStatus(k, now), createdAt: k.createdAt, lastUsedAt,
    expiresAt: k.expiresAt, revokedAt: k.revokedAt, models: k.models,
    limits: k.limits ?? null, standing: standing ? standingView(standing) : null,
    ...(k.admin ? { admin: true as const } : {}), ...(k.session ? { session: true as const } : {}),
  };
}

/** A key's standing, or undefined when it has no limits or the limiter cannot say (the list still shows). */
async function standingOf(deps: KeyDeps, k: KeyRecord): Promise<Standing | undefined> {
  if (!k.limits || !deps.standing) return undefined;
  try { return await deps.standing(k); } catch { return undefined; }
}

function lastUsedFile(dir: string): Record<string, string> {
  try {
    const raw = readJsonSync<Record<string, unknown>>(join(dir, FILES.keyUsage), {});
    return Object.fromEntries(Object.entries(raw ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

export async function listKeys(deps: KeyDeps, now = Date.now()): Promise<KeyView[]> {
  const file = lastUsedFile(deps.dir);
  const order: Record<KeyStatus, number> = { active: 0, expired: 1, revoked: 2 };
  // Team mode with the store unreachable: the keys this daemon still serves (the page says degraded).
  const records = await stored(() => deps.store().list().catch((e: unknown) => {
    if (e instanceof KeyStoreUnavailable && deps.loaded) return deps.loaded();
    throw e;
  }));
  const views = await Promise.all(records.map(async (k) => {
    const fromFile = file[k.id] ? Date.parse(file[k.id]!) : NaN;
    const seen = deps.lastUsed?.(k.id);
    const best = Math.max(Number.isNaN(fromFile) ? -Infinity : fromFile, seen ?? -Infinity);
    return view(k, Number.isFinite(best) ? new Date(best).toISOString() : null, now, await standingOf(deps, k));
  }));
  return views.sort((a, b) => order[a.status] - order[b.status] || b.createdAt.localeCompare(a.createdAt));
}

/** A key store that cannot be reached now (team mode's database) is a 503 saying so; anything else as it is. */
async function stored<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof KeyStoreUnavailable) throw new ApiError(503, 'store_unavailable', e.message);
    throw e;
  }
}

/** A limit value that cannot be used: 400 naming the field, as `{"error": {…, "field": "rpm"}}`. */
function limitsPatch(body: Record<string, unknown>): LimitsPatch {
  try {
    return limitsPatchOf(body);
  } catch (e) {
    if (e instanceof LimitInputError) throw new ApiError(400, 'invalid_request', e.message, e.field);
    throw e;
  }
}

function checkedLimits(current: KeyLimits | undefined, patch: LimitsPatch): KeyLimits | undefined {
  try {
    return patchedLimits(current, patch);
  } catch (e) {
    if (e instanceof LimitInputError) throw new ApiError(400, 'invalid_request', e.message, e.field);
    throw e;
  }
}

function parseModels(v: unknown): string[] | null {
  if (v === undefined || v === null || v === '') return null;
  const list = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : undefined;
  if (!list || list.some((m) => typeof m !== 'string')) throw new ApiError(400, 'invalid_request', '"models" must be a list of model names (or a comma-separated string)');
  const models = (list as string[]).map((m) => m.trim()).filter(Boolean);
  if (models.length > 100) throw new ApiError(400, 'invalid_request', '"models" may list at most 100 models');
  const bad = models.find((m) => /\s/.test(m) || m.length > 200);
  if (bad) throw new ApiError(400, 'invalid_request', `model "${bad.slice(0, 60)}" is not a model name (no spaces, at most 200 characters)`);
  return models.length > 0 ? models : null;
}

export async function createKey(deps: KeyDeps, body: Record<string, unknown>, now = Date.now()): Promise<{ key: string; record: KeyView }> {
  const name = body.name === undefined || body.name === null || body.name === '' ? undefined : body.name;
  if (name !== undefined && typeof name !== 'string') throw new ApiError(400, 'invalid_request', '"name" must be a string');
  let expiresAt: Date | null = null;
  if (body.expires !== undefined && body.expires !== null && body.expires !== '' && body.expires !== 'never') {
    if (typeof body.expires !== 'string') throw new ApiError(400, 'invalid_request', '"expires" must be a duration like 30d or an ISO date');
    try { expiresAt = parseExpiry(body.expires, now); } catch (e) { throw new ApiError(400, 'invalid_request', (e as Error).message.replace('--expires', '"expires"')); }
  }
  if (body.admin !== undefined && typeof body.admin !== 'boolean') throw new ApiError(400, 'invalid_request', '"admin" must be true or false');
  const models = parseModels(body.models);
  const limits = checkedLimits(undefined, limitsPatch(body));
  if (body.admin === true && (models || limits)) throw new ApiError(400, 'invalid_request', ADMIN_KEY_HAS_NO_LIMITS);
  let created: { key: string; record: KeyRecord };
  try {
    const store = deps.store();
    created = body.admin === true
      ? await store.createAdmin({ name, expiresAt }, new Date(now))
      : await store.create({ name, expiresAt, models, ...(limits ? { limits } : {}) }, new Date(now));
  } catch (e) {
    if (e instanceof KeyStoreUnavailable) throw new ApiError(503, 'store_unavailable', e.message);
    const msg = (e as Error).message;
    throw new ApiError(/already exists/.test(msg) ? 409 : 400, /already exists/.test(msg) ? 'name_taken' : 'invalid_request', msg.replace('--name', 'name'));
  }
  await deps.reloadKeys();
  return { key: created.key, record: view(created.record, null, now, await standingOf(deps, created.record)) };
}

/**
 * `PATCH /admin/keys/{id}` `{budget?, rpm?, tpm?, concurrency?, tz?}`: a value sets a limit, null
 * removes it, a field left out keeps it. The daemon reloads before the answer, so the next request
 * is held to the new limits.
 */
export async function setKeyLimits(deps: KeyDeps, id: string, body: Record<string, unknown>, now = Date.now()): Promise<KeyView> {
  const unknown = Object.keys(body).filter((f) => !(LIMIT_FIELDS as readonly string[]).includes(f));
  if (unknown.length > 0) throw new ApiError(400, 'invalid_request', `only a key's limits can be changed here (${LIMIT_FIELDS.join(', ')}), not "${unknown[0]}"`, unknown[0]);
  const patch = limitsPatch(body);
  if (isEmptyPatch(patch)) throw new ApiError(400, 'invalid_request', `nothing to change: send one or more of ${LIMIT_FIELDS.join(', ')} (null removes a limit)`);
  const store = deps.store();
  const target = await stored(() => store.get(id));
  if (!target) throw new ApiError(404, 'key_not_found', `no key with id "${id}"`);
  if (target.admin) throw new ApiError(400, 'invalid_request', ADMIN_KEY_HAS_NO_LIMITS);
  checkedLimits(target.limits, patch);
  const rec = await stored(() => store.setLimits(target.id, patch));
  await deps.reloadKeys();
  return view(rec, null, now, await standingOf(deps, rec));
}

export async function revokeKey(deps: KeyDeps, id: string, now = Date.now()): Promise<KeyView> {
  const store = deps.store();
  const target = await stored(() => store.get(id));
  if (!target) throw new ApiError(404, 'key_not_found', `no key with id "${id}"`);
  const rec = target.revokedAt ? target : await stored(() => store.revoke(target.id, new Date(now)));
  await deps.reloadKeys();
  return view(rec, null, now);
}
