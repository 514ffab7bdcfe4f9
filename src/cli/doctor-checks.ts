// The checks behind `gateway doctor`. Each returns what it found and, when it fails, the fix; a
// check that passes with a caveat is a warning (ok, with `warning: true`). No check prints or
// returns a secret: provider keys are reported by origin only, the running daemon's when one runs.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { FILES } from '../daemon/store/paths.js';
import { allProviders, provider as descriptor } from '../providers/registry.js';
import type { PoolKeyReport } from '../daemon/access/provider-keys.js';
import { DEFAULT_LABEL } from '../daemon/store/key-pools.js';
import type { SecretOrigin } from '../daemon/store/secrets.js';
import { adminRequest, configuredPort, DEFAULT_HOST, findDaemon, healthy, readDaemonRecord, type DaemonStatus } from './daemon-client.js';
import { describeOwner, findPortOwner, portIsFree } from './port-owner.js';
import { howToGetNode, nodeVersionProblem, requiredRange } from '../../bin/node-check.js';
import { gatewayCmd } from './invocation.js';
import { storeHealthText } from '../daemon/store/store-health.js';

export interface Check { id: string; ok: boolean; warning?: boolean; title: string; detail: string; fix?: string }

const SECRET_FILES = [FILES.keys, FILES.keyUsage, FILES.insecureSecrets, FILES.daemon, FILES.adminToken, FILES.config, FILES.store];
const PROXY_VARS = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy', 'NODE_USE_ENV_PROXY'];

/** The same minimum (package.json engines.node) and message as bin/gateway.js's own check. */
export function checkNode(version = process.versions.node): Check {
  const range = requiredRange();
  return nodeVersionProblem('gateway', version, range) === undefined
    ? { id: 'node', ok: true, title: 'Node.js', detail: `v${version} (needs ${range})` }
    : { id: 'node', ok: false, title: 'Node.js', detail: `v${version} is too old: gateway needs ${range}`, fix: howToGetNode() };
}

function checkStateDir(dir: string): Check[] {
  const checks: Check[] = [];
  let mode: number;
  try {
    mode = statSync(dir).mode & 0o777;
  } catch {
    return [{ id: 'state-dir', ok: true, title: 'state directory', detail: `${dir} does not exist yet; it is created (0700) on first use` }];
  }
  const isWin = process.platform === 'win32';
  checks.push(isWin || (mode & 0o077) === 0
    ? { id: 'state-dir', ok: true, title: 'state directory', detail: `${dir} (mode ${mode.toString(8)})` }
    : { id: 'state-dir', ok: false, title: 'state directory', detail: `${dir} has mode ${mode.toString(8)}, other users can look inside`, fix: `chmod 700 '${dir}'` });
  if (isWin) return checks;
  const loose: string[] = [];
  for (const f of SECRET_FILES) {
    try {
      if ((statSync(join(dir, f)).mode & 0o077) !== 0) loose.push(f);
    } catch { /* absent is fine */ }
  }
  checks.push(loose.length === 0
    ? { id: 'state-files', ok: true, title: 'state file modes', detail: 'files holding secrets, hashes or tokens are 0600' }
    : { id: 'state-files', ok: false, title: 'state file modes', detail: `readable by others: ${loose.join(', ')}`, fix: `chmod 600 ${loose.map((f) => `'${join(dir, f)}'`).join(' ')}` });
  return checks;
}

/** The running daemon's status (its keys' origins and pool states); undefined when none runs, or it does not answer. */
async function daemonStatus(dir: string): Promise<DaemonStatus | undefined> {
  if (!findDaemon(dir)) return undefined;
  try {
    return await adminRequest<DaemonStatus>(dir, 'GET', 'status');
  } catch {
    return undefined; // the daemon check says what is wrong with it
  }
}

