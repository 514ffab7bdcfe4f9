// Runs the daemon for real: state directory, config, keychain-backed secrets, admin token and
// daemon.json, an access log without secrets, last-used times, and a drain on SIGTERM/SIGINT.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startDaemon, type Mount, type RunningDaemon } from './server.js';
import { parseConfig, readConfig, readRawConfig, type GatewayConfig } from './store/config.js';
import { DEFAULT_ROUTING, type RoutingSettings } from './routing/settings.js';
import { DEFAULT_CACHE, type CacheSettings } from './caching/settings.js';
import { createSecretSource } from './store/secret-source.js';
import { FILES, ensureStateDir } from './store/paths.js';
import { writePrivateFile, writePrivateFileSync, readJsonSync } from './store/atomic.js';
import { originsFromEnv } from './relay/upstream.js';
import type { GatewayEvent, RequestFailed, RequestFinished, RequestStarted } from './observe/events.js';
import { openUsageHistory, recordUsage, storeBodies, usageConfig, type UsageHistory, type UsageRecorder } from './observe/usage/index.js';
import { createDashboard } from './dashboard/mount.js';
import { batchedLog } from './observe/log-writer.js';
import { parseTelemetry } from './telemetry/index.js';
import { exposureOf } from './http/exposure.js';
import { parseStoreUrl, recordStoreUrl, storeUrlFrom } from './store/store-url.js';
import { daemonIdOf, SharedStore } from './store/shared-store.js';
import { configRecheckMs, TeamConfig } from './store/team-config.js';

export interface RunDaemonOptions {
  host: string;
  port: number;
  stateDir: string;
  upstreamTimeoutSeconds?: number;
  log?: (line: string) => void;
  /** Extra routes (dashboard, usage API) built against the running daemon. */
  mounts?: (daemon: () => RunningDaemon) => Mount[];
  /** PEM files of the certificate (with its chain) and key the daemon serves HTTPS with. */
  tls?: { certFile: string; keyFile: string };
  /** The TLS-terminating reverse proxies' IP addresses (exposure.ts parseProxyAddresses). */
  behindProxy?: readonly string[];
  /** Team mode: the shared store's postgres:// URL (`--store`); else GATEWAY_STORE_URL, else config.json `store.url`. */
  storeUrl?: string;
}

/**
 * daemon.json: where the CLI finds the daemon. `tlsCert` is the certificate file it serves, which
 * the CLI on this machine trusts for exactly that daemon (cli/daemon-fetch.ts).
 */
export interface DaemonFile {
  pid: number; host: string; port: number; url: string; startedAt: string; tlsCert?: string; behindProxy?: readonly string[];
  /** Team mode: the shared store as `user@host:port/database` (never its password), and this daemon's name in it. */
  store?: string; daemonId?: string;
}

