// How the CLI finds and talks to a running daemon: `daemon.json` + `admin-token` in the state
// dir, a liveness check of the pid, then `/admin/*` with the admin token over loopback (HTTPS when
// the daemon serves TLS, trusting the certificate it recorded: daemon-fetch.ts).
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { KeyOrigin, PoolKeyReport } from '../daemon/access/provider-keys.js';
import type { KeyView } from '../daemon/dashboard/keys-api.js';
import { FILES } from '../daemon/store/paths.js';
import { readJsonSync } from '../daemon/store/atomic.js';
import { gatewayCmd } from './invocation.js';
import { fetcherFor, localTrust, networkReason } from './daemon-fetch.js';
import type { StoreStatusView } from '../daemon/store/store-health.js';

export interface DaemonInfo {
  pid: number;
  host: string;
  port: number;
  url: string;
  startedAt: string;
  /** The certificate file a daemon serving HTTPS uses (the CLI trusts exactly it). */
  tlsCert?: string;
}

export interface DaemonStatus {
  pid: number;
  url: string;
  startedAt: string;
  uptimeMs: number;
  requestsServed: number;
  inFlight: number;
  version: string;
  /** Where the daemon's key for each provider that takes one comes from (absent from daemons before it was added). */
  providerKeys?: Record<string, KeyOrigin>;
  /** The retries and routes the daemon routes by (absent from daemons before routing). */
  routing?: { retries: number; routes: Record<string, string[]> };
  /** Targets the circuit breaker rests now, and until when (ISO time). */
  breakers?: Array<{ target: string; until: string }>;
  /** Every key the daemon holds, by provider: label, masked form, state (absent from daemons before pools). */
  keyPools?: Record<string, PoolKeyReport[]>;
  /** Team mode: the shared store and its health (absent on a laptop). */
  store?: StoreStatusView;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;

export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The one line for "no daemon runs", with the command that starts one. */
export function notRunningMessage(): string {
  return `the gateway is not running (start it with: ${gatewayCmd('start')})`;
}

/** The recorded daemon, whether or not it still runs (`alive` tells). Undefined when none recorded. */
export function readDaemonRecord(dir: string): (DaemonInfo & { alive: boolean }) | undefined {
  let raw: Partial<DaemonInfo> | undefined;
  try {
    raw = readJsonSync<Partial<DaemonInfo> | undefined>(join(dir, FILES.daemon), undefined);
  } catch {
    return undefined; // half-written or corrupt: treat as not running
  }
  if (!raw || typeof raw.pid !== 'number' || typeof raw.url !== 'string') return undefined;
  const info: DaemonInfo = {
    pid: raw.pid,
    host: typeof raw.host === 'string' ? raw.host : DEFAULT_HOST,
    port: typeof raw.port === 'number' ? raw.port : Number(new URL(raw.url).port),
    url: raw.url.replace(/\/+$/, ''),
    startedAt: typeof raw.startedAt === 'string' ? raw.startedAt : '',
    ...(typeof raw.tlsCert === 'string' ? { tlsCert: raw.tlsCert } : {}),
  };
  return { ...info, alive: isPidAlive(info.pid) };
}

/** The running daemon, or undefined (no record, or its pid is gone). */
export function findDaemon(dir: string): DaemonInfo | undefined {
  const rec = readDaemonRecord(dir);
  if (!rec?.alive) return undefined;
  const { alive: _alive, ...info } = rec;
  return info;
}

/** The port `start`, `env` and `doctor` use when no daemon says otherwise. */
export function configuredPort(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.GATEWAY_PORT;
  if (v === undefined || v === '') return DEFAULT_PORT;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`GATEWAY_PORT must be a port number (0-65535), got "${v}"`);
  return n;
}

/** The URL clients should use: the running daemon's, else the default address. */
export function gatewayUrl(dir: string, env: NodeJS.ProcessEnv = process.env): { url: string; running: boolean } {
  const d = findDaemon(dir);
  if (d) return { url: clientUrl(d.url), running: true };
  return { url: `http://${DEFAULT_HOST}:${configuredPort(env) || DEFAULT_PORT}`, running: false };
}

/** A daemon bound to every interface is reached by clients on loopback. */
export function clientUrl(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
}

