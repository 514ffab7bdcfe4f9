// The daemon's HTTP server: the route table and the one error boundary. `startDaemon(deps)` takes
// everything injectable (state dir, secret source, upstream origins, clock) so tests run it on
// port 0 against mock providers on loopback.
import { VERSION } from '../version.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { ProviderId } from '../providers/types.js';
import { PROTOCOL_FACTS } from '../providers/protocol-facts.js';
import { allProviders, findProvider, setConfiguredProviders, type ProviderDescriptor } from '../providers/registry.js';
import { FILES } from './store/paths.js';
import { watchStateFile } from './store/watch-file.js';
import { CHAT_DOOR } from './doors/chat.js';
import { MESSAGES_DOOR } from './doors/messages.js';
import { runDoor } from './doors/runner.js';
import { handleAdmin, type AdminHooks } from './admin/admin.js';
import { KeyIndex } from './access/auth.js';
import type { DaemonContext, DaemonSettings } from './context.js';
import { GatewayError, sendError, type Protocol } from './http/errors.js';
import { EventBus } from './observe/events.js';
import { Breaker } from './routing/breaker.js';
import { Sessions } from './routing/sessions.js';
import { assertPlainPath, splitTarget } from './http/http-util.js';
import { handleNative } from './relay/passthrough.js';
import { ProviderKeys } from './access/provider-keys.js';
import { SESSION_LEASE_MS } from './access/session-keys.js';
import type { SecretSource } from './store/secrets.js';
import { newRequestFacts, publishRefusal, Stats, type RequestFacts } from './observe/tracker.js';
import { handleModel, handleModels, modelsShape } from './doors/models-list.js';
import { isGooglePath, isModelsPath, modelRoute } from './doors/model-routes.js';
import { GEMINI_DOOR, geminiCall } from './doors/gemini.js';
import { handleStoredResponse, RESPONSES_DOOR } from './doors/responses.js';
import { parseResponsesSettings, SqliteResponseStore } from './store/responses.js';
import { PgResponseStore } from './store/pg-responses.js';
import { DEFAULT_TIMEOUTS, Upstreams, type UpstreamTimeouts } from './relay/upstream.js';
import { Limiter, LONGEST_ANSWER_MS } from './limits/limiter.js';
import { TeamLimitStore } from './limits/team-store.js';
import { FileKeyRecords } from './store/key-records.js';
import { keysRecheckMs, PgKeyRecords } from './store/pg-keys.js';
import type { SharedStore } from './store/shared-store.js';
import { buildPriceTable, readShippedPrices, type PriceTable } from './observe/usage/prices.js';
import { METRICS_PATH, startTelemetry, TELEMETRY_DEFAULTS, type TelemetrySettings } from './telemetry/index.js';
import { exposureOf, type Exposure } from './http/exposure.js';
import { notePeer, peerOf } from './http/peer.js';
import { AnswerGate } from './http/answer-gate.js';


/** A handler mounted by another module (dashboard, usage API); returns false when the path is not its. */
export type Mount = (req: IncomingMessage, res: ServerResponse, path: string, query: string) => Promise<boolean> | boolean;

export interface DaemonOptions {
  host?: string;
  port?: number;
  stateDir: string;
  secrets: SecretSource;
  /** Provider id → origin, overriding the registry's (tests point these at mocks). */
  origins?: Record<ProviderId, string>;
  timeouts?: Partial<UpstreamTimeouts>;
  settings?: Partial<DaemonSettings>;
  /** Reads settings again on /admin/reload (config.json; in team mode after catching up with the store). */
  loadSettings?: () => Partial<DaemonSettings> | Promise<Partial<DaemonSettings>>;
  adminToken?: string;
  now?: () => number;
  /** Milliseconds since the epoch, what key expiry is judged by (tests move it instead of sleeping). */
  clock?: () => number;
  log?: (line: string) => void;
  /** Extra routes under /admin/* and /dashboard*, tried in order before the built-in 404. */
  mounts?: Mount[];
  /** Called by POST /admin/shutdown after the response is sent. */
  onShutdown?: () => void;
  /** How long a session key (chat, run) lives without a renewal; default SESSION_LEASE_MS. */
  sessionLeaseMs?: number;
  /** Metrics and traces (config.json `telemetry`, telemetry/settings.ts); default: /metrics on, no OTLP. */
  telemetry?: TelemetrySettings;
  /** The usage history's price table, for the cost metric. */
  prices?: () => PriceTable | undefined;
  /** Serve HTTPS with this certificate and key (PEM): required, or behindProxy, to listen beyond loopback. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** The TLS-terminating reverse proxies' IP addresses: their X-Forwarded-For/-Proto are believed. */
  behindProxy?: readonly string[];
  /** Team mode: the shared store, opened (and migrated) by the caller, closed with the daemon. */
  shared?: SharedStore;
  /** Team mode: how often every key is re-read whatever was heard (default KEYS_RECHECK_MS, or GATEWAY_KEYS_RECHECK_SECONDS). */
  keysRecheckMs?: number;
}