/** A warning per provider whose keys in the running gateway rest after a 429 or were refused (401/403). */
export function keyPoolChecks(pools: Record<string, PoolKeyReport[]> | undefined): Check[] {
  const checks: Check[] = [];
  for (const [p, keys] of Object.entries(pools ?? {})) {
    const refused = keys.filter((k) => k.state === 'refused');
    const resting = keys.filter((k) => k.state === 'resting');
    if (refused.length + resting.length === 0) continue;
    const healthy = keys.length - refused.length - resting.length;
    const detail = [
      ...refused.map((k) => `key ${k.label} (${k.masked}) was refused by ${p} (${k.status}) and is out of use`),
      ...resting.map((k) => `key ${k.label} (${k.masked}) rests after a 429 until ${new Date(k.until!).toISOString()}`),
    ].join('; ') + `; ${healthy} of ${keys.length} serve${healthy === 1 ? 's' : ''} requests`;
    const fixes = refused.map((k) => k.origin === 'environment'
      ? `replace it in ${descriptor(p).keyEnv} and restart the gateway`
      : gatewayCmd(k.label === DEFAULT_LABEL ? `providers set ${p}` : `providers set ${p} --label ${k.label}`));
    checks.push({ id: `keys-${p}`, ok: true, warning: true, title: `${p} key pool`, detail, ...(fixes.length ? { fix: [...new Set(fixes)].join('; ') } : {}) });
  }
  return checks;
}

/** A warning when the running gateway's circuit breaker passes over targets now (after repeated retryable failures). */
export function breakerCheck(breakers: Array<{ target: string; until: string }> | undefined): Check[] {
  if (!breakers || breakers.length === 0) return [];
  const detail = `${breakers.map((b) => `${b.target} until ${b.until}`).join('; ')}: requests skip ${breakers.length === 1 ? 'it' : 'them'} for their fallbacks (or fail at once) until then, after repeated overloads, rate limits or connection errors`;
  return [{ id: 'breakers', ok: true, warning: true, title: 'circuit breakers open', detail, fix: `${gatewayCmd('logs')} shows each attempt's outcome (route=…); check the provider's status page, or add a fallback with ${gatewayCmd('models fallback <model> <target>')}` }];
}

async function checkKeychainAndProviders(dir: string, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const { createSecretSource } = await import('../daemon/store/secret-source.js');
  const source = createSecretSource({ dir, env });
  const checks: Check[] = [];
  // Providers that take no key (local servers) have nothing to look up.
  const [lookups, status] = await Promise.all([Promise.all(allProviders().filter((p) => p.auth).map((p) => source.inspect(p.id))), daemonStatus(dir)]);
  const daemonKeys = status?.providerKeys;
  // A running daemon's keys are what requests get, and its environment need not be this shell's:
  // its answer wins; this shell's lookup stands for a daemon that is not running.
  const origin = (p: string): SecretOrigin | undefined => {
    const held = daemonKeys?.[p];
    if (held === undefined) return lookups.find((l) => l.provider === p)?.secret?.origin;
    return held === 'none' ? undefined : held;
  };
  const inDaemon = (p: string): boolean => daemonKeys?.[p] !== undefined;
  // The lookups already asked the keychain; don't wait for a hung one twice.
  const failed = lookups.find((l) => l.keychainError)?.keychainError;
  try {
    if (failed) throw new Error(failed);
    const b = await source.keychain.backend();
    checks.push(b.survivesReboot
      ? { id: 'keychain', ok: true, title: 'keychain', detail: `${b.name} answers (service "${source.keychain.service}")` }
      : { id: 'keychain', ok: true, title: 'keychain', detail: `${b.name} answers, but it does not survive a reboot: keys stored there are lost on restart`, fix: 'run a Secret Service (e.g. gnome-keyring) for keys that persist, or set GATEWAY_<PROVIDER>_API_KEY' });
  } catch (e) {
    // Provider keys from the environment (or the insecure file) with no keychain at all is how
    // SSH boxes, containers and CI run: it works, with one caveat. No key from anywhere is broken.
    const where = { environment: 'the environment', 'insecure-file': 'the insecure file', keychain: 'the keychain' } as const;
    const elsewhere = [...new Set(lookups.flatMap((l) => { const o = origin(l.provider); return o && o !== 'keychain' ? [where[o]] : []; }))];
    checks.push(elsewhere.length > 0
      ? { id: 'keychain', ok: true, warning: true, title: 'keychain', detail: `none usable here (${(e as Error).message.replace(/^no usable keychain: /, '')}); provider keys come from ${elsewhere.join(' and ')}`, fix: `fine for start, chat and run; ${gatewayCmd('env')} needs --insecure-storage, or set its variables yourself with a key from ${gatewayCmd('keys create')}` }
      : { id: 'keychain', ok: false, title: 'keychain', detail: (e as Error).message, fix: `unlock or start a keychain (Linux: a Secret Service such as gnome-keyring on D-Bus), or use GATEWAY_<PROVIDER>_API_KEY, or ${gatewayCmd('providers set <p> --insecure-storage')}` });
  }
  const anySet = lookups.some((l) => origin(l.provider));
  for (const { provider: p } of lookups) {
    const o = origin(p);
    const where = o === 'environment' ? `environment (${descriptor(p).keyEnv})` : o === 'insecure-file' ? 'insecure file (unencrypted)' : o;
    const set = inDaemon(p) ? `set in the running gateway, from its ${where}` : `set, from the ${where}`;
    const unset = inDaemon(p) ? 'not set in the running gateway' : 'not set';
    checks.push(o
      ? { id: `provider-${p}`, ok: true, title: `${p} key`, detail: set }
      : { id: `provider-${p}`, ok: anySet, title: `${p} key`, detail: anySet ? `${unset} (requests to this provider get 503)` : `${unset}; no provider has a key`, fix: gatewayCmd(`providers set ${p}`) });
  }
  checks.push(...keyPoolChecks(status?.keyPools));
  checks.push(...breakerCheck(status?.breakers));
  return checks;
}

