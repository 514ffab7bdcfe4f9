// Proxy keys for the dashboard and `/admin/keys`: the same KeyStore the CLI uses, then an
// immediate reload of the daemon's key index so a new key works, and a revoked one fails, at once.
// A key's secret leaves this module exactly once, in the answer to its creation.
import { join } from 'node:path';
import { readJsonSync } from '../store/atomic.js';
import { KeyStore, keyStatus, parseExpiry, type KeyRecord, type KeyStatus } from '../store/keys.js';
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
}

export interface KeyDeps {
  dir: string;
  /** Makes the running daemon see keys.json as it is now. */
  reloadKeys: () => Promise<void>;
  /** Last use seen by this daemon run (ms), when any. */
  lastUsed?: (keyId: string) => number | undefined;
}

/** Only the listed fields: never the key, never its hash. */
function view(k: KeyRecord, lastUsedAt: string | null, now: number): KeyView {
  return {
    id: k.id, name: k.name, status: keyStatus(k, now), createdAt: k.createdAt, lastUsedAt,
    expiresAt: k.expiresAt, revokedAt: k.revokedAt, models: k.models,
  };
}

function lastUsedFile(dir: string): Record<string, string> {
  try {
    const raw = readJsonSync<Record<string, unknown>>(join(dir, FILES.keyUsage), {});
    return Object.fromEntries(Object.entries(raw ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

export function listKeys(deps: KeyDeps, now = Date.now()): KeyView[] {
  const file = lastUsedFile(deps.dir);
  const order: Record<KeyStatus, number> = { active: 0, expired: 1, revoked: 2 };
  return new KeyStore(deps.dir).list()
    .map((k) => {
      const fromFile = file[k.id] ? Date.parse(file[k.id]!) : NaN;
      const seen = deps.lastUsed?.(k.id);
      const best = Math.max(Number.isNaN(fromFile) ? -Infinity : fromFile, seen ?? -Infinity);
      return view(k, Number.isFinite(best) ? new Date(best).toISOString() : null, now);
    })
    .sort((a, b) => order[a.status] - order[b.status] || b.createdAt.localeCompare(a.createdAt));
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
  const models = parseModels(body.models);
  let created: { key: string; record: KeyRecord };
  try {
    created = new KeyStore(deps.dir).create({ name, expiresAt, models }, new Date(now));
  } catch (e) {
    const msg = (e as Error).message;
    throw new ApiError(/already exists/.test(msg) ? 409 : 400, /already exists/.test(msg) ? 'name_taken' : 'invalid_request', msg.replace('--name', 'name'));
  }
  await deps.reloadKeys();
  return { key: created.key, record: view(created.record, null, now) };
}

export async function revokeKey(deps: KeyDeps, id: string, now = Date.now()): Promise<KeyView> {
  const store = new KeyStore(deps.dir);
  const target = store.list().find((k) => k.id === id);
  if (!target) throw new ApiError(404, 'key_not_found', `no key with id "${id}"`);
  const rec = target.revokedAt ? target : store.revoke(target.id, new Date(now));
  await deps.reloadKeys();
  return view(rec, null, now);
}
