// `gateway --url https://gw.example:8443 <command>`: the CLI acting on a gateway elsewhere, through
// its admin API, with an admin key taken from GATEWAY_ADMIN_KEY (the environment only, never a flag,
// so it stays out of shell history and process lists). Only `keys`, `status` and `usage` act
// remotely; everything else is about this machine. Each failure is one line: the gateway cannot be
// reached (and why), it refused the admin key, or it answered an error.
import type { Command } from 'commander';
import { CliError } from './common.js';
import { fetcherFor, localTrust, networkReason, type FetchLike } from './daemon-fetch.js';
import { clientUrl, errorMessage, findDaemon, readAdminToken } from './daemon-client.js';
import { isLoopback } from '../daemon/http/exposure.js';
import { ADMIN_KEY_PREFIX, PROXY_KEY_PREFIX } from '../daemon/store/keys.js';

export interface Remote {
  /** The gateway's base URL, without a trailing slash. */
  url: string;
  adminKey: string;
  fetch: FetchLike;
  /** The daemon of this machine's state directory, with its admin token (a team daemon's keys: keys.ts), not a gateway of `--url`. */
  local?: true;
}

/** The commands `--url` applies to (a command's path under `gateway`). */
const REMOTE_COMMANDS = ['status', 'usage', 'keys create', 'keys list', 'keys show', 'keys set', 'keys revoke'];

const ADMIN_KEY_HINT = 'make one on the gateway\'s machine with: gateway keys create --admin --name <you>';

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The global options: `--url` and `--ca-cert`, refused with a command that only acts on this machine. */
export function registerRemoteOptions(program: Command): void {
  program
    .option('--url <url>', 'act on the gateway at this URL through its admin API (keys, status, usage), with the admin key in $GATEWAY_ADMIN_KEY')
    .option('--ca-cert <file>', 'with --url: trust this CA (or self-signed) certificate for the gateway, beside the system\'s CAs')
    .hook('preAction', (_program, action) => {
      const o = program.opts<{ url?: string; caCert?: string }>();
      if (o.url === undefined && o.caCert !== undefined) throw new CliError('--ca-cert goes with --url <url>', 2);
      if (o.url !== undefined && !REMOTE_COMMANDS.includes(commandPath(action))) {
        throw new CliError(`--url works with ${REMOTE_COMMANDS.map((c) => `\`${c}\``).join(', ')}; \`${commandPath(action)}\` acts on this machine only`, 2);
      }
    });
}

function parseUrl(text: string): string {
  let u: URL;
  try { u = new URL(text); } catch { throw new CliError(`--url must be a URL like https://gw.example:8443, got "${text}"`, 2); }
  if (u.username || u.password) throw new CliError('--url must not carry a user or password: the admin key goes in GATEWAY_ADMIN_KEY', 2);
  if (u.search || u.hash) throw new CliError('--url is the gateway\'s base URL, without a query or fragment', 2);
  if (u.protocol === 'http:' && !isLoopback(u.hostname)) throw new CliError(`--url ${u.origin} is plain HTTP: the admin key is sent only over HTTPS (or to this machine)`, 2);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new CliError(`--url must be an https:// URL, got "${text}"`, 2);
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

function adminKeyFromEnv(env: NodeJS.ProcessEnv): string {
  const key = env.GATEWAY_ADMIN_KEY?.trim();
  if (!key) throw new CliError(`--url needs an admin key in GATEWAY_ADMIN_KEY (read from the environment only); ${ADMIN_KEY_HINT}`);
  if (key.startsWith(PROXY_KEY_PREFIX)) throw new CliError(`GATEWAY_ADMIN_KEY holds a proxy key (sk-proxy-…), which never opens the admin API; ${ADMIN_KEY_HINT}`);
  if (!key.startsWith(ADMIN_KEY_PREFIX)) throw new CliError(`GATEWAY_ADMIN_KEY is not an admin key (they start with ${ADMIN_KEY_PREFIX}); ${ADMIN_KEY_HINT}`);
  return key;
}

/** The remote gateway `--url` names, or undefined: the command acts on this machine. */
export function remoteOf(program: Command, env: NodeJS.ProcessEnv = process.env): Remote | undefined {
  const o = program.opts<{ url?: string; caCert?: string }>();
  if (o.url === undefined) return undefined;
  const url = parseUrl(o.url);
  const adminKey = adminKeyFromEnv(env);
  try {
    return { url, adminKey, fetch: fetcherFor(o.caCert !== undefined ? { ca: o.caCert } : undefined) };
  } catch (e) {
    throw new CliError((e as Error).message, 2);
  }
}

/**
 * The daemon running with state directory `dir`, reached as a remote gateway is (its admin API) but
 * with its local admin token; undefined when none runs.
 */
export function localAdminApi(dir: string): Remote | undefined {
  const d = findDaemon(dir);
  if (!d) return undefined;
  try {
    return { url: clientUrl(d.url), adminKey: readAdminToken(dir), fetch: fetcherFor(localTrust(d)), local: true };
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

/** Calls `/admin/<path>` on the remote gateway with the admin key; the parsed JSON answer, or a one-line CliError. */
export async function remoteRequest<T>(r: Remote, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
  let res: Response;
  try {
    res = await r.fetch(`${r.url}/admin/${path}`, {
      method,
      headers: { authorization: `Bearer ${r.adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new CliError(`cannot reach the gateway at ${r.url}: ${networkReason(e)}`);
  }
  const text = await res.text();
  const why = errorMessage(text);
  if (res.status === 401) throw new CliError(`the gateway at ${r.url} refused ${r.local ? 'its admin token' : 'the admin key in GATEWAY_ADMIN_KEY'}: ${why ?? 'HTTP 401'}`);
  // This machine's daemon speaks for its own store: its reason is the whole story, as it would be without a daemon.
  if (!res.ok && r.local && why) throw new CliError(why);
  if (!res.ok) throw new CliError(`the gateway at ${r.url} answered ${method} /admin/${path.split('?')[0]} with HTTP ${res.status}${why ? `: ${why}` : ''}`);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliError(`the gateway at ${r.url} answered /admin/${path.split('?')[0]} with something that is not JSON (is --url the gateway's address?)`);
  }
}