async function checkDaemon(dir: string, env: NodeJS.ProcessEnv): Promise<Check> {
  const rec = readDaemonRecord(dir);
  if (rec?.alive) {
    return (await healthy(rec, 3_000))
      ? { id: 'daemon', ok: true, title: 'daemon', detail: `running at ${rec.url} (pid ${rec.pid}) and answers /healthz` }
      : { id: 'daemon', ok: false, title: 'daemon', detail: `pid ${rec.pid} is recorded at ${rec.url} but does not answer /healthz`, fix: `${gatewayCmd('logs')}; then ${gatewayCmd('stop')} && ${gatewayCmd('start')}` };
  }
  let port: number;
  try { port = configuredPort(env); } catch (e) {
    return { id: 'daemon', ok: false, title: 'daemon', detail: (e as Error).message, fix: 'set GATEWAY_PORT to a port number or unset it' };
  }
  if (port === 0 || (await portIsFree(DEFAULT_HOST, port))) {
    return { id: 'daemon', ok: true, title: 'daemon', detail: `not running; port ${port} is free (start it: ${gatewayCmd('start')})` };
  }
  const owner = await findPortOwner(port);
  return { id: 'daemon', ok: false, title: 'daemon', detail: `not running, and port ${port} is held by ${describeOwner(owner)}`, fix: `stop that program, or use another port: ${gatewayCmd(`start --port ${port + 1}`)} (or GATEWAY_PORT)` };
}

function redact(value: string): string {
  return value.replace(/\/\/[^/@\s]*@/, '//***@');
}

function checkProxyVars(env: NodeJS.ProcessEnv): Check {
  const set = PROXY_VARS.filter((v) => env[v]);
  const diverting = set.filter((v) => /proxy$/i.test(v) && !/^no_proxy$/i.test(v));
  if (diverting.length === 0 && set.length > 0) return { id: 'proxy-env', ok: true, title: 'proxy variables', detail: `only ${set.join(', ')} set; nothing is diverted` };
  if (set.length === 0) return { id: 'proxy-env', ok: true, title: 'proxy variables', detail: 'none of HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY is set' };
  const detail = set.map((v) => `${v}=${redact(env[v]!)}`).join(', ');
  return { id: 'proxy-env', ok: false, title: 'proxy variables', detail: `${detail}: upstream calls may be diverted through a proxy, and clients may send local requests to it`, fix: `unset them in the shell that runs ${gatewayCmd('start')} unless the proxy is intended; add 127.0.0.1,localhost to NO_PROXY so clients reach the gateway directly` };
}