export interface RunningDaemon {
  url: string;
  port: number;
  host: string;
  ctx: DaemonContext;
  adminToken: string;
  /** Who can reach it: loopback only, over TLS, behind which proxies. */
  exposure: Exposure;
  reload(): Promise<void>;
  /** Stops accepting, lets in-flight requests finish for up to `drainMs`, then closes. */
  close(drainMs?: number): Promise<void>;
}

/** The provider whose native prefix starts `path` (`/<id>/…`, the id exactly), if any. */
function nativePrefix(path: string): ProviderDescriptor | undefined {
  const slash = path.indexOf('/', 1);
  if (slash === -1) return undefined;
  const d = findProvider(path.slice(1, slash));
  return d && d.id === path.slice(1, slash) ? d : undefined;
}

/** The error shape of the route `path` falls under: its prefix's or door's protocol, else OpenAI's. */
function protocolFor(path: string, req: IncomingMessage): Protocol {
  const d = nativePrefix(path);
  if (d) return PROTOCOL_FACTS[d.protocol].errorShape;
  // Only Google's API lives under /v1beta; /v1/models answers in the shape its client reads.
  if (isGooglePath(path)) return PROTOCOL_FACTS[GEMINI_DOOR.protocol].errorShape;
  if (isModelsPath(path)) return modelsShape(req, { version: 'v1' });
  if (path === MESSAGES_DOOR.path || path.startsWith(`${MESSAGES_DOOR.path}/`)) return PROTOCOL_FACTS[MESSAGES_DOOR.protocol].errorShape;
  return 'openai';
}