export async function healthy(d: { url: string; tlsCert?: string }, timeoutMs = 1_000): Promise<boolean> {
  try {
    const res = await fetcherFor(localTrust(d))(`${clientUrl(d.url)}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** The running daemon's admin token (written 0600 in the state directory at its start). */
export function readAdminToken(dir: string): string {
  try {
    return readFileSync(join(dir, FILES.adminToken), 'utf8').trim();
  } catch {
    throw new Error(`the daemon's admin token (${join(dir, FILES.adminToken)}) is missing; restart it: ${gatewayCmd('stop')} && ${gatewayCmd('start')}`);
  }
}

/** An admin call the daemon answered with an error status (`status`), or did not answer (none). */
export class AdminError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'AdminError';
  }
}

/** The message of a daemon error answer ({"error": {"message"}}), if it has one. */
export function errorMessage(text: string): string | undefined {
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof m === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Calls `/admin/<path>` on the running daemon (with `body` as JSON, when given) and returns the
 * parsed JSON (or undefined for no body). Throws AdminError.
 */
export async function adminRequest<T = unknown>(dir: string, method: 'GET' | 'POST' | 'DELETE', path: string, timeoutMs = 3_000, body?: unknown): Promise<T> {
  const d = findDaemon(dir);
  if (!d) throw new AdminError(notRunningMessage());
  let res: Response;
  try {
    res = await fetcherFor(localTrust(d))(`${clientUrl(d.url)}/admin/${path}`, {
      method,
      headers: { authorization: `Bearer ${readAdminToken(dir)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const why = e instanceof Error && e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : networkReason(e);
    throw new AdminError(`the daemon at ${d.url} (pid ${d.pid}) did not answer /admin/${path}: ${why}`);
  }
  const text = await res.text();
  if (!res.ok) {
    const why = errorMessage(text);
    throw new AdminError(`the daemon answered /admin/${path} with HTTP ${res.status}${why ? `: ${why}` : ''}`, res.status);
  }
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AdminError(`the daemon answered /admin/${path} with something that is not JSON`);
  }
}

/** After a store change: tell a running daemon to reload. Returns what happened, never throws. */
export async function reloadIfRunning(dir: string): Promise<'reloaded' | 'not-running' | { failed: string }> {
  if (!findDaemon(dir)) return 'not-running';
  try {
    await adminRequest(dir, 'POST', 'reload');
    return 'reloaded';
  } catch (e) {
    return { failed: (e as Error).message };
  }
}

/** reloadIfRunning, with a note on stderr about what happened. */
export async function reloadAndReport(dir: string): Promise<void> {
  const r = await reloadIfRunning(dir);
  if (r === 'reloaded') process.stderr.write('The running gateway reloaded.\n');
  else if (r !== 'not-running') process.stderr.write(`warning: the running gateway did not reload (${r.failed}); restart it: ${gatewayCmd('stop')} && ${gatewayCmd('start')}\n`);
  const team = await unpublishedTeamChange(dir, r !== 'not-running');
  if (team) process.stderr.write(`warning: the change is not the team's yet: ${team}\n`);
}

/**
 * Team mode: why a change this state directory's files hold in the team's shared settings is not
 * in the team's store yet (the daemon publishes it: store/team-config.ts); undefined when it is,
 * or when the directory's daemon is not in a team.
 */
async function unpublishedTeamChange(dir: string, running: boolean): Promise<string | undefined> {
  const { readTeamBase, unpublishedChange } = await import('../daemon/store/shared-config-files.js');
  if (!readTeamBase(dir)) return undefined;
  const { readConfig } = await import('../daemon/store/config.js');
  const { cliStoreUrl, parseStoreUrl } = await import('../daemon/store/store-url.js');
  try {
    const url = cliStoreUrl(dir, process.env, readConfig(dir).storeUrl);
    return url === undefined ? undefined : unpublishedChange(dir, parseStoreUrl(url).display, running);
  } catch {
    return undefined; // a config.json or store URL that cannot be read: the command that wrote it said so
  }
}

/**
 * What the running daemon counts of each key's limits (GET /admin/keys), by key id; or why it
 * cannot say: the daemon is not running, or did not answer.
 */
export async function keyStandings(dir: string): Promise<{ standings: Map<string, KeyView['standing']> } | { unavailable: string }> {
  if (!findDaemon(dir)) return { unavailable: 'daemon not running' };
  try {
    const { keys } = await adminRequest<{ keys: KeyView[] }>(dir, 'GET', 'keys');
    return { standings: new Map(keys.map((k) => [k.id, k.standing])) };
  } catch (e) {
    return { unavailable: (e as Error).message };
  }
}