/**
 * Each provider the user added, asked as `providers test` asks it (its models list and one tiny
 * request): reachable, key accepted, protocol answering. The built-ins are not called: their
 * addresses are fixed, and a doctor run should not spend tokens on them.
 */
async function checkAddedProviders(dir: string, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const added = allProviders().filter((p) => p.source === 'configured');
  if (added.length === 0) return [];
  const [{ createSecretSource }, { probeProvider }, { Upstreams }] = await Promise.all([
    import('../daemon/store/secret-source.js'), import('../daemon/admin/provider-probe.js'), import('../daemon/relay/upstream.js'),
  ]);
  const source = createSecretSource({ dir, env });
  const upstreams = new Upstreams({}, { connectMs: 5_000, headersMs: 10_000, idleMs: 10_000 });
  try {
    return await Promise.all(added.map(async (p): Promise<Check> => {
      const id = `provider-${p.id}-works`;
      const title = `${p.id} (${p.protocol}, ${p.origin}${p.basePath})`;
      const secret = p.auth ? await source.get(p.id).catch(() => undefined) : undefined;
      if (p.auth && !secret) return { id, ok: false, title, detail: 'no key, so it was not asked', fix: gatewayCmd(`providers set ${p.id}`) };
      const r = await probeProvider({ upstreams, provider: p.id, key: secret?.key ?? '', timeoutMs: 10_000 });
      return r.verdict === 'ok'
        ? { id, ok: true, title, detail: r.summary }
        : { id, ok: false, title, detail: r.summary, fix: `${gatewayCmd(`providers test ${p.id}`)} for details; change it with ${gatewayCmd(`providers add ${p.id} …`)}` };
    }));
  } finally {
    await upstreams.close();
  }
}

/**
 * config.json's routing (aliases, retries, fallbacks, breaker) as the daemon reads it: a problem is
 * a warning, since the daemon keeps routing by its last good settings meanwhile.
 */
async function checkRouting(dir: string): Promise<Check> {
  const { readConfig } = await import('../daemon/store/config.js');
  let problems: string[];
  let ignored: string[];
  let routes: number;
  try {
    const { routing } = readConfig(dir);
    ({ problems, ignored } = routing);
    routes = Object.keys(routing.settings.routes).length;
  } catch (e) {
    return { id: 'routing', ok: false, title: 'routing', detail: (e as Error).message, fix: `fix or remove ${join(dir, FILES.config)}` };
  }
  const fix = `fix ${join(dir, FILES.config)}, or set routes with ${gatewayCmd('models alias')} and ${gatewayCmd('models fallback')}`;
  if (problems.length > 0) return { id: 'routing', ok: true, warning: true, title: 'routing', detail: `config.json: ${problems.join('; ')}; the daemon keeps its last good routing`, fix };
  if (ignored.length > 0) return { id: 'routing', ok: true, warning: true, title: 'routing', detail: `config.json: ${ignored.join('; ')}; ignored`, fix };
  return { id: 'routing', ok: true, title: 'routing', detail: routes === 0 ? 'defaults, no fallbacks configured' : `${routes} route${routes === 1 ? '' : 's'} with fallbacks (${gatewayCmd('models fallbacks')})` };
}