/** The TLS context of `tls`, checked before anything else starts; a one-line error when the PEM cannot be used. */
function tlsOptions(tls: NonNullable<DaemonOptions['tls']>): { cert: string | Buffer; key: string | Buffer } {
  try {
    createSecureContext(tls);
  } catch (e) {
    throw new Error(`the TLS certificate and key cannot be used together: ${(e as Error).message}`);
  }
  return tls;
}

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const host = opts.host ?? '127.0.0.1';
  // Refused before anything opens: a plain-HTTP bind beyond loopback, a certificate that cannot serve.
  const exposure = exposureOf(host, opts.tls !== undefined, opts.behindProxy ?? []);
  const tls = opts.tls ? tlsOptions(opts.tls) : undefined;
  const log = opts.log ?? (() => {});
  // Team mode's keys are the shared store's (every daemon's at once); a laptop's are keys.json.
  const keyStore = opts.shared ? new PgKeyRecords(opts.shared, { recheckMs: opts.keysRecheckMs ?? keysRecheckMs(process.env) }) : new FileKeyRecords(opts.stateDir);
  const keys = new KeyIndex(opts.stateDir, opts.clock, keyStore);
  keys.watch(); // before the first load: a change made meanwhile is heard, not missed
  // A shared store that cannot give its keys at start stops the start (there is nothing to keep serving).
  await keys.reload({ strict: opts.shared !== undefined }).catch((e: unknown) => { keys.close(); throw e; });
  if (opts.shared) {
    // A laptop's keys do not follow it into a team by themselves: say so rather than let them fail unexplained.
    const left = await new FileKeyRecords(opts.stateDir).list().catch(() => []);
    if (left.length > 0) log(`warning: team mode: the ${left.length} key(s) in ${FILES.keys} are not used; keys live in the store at ${opts.shared.display} now`);
  }
  const settings: DaemonSettings = { bodyLimitBytes: 32 * 1024 * 1024, aliases: {}, ...opts.settings, ...(await opts.loadSettings?.()) };
  if (settings.providers) setConfiguredProviders(settings.providers);
  const providerKeys = new ProviderKeys(opts.secrets);
  await providerKeys.reload();
  const clock = opts.clock ?? Date.now;
  const responsesConfig = parseResponsesSettings(settings.responses);
  for (const w of responsesConfig.warnings) log(w);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  let shipped: PriceTable | undefined;
  // Team mode: PostgreSQL while it answers, each daemon's share of every limit while it does not.
  const teamLimits = opts.shared ? new TeamLimitStore({ shared: opts.shared, stateDir: opts.stateDir, clock, log }) : undefined;
  const ctx: DaemonContext = {
    keys, providerKeys, settings, clock,
    ...(opts.shared ? { shared: opts.shared } : {}),
    responses: opts.shared
      ? new PgResponseStore(opts.shared, responsesConfig.settings, { clock, log })
      : new SqliteResponseStore(opts.stateDir, responsesConfig.settings, clock, log),
    upstreams: new Upstreams({ ...opts.origins }, timeouts),
    limits: new Limiter({
      stateDir: opts.stateDir, clock, log,
      ...(teamLimits ? { open: async () => teamLimits, report: () => teamLimits.report() } : {}),
      prices: () => settings.prices ?? (shipped ??= buildPriceTable(readShippedPrices()).table),
      // A claim outlives any answer still arriving (the upstream timeouts, then the longest stream); one past them belonged to a request that vanished.
      holdMs: () => timeouts.connectMs + timeouts.headersMs + LONGEST_ANSWER_MS,
    }),
    bus: new EventBus(),
    breaker: new Breaker(clock),
    sessions: new Sessions(clock),
    stats: new Stats(),
    now: opts.now ?? (() => Math.floor(Date.now() / 1000)),
  };
  // Team mode: answers wait for their usage rows' journal write (http/answer-gate.ts).
  if (opts.shared) ctx.answers = new AnswerGate(() => ctx.stats.inFlight);
  if (teamLimits) ctx.limits.warm();
  const adminToken = opts.adminToken ?? (await import('node:crypto')).randomBytes(32).toString('base64url');
  const telemetry = await startTelemetry(ctx, { settings: opts.telemetry ?? TELEMETRY_DEFAULTS, prices: opts.prices, host, adminToken, log });
  let draining = false;

  // Settings first: a provider added, changed or removed in config.json is in the registry before
  // its key is looked up, and a removed one's connections are closed.
  const reload = async () => {
    if (opts.loadSettings) Object.assign(settings, await opts.loadSettings());
    if (settings.providers) setConfiguredProviders(settings.providers);
    ctx.upstreams.prune();
    await keys.reload();
    await providerKeys.reload();
    ctx.responses.setSettings(parseResponsesSettings(settings.responses).settings);
  };
  // config.json edited by hand (or by a CLI whose /admin/reload did not arrive) is picked up too.
  const configWatch = opts.loadSettings
    ? watchStateFile(opts.stateDir, FILES.config, () => { void reload().catch((e: unknown) => log(`reload after a config.json change failed: ${(e as Error).message}`)); }, 50)
    : undefined;
  const hooks: AdminHooks = { adminToken, version: VERSION, reload, onShutdown: () => opts.onShutdown?.(), url: () => url, sessionLeaseMs: opts.sessionLeaseMs ?? SESSION_LEASE_MS };

  // `seen.facts`: what the handlers learned before a tracker took over, to report a refusal.
  const route = async (req: IncomingMessage, res: ServerResponse, seen: { facts?: RequestFacts }): Promise<void> => {
    const { path, query } = splitTarget(req.url);
    // Under /v1(beta)/models the model id is a lookup key, decoded and checked by modelRoute (it
    // may hold an encoded slash); every other path must be plain.
    const models = modelRoute(path);
    if (models === undefined) assertPlainPath(path);
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (path === METRICS_PATH && telemetry.scrape) {
      telemetry.scrape(req, res);
      return;
    }
    if (path.startsWith('/admin/') || path === '/dashboard' || path.startsWith('/dashboard/')) {
      for (const m of opts.mounts ?? []) if (await m(req, res, path, query)) return;
      if (await handleAdmin(ctx, hooks, req, res, path)) return;
      throw new GatewayError('not_found', `no route for ${req.method} ${path}`);
    }
    if (draining) throw new GatewayError('shutting_down', 'the gateway is shutting down');
    const native = nativePrefix(path);
    if (native) {
      seen.facts = newRequestFacts('native', native.id);
      await handleNative(ctx, native.id, req, res, path.slice(native.id.length + 1), query, seen.facts);
      return;
    }
    if (path === `${MESSAGES_DOOR.path}/count_tokens`) {
      seen.facts = newRequestFacts(MESSAGES_DOOR.mode, null);
      if (req.method !== 'POST') throw new GatewayError('method_not_allowed', `use POST for ${path}`);
      await runDoor(ctx, MESSAGES_DOOR, req, res, query, seen.facts, { count: true, path, stream: false });
      return;
    }
    if (path === MESSAGES_DOOR.path) {
      seen.facts = newRequestFacts(MESSAGES_DOOR.mode, null);
      if (req.method !== 'POST') throw new GatewayError('method_not_allowed', `use POST for ${MESSAGES_DOOR.path}`);
      await runDoor(ctx, MESSAGES_DOOR, req, res, query, seen.facts);
      return;
    }
    if (path === CHAT_DOOR.path) {
      seen.facts = newRequestFacts(CHAT_DOOR.mode, null);
      if (req.method !== 'POST') throw new GatewayError('method_not_allowed', `use POST for ${CHAT_DOOR.path}`);
      await runDoor(ctx, CHAT_DOOR, req, res, query, seen.facts);
      return;
    }
    if (path === RESPONSES_DOOR.path) {
      seen.facts = newRequestFacts(RESPONSES_DOOR.mode, null);
      // Codex's built-in OpenAI provider first asks for a WebSocket here; 426 is the answer it
      // takes to mean "use HTTP" at once (others make it retry for about 6 s first).
      if (req.method === 'GET' && req.headers.upgrade?.toLowerCase() === 'websocket') throw new GatewayError('upgrade_required', `the gateway serves ${RESPONSES_DOOR.path} over HTTP only (POST), not WebSocket`);
      if (req.method !== 'POST') throw new GatewayError('method_not_allowed', `use POST for ${RESPONSES_DOOR.path}`);
      await runDoor(ctx, RESPONSES_DOOR, req, res, query, seen.facts);
      return;
    }
    if (path.startsWith(`${RESPONSES_DOOR.path}/`)) {
      await handleStoredResponse(ctx, req, res, path.slice(RESPONSES_DOOR.path.length + 1), query);
      return;
    }
    if (models?.method !== undefined && models.id !== undefined) {
      seen.facts = newRequestFacts(GEMINI_DOOR.mode, null);
      if (req.method !== 'POST') throw new GatewayError('method_not_allowed', `use POST for /${models.version}/models/{model}:${models.method}`);
      await runDoor(ctx, GEMINI_DOOR, req, res, query, seen.facts, geminiCall({ ...models, id: models.id, method: models.method }, path, query));
      return;
    }
    if (models !== undefined) {
      if (req.method !== 'GET') {
        throw new GatewayError('method_not_allowed', `use GET for /${models.version}/models${models.id === undefined ? '' : '/{model}'}; the gateway serves POST /${models.version}/models/{model}:generateContent, :streamGenerateContent and :countTokens (every other Gemini method under /gemini/…)`);
      }
      if (models.id === undefined) await handleModels(ctx, req, res, models, query);
      else await handleModel(ctx, req, res, { ...models, id: models.id }, query);
      return;
    }
    throw new GatewayError('not_found', `no route for ${req.method} ${path}: the gateway serves /v1/chat/completions, /v1/messages, /v1/responses, /v1/models, /v1/models/{model}, /v1beta/models/{model}:generateContent (and :streamGenerateContent, :countTokens), and ${allProviders().map((p) => `/${p.id}/…`).join(', ')}`);
  };

  const serverOptions = { keepAliveTimeout: 30_000, requestTimeout: 0, headersTimeout: 60_000 };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    notePeer(req, exposure);
    const seen: { facts?: RequestFacts } = {};
    route(req, res, seen).catch((err: unknown) => {
      const path = (req.url ?? '/').split('?', 1)[0]!;
      const ge = err instanceof GatewayError ? err : new GatewayError('internal_error', 'internal gateway error');
      if (!(err instanceof GatewayError)) log(`internal error on ${req.method} ${path}: ${(err as Error)?.stack ?? String(err)}`);
      if (seen.facts && !seen.facts.tracked) {
        publishRefusal(ctx.bus, ctx.stats, seen.facts, { method: req.method ?? 'GET', path, headers: req.headers, client: peerOf(req).client }, { status: ge.status, code: ge.code, message: ge.message });
      }
      if (res.headersSent) { res.destroy(); return; }
      // Drain what the client still sends so the error reaches it instead of a reset.
      if (!req.complete) req.resume();
      sendError(res, ge, protocolFor(path, req));
    });
  };
  const responses = ctx.answers ? { ServerResponse: ctx.answers.Response } : {};
  const server = tls ? createTlsServer({ ...serverOptions, ...responses, ...tls }, handle) : createServer({ ...serverOptions, ...responses }, handle);

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        const e = new Error(`port ${opts.port ?? 8080} is already in use on ${host}`) as NodeJS.ErrnoException;
        e.code = 'EADDRINUSE';
        reject(e);
      } else reject(err);
    };
    server.once('error', onError);
    server.listen(opts.port ?? 8080, host, () => { server.off('error', onError); resolve(); });
  }).catch(async (e: unknown) => { keys.close(); await telemetry.close(); await ctx.limits.close(); throw e; });
  const port = (server.address() as AddressInfo).port;
  const url = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log(`listening on ${url}${exposure.proxies.length > 0 ? ` behind the reverse proxy at ${exposure.proxies.join(', ')}` : ''}`);

  return {
    url, port, host, ctx, adminToken, exposure, reload,
    async close(drainMs = 10_000) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await ctx.stats.idle(drainMs);
      server.closeAllConnections();
      await closed;
      keys.close();
      configWatch?.close();
      await ctx.responses.close();
      await ctx.limits.close();
      await ctx.upstreams.close();
      await telemetry.close();
    },
  };
}