/** The PEM files' contents, read before anything starts; one line naming the file that cannot be read. */
function readTlsFiles(tls: { certFile: string; keyFile: string }): { cert: Buffer; key: Buffer; certFile: string } {
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(`cannot read the TLS ${what} ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
  };
  return { cert: read(tls.certFile, 'certificate'), key: read(tls.keyFile, 'key'), certFile: resolve(tls.certFile) };
}

function accessLine(ev: GatewayEvent, started: Map<string, RequestStarted>): string | undefined {
  if (ev.type === 'started') { started.set(ev.id, ev); return undefined; }
  if (ev.type !== 'finished' && ev.type !== 'failed') return undefined;
  const s = started.get(ev.id);
  started.delete(ev.id);
  // The model the provider served once it has said (a native request's body is not read), and the
  // name asked for when that differs (a dated snapshot answering an alias).
  const served = ev.type === 'finished' ? ev.model : null;
  const asked = s?.model ?? null;
  const model = `model=${served ?? asked ?? '-'}${served && asked && served !== asked ? ` requested=${asked}` : ''}`;
  const head = s ? `${s.method} ${s.path} ${s.mode}/${s.provider} ${model} key=${s.keyName}` : ev.id;
  const u = ev.usage;
  const tokens = u.inputTokens !== undefined || u.outputTokens !== undefined ? ` tokens=${u.inputTokens ?? '?'}/${u.outputTokens ?? '?'}` : '';
  const tail = ev.type === 'failed' ? ` error=${ev.code}: ${ev.message}` : '';
  const client = s?.client ? ` client=${s.client}` : '';
  return `${head} -> ${ev.status} ${Math.round(ev.durationMs)}ms${tokens}${client}${routeText(ev)}${tail}`;
}

/**
 * What the gateway did on the way, when it did more than one attempt: each attempt's target and why
 * it ended (`route=anthropic/claude-sonnet-4-5=529,openai/gpt-5.4=200`), the time waited between
 * them, and the pool key that served.
 */
function routeText(ev: RequestFinished | RequestFailed): string {
  const several = ev.route !== undefined && ev.route.includes(',');
  const route = several ? ` route=${ev.route!.replace(/,\s*/g, ',')}` : '';
  const waited = ev.waitedMs ? ` waited=${Math.round(ev.waitedMs)}ms` : '';
  return `${route}${waited}${ev.keyLabel ? ` provider-key=${ev.keyLabel}` : ''}`;
}

/** The daemon log's line for each routing and cache problem in config.json (gateway doctor shows the same). */
function configWarnings(c: Pick<GatewayConfig, 'routing' | 'cache'>): string[] {
  return [
    ...c.routing.problems.map((p) => `warning: config.json routing: ${p}; keeping the last good routing`),
    ...c.routing.ignored.map((p) => `warning: config.json ${p}; ignored`),
    ...c.cache.problems.map((p) => `warning: config.json ${p}; keeping the last good cache settings`),
  ];
}

export async function runDaemon(opts: RunDaemonOptions): Promise<{ url: string; close(): Promise<void> }> {
  // Checked before any file is written: a refused bind leaves no trace of a half-started daemon.
  exposureOf(opts.host, opts.tls !== undefined, opts.behindProxy ?? []);
  const tls = opts.tls ? readTlsFiles(opts.tls) : undefined;
  const dir = ensureStateDir(opts.stateDir);
  const log = opts.log ?? batchedLog((text) => process.stdout.write(text)).log;
  const config = readConfig(dir);
  // The shared store is reached and migrated before anything is written or listens: a bad URL, a
  // refused password or a newer schema stops the start with one line, leaving nothing half-started.
  const storeUrl = storeUrlFrom(opts.storeUrl, process.env, config.storeUrl);
  // Its name in the usage rows it records, on a laptop too (so a history moved into a team store says where it came from).
  const daemonId = daemonIdOf(process.env, opts.port);
  const recheckMs = storeUrl === undefined ? 0 : configRecheckMs(process.env);
  const shared = storeUrl === undefined ? undefined : await SharedStore.open({ store: parseStoreUrl(storeUrl), daemonId, log });
  // Team mode: the shared sections of config.json are the team's (store/team-config.ts), caught up
  // with before the daemon serves anything.
  const team = shared ? await TeamConfig.open({ shared, dir, log, recheckMs }).catch(async (e: unknown) => { await shared.close(); throw e; }) : undefined;
  const served = (): GatewayConfig => (team ? parseConfig(team.effective(readRawConfig(dir))) : readConfig(dir));
  const startConfig = team ? served() : config;
  // A config problem is logged once per distinct text, not on every reload.
  let lastProblems = '';
  const reportProblems = (c: GatewayConfig) => {
    const problems = [...c.problems, ...configWarnings(c)];
    const text = problems.join('\n');
    if (text && text !== lastProblems) for (const p of problems) log(p);
    lastProblems = text;
  };
  // A routing section with a problem is not half-applied: the last good one stays (the defaults
  // until one was good), so a typo in a hand edit never drops every fallback at once.
  let routing: RoutingSettings = DEFAULT_ROUTING;
  let cache: CacheSettings = DEFAULT_CACHE;
  const adminToken = randomBytes(32).toString('base64url');
  writePrivateFileSync(join(dir, FILES.adminToken), adminToken);
  const timeoutS = opts.upstreamTimeoutSeconds ?? config.upstreamTimeoutSeconds;
  let stopping: Promise<void> | undefined;
  let daemon: RunningDaemon | undefined;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Hold the process open until the last step: once the server is closed, an await on
      // something without a handle of its own (a worker's reply) would let Node exit half-way.
      const hold = setInterval(() => {}, 1000);
      log('stopping: draining in-flight requests (up to 10 s)');
      await daemon?.close(10_000);
      await recorder?.close(); // writes every row still queued
      await flushUsage();
      await team?.close();
      await shared?.close();
      rmSync(join(dir, FILES.daemon), { force: true });
      log('stopped');
      clearInterval(hold);
    })();
    return stopping;
  };

  // `gateway stop` (POST /admin/shutdown) and a signal alike. The drain takes at most 10 s, and
  // every step after it is bounded on a silent store too; whatever still hangs after 15 s must not
  // keep the port. The usage rows are in usage.db (and its outbox) by then: nothing the next start
  // would push is lost.
  const exitAfterStop = () => {
    setTimeout(() => process.exit(1), 15_000).unref();
    void stop().then(() => process.exit(0));
  };

  // Usage history and the dashboard: the store opens before the daemon listens; a store that
  // cannot open costs the history, never the gateway.
  const history: UsageHistory | undefined = await openUsageHistory({ dir, config: startConfig.usage, log })
    .catch((e: unknown) => { log(`usage history disabled: ${(e as Error).message}`); return undefined; });
  let recorder: UsageRecorder | undefined;
  const secrets = createSecretSource({ dir, env: process.env });
  const dashboard = createDashboard({ dir, daemon: () => daemon!, recorder: () => recorder, secrets, log });
  // Telemetry is read once, at start (its exporters are made then); its cost metric uses the usage history's prices.
  const telemetry = parseTelemetry(config.telemetry, process.env);
  for (const w of telemetry.warnings) log(`warning: config.json ${w}`);
  let prices = history?.prices;

  try {
    daemon = await startDaemon({
      host: opts.host, port: opts.port, stateDir: dir, adminToken, log,
      ...(shared ? { shared } : {}),
      secrets,
      ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
      ...(opts.behindProxy ? { behindProxy: opts.behindProxy } : {}),
      origins: originsFromEnv(process.env),
      timeouts: { headersMs: timeoutS * 1000 },
      loadSettings: async () => {
        await team?.sync();
        const c = served();
        reportProblems(c);
        if (c.routing.problems.length === 0) routing = c.routing.settings;
        if (c.cache.problems.length === 0) cache = c.cache.settings;
        // Budgets are charged by the price list the usage history prices by (usage.prices included).
        return { bodyLimitBytes: c.bodyLimitBytes, aliases: c.aliases, responses: c.responses, providers: c.providerDescriptors, routing, cache, prices: usageConfig(c.usage).prices };
      },
      mounts: [dashboard.mount, ...(opts.mounts?.(() => daemon!) ?? [])],
      onShutdown: () => exitAfterStop(),
      telemetry: telemetry.settings,
      prices: () => recorder?.prices ?? (prices ??= usageConfig(startConfig.usage).prices),
    });
  } catch (e) {
    await team?.close();
    await shared?.close(); // a port already taken: nothing of this daemon stays connected
    throw e;
  }
  // A new version of the team's config read from the store (notification, reconnection, backstop): served at once.
  team?.onChange(() => { void daemon!.reload().catch((e: unknown) => log(`reload after a change of the team's config failed: ${(e as Error).message}`)); });
  // A daemon on port 0 is named by the port it got (`<hostname>:0` would be every such daemon's).
  const servedId = opts.port === 0 && !process.env.GATEWAY_DAEMON_ID?.trim() ? daemonIdOf(process.env, daemon.port) : daemonId;
  if (history) {
    recorder = recordUsage(history, daemon.ctx.bus, log, { daemon: servedId, ...(shared ? { shared } : {}), ...(daemon.ctx.answers ? { answers: daemon.ctx.answers } : {}) });
    storeBodies(history, recorder, daemon.ctx, log);
  }

  // Last-used times per key: kept in memory (as ms, formatted when written), written at most every
  // 2 s by the daemon alone.
  const usagePath = join(dir, FILES.keyUsage);
  const lastUsed = new Map<string, number | string>(Object.entries(readJsonSync<Record<string, string>>(usagePath, {})));
  let dirty = false;
  const flushUsage = async () => {
    if (!dirty) return;
    dirty = false;
    const out: Record<string, string> = {};
    for (const [id, t] of lastUsed) out[id] = typeof t === 'number' ? new Date(t).toISOString() : t;
    await writePrivateFile(usagePath, JSON.stringify(out, null, 2)).catch(() => {});
  };
  const flushTimer = setInterval(() => { void flushUsage(); }, 2000);
  flushTimer.unref();
  const started = new Map<string, RequestStarted>();
  daemon.ctx.bus.subscribe((ev) => {
    if (ev.type === 'started') { lastUsed.set(ev.keyId, ev.time); dirty = true; }
    const line = accessLine(ev, started);
    if (line) log(line);
  });

  // Alive in the team from now; a daemon on port 0 is named by the port it got (`<hostname>:0` would be every such daemon's).
  await shared?.startHeartbeat(servedId);
  const info: DaemonFile = {
    pid: process.pid, host: opts.host, port: daemon.port, url: daemon.url, startedAt: new Date().toISOString(),
    ...(tls ? { tlsCert: tls.certFile } : {}), ...(opts.behindProxy?.length ? { behindProxy: opts.behindProxy } : {}),
    ...(shared ? { store: shared.display, daemonId: shared.daemonId } : {}),
  };
  recordStoreUrl(dir, storeUrl);
  if (shared) log(`store: team mode on ${shared.display} as daemon ${shared.daemonId}`);
  writePrivateFileSync(join(dir, FILES.daemon), JSON.stringify(info, null, 2));
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, exitAfterStop);
  return { url: daemon.url, close: stop };
}