/** config.json's `cache` section as the daemon reads it: a problem is a warning, as for routing. */
async function checkCache(dir: string): Promise<Check> {
  const { readConfig } = await import('../daemon/store/config.js');
  let cache;
  try { ({ cache } = readConfig(dir)); } catch (e) {
    return { id: 'cache', ok: false, title: 'prompt caching', detail: (e as Error).message, fix: `fix or remove ${join(dir, FILES.config)}` };
  }
  const s = cache.settings;
  if (cache.problems.length > 0) {
    return { id: 'cache', ok: true, warning: true, title: 'prompt caching', detail: `config.json: ${cache.problems.join('; ')}; the daemon keeps its last good cache settings`, fix: `fix the "cache" section of ${join(dir, FILES.config)}` };
  }
  const marks = s.breakpoints ? `cache breakpoints on (TTL ${s.ttl})` : 'cache breakpoints off';
  const own = Object.keys(s.providers);
  return { id: 'cache', ok: true, title: 'prompt caching', detail: `${marks}, session prompt_cache_key ${s.promptCacheKey ? 'on' : 'off'}${own.length > 0 ? `; own settings for ${own.join(', ')}` : ''}` };
}

/**
 * Team mode's shared store: as the running daemon sees it (connected, or degraded since when),
 * else, when a store is set for this state directory, as a connection from here finds it (its
 * schema version; nothing is created or migrated). Nothing on a laptop without one.
 */
export async function checkStore(dir: string, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const title = 'shared store';
  const st = (await daemonStatus(dir))?.store;
  if (st) {
    return [st.connected
      ? { id: 'store', ok: true, title, detail: `${st.display} connected; this daemon is ${st.daemonId}, ${st.daemons} daemon${st.daemons === 1 ? '' : 's'} alive${st.unreconciled > 0 ? `; ${st.unreconciled} limit settlements from the outage still being written back` : ''}` }
      : {
        id: 'store', ok: false, title,
        detail: `${st.display} ${storeHealthText(st)}${st.lastError ? ` (${st.lastError})` : ''}: the gateway serves each key on this daemon's share of its limits, refuses keys set to fail closed, and writes back what it settled once the store returns`,
        fix: `start PostgreSQL at ${st.display} or make it reachable from this machine; the daemon reconnects by itself`,
      }];
  }
  const [{ readConfig }, { cliStoreUrl, parseStoreUrl }] = await Promise.all([import('../daemon/store/config.js'), import('../daemon/store/store-url.js')]);
  let url: string | undefined;
  try { url = cliStoreUrl(dir, env, readConfig(dir).storeUrl); } catch { return []; } // config.json's own check says what is wrong with it
  if (url === undefined) return [];
  let store;
  try { store = parseStoreUrl(url); } catch (e) {
    return [{ id: 'store', ok: false, title, detail: (e as Error).message, fix: 'fix GATEWAY_STORE_URL or store.url in config.json' }];
  }
  const [{ inspectStore }, { PG_SCHEMA_VERSION }] = await Promise.all([import('../daemon/store/shared-store.js'), import('../daemon/store/pg-schema.js')]);
  try {
    const found = await inspectStore(store);
    if (found.version > PG_SCHEMA_VERSION) {
      return [{ id: 'store', ok: false, title, detail: `${store.display} has schema version ${found.version}, newer than this gateway understands (${PG_SCHEMA_VERSION})`, fix: 'upgrade model-gateway' }];
    }
    const schema = found.version === 0 ? 'no gateway schema yet (the first daemon started on it creates it)' : `schema version ${found.version}${found.version < PG_SCHEMA_VERSION ? ` (a daemon of this gateway migrates it to ${PG_SCHEMA_VERSION} at start)` : ''}`;
    return [{ id: 'store', ok: true, title, detail: `${store.display} reachable, ${schema}, ${found.daemons} daemon${found.daemons === 1 ? '' : 's'} alive` }];
  } catch (e) {
    return [{ id: 'store', ok: false, title, detail: (e as Error).message, fix: `check that PostgreSQL runs at ${store.display} and takes these credentials` }];
  }
}

export async function runChecks(dir: string, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const [keychain, daemon, added, routing, cache, store] = await Promise.all([checkKeychainAndProviders(dir, env), checkDaemon(dir, env), checkAddedProviders(dir, env), checkRouting(dir), checkCache(dir), checkStore(dir, env)]);
  return [checkNode(), ...checkStateDir(dir), ...keychain, ...added, routing, cache, daemon, ...store, checkProxyVars(env)];
}
