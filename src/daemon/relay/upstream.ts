// The upstream HTTP client: one pooled undici dispatcher per provider, to the origin its descriptor
// names (a provider whose base URL changes gets a new pool), with the daemon's timeouts, and the
// mapping of transport failures to gateway errors (502 unreachable, 504 timeout).
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import type { ProviderId } from '../../providers/types.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { BUILTIN_PROVIDERS, findProvider, provider as descriptor } from '../../providers/registry.js';
import { GatewayError } from '../http/errors.js';
import { forwardRequestHeaders } from '../http/http-util.js';


export interface UpstreamTimeouts {
  connectMs: number; // 10 s
  headersMs: number; // time to response headers: --upstream-timeout, default 600 s
  idleMs: number; // gap between two body chunks: 5 min
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = { connectMs: 10_000, headersMs: 600_000, idleMs: 300_000 };

/** Origins from each provider's GATEWAY_<P>_BASE_URL (never the SDKs' own OPENAI_BASE_URL etc.). */
export function originsFromEnv(env: NodeJS.ProcessEnv = process.env): Record<ProviderId, string> {
  const out: Record<ProviderId, string> = {};
  for (const p of BUILTIN_PROVIDERS) {
    const v = env[p.baseUrlEnv];
    if (v) out[p.id] = normalizeOrigin(v, p.baseUrlEnv);
  }
  return out;
}

export function normalizeOrigin(value: string, what: string): string {
  let u: URL;
  try { u = new URL(value); } catch { throw new Error(`${what} must be an http(s) origin like https://api.example.com, got "${value}"`); }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${what} must use http or https, got "${value}"`);
  if (u.pathname !== '/' && u.pathname !== '') throw new Error(`${what} must be an origin only (no path): the daemon appends the path itself; got "${value}"`);
  return u.origin;
}

export class Upstreams {
  private pools = new Map<ProviderId, { origin: string; pool: Pool }>();
  /** `overrides`: provider id → origin, instead of the descriptor's (GATEWAY_<P>_BASE_URL, tests' mocks). */
  constructor(readonly overrides: Record<ProviderId, string> = {}, readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS) {}

  /** Where a provider's requests go: an override, else its descriptor's origin. */
  origin(provider: ProviderId): string | undefined {
    return this.overrides[provider] ?? findProvider(provider)?.origin;
  }

  dispatcher(provider: ProviderId): Pool {
    const origin = this.origin(provider);
    if (origin === undefined) throw new GatewayError('internal_error', `no origin for provider "${provider}"`);
    const entry = this.pools.get(provider);
    if (entry?.origin === origin) return entry.pool;
    // A new provider, or one whose base URL changed: requests already sent finish on the old pool.
    if (entry) void entry.pool.close().catch(() => entry.pool.destroy());
    {
      const pool = new Pool(origin, {
        connections: 256,
        pipelining: 1,
        connectTimeout: this.timeouts.connectMs,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.idleMs,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(provider, { origin, pool });
      return pool;
    }
  }

  /** Closes the pools of providers no longer in the registry (removed by the user). */
  prune(): void {
    for (const [id, { pool }] of this.pools) {
      if (findProvider(id)?.id === id) continue;
      this.pools.delete(id);
      void pool.close().catch(() => pool.destroy());
    }
  }

  request(provider: ProviderId, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    return this.dispatcher(provider).request(opts);
  }

  /** A transport failure of a call to `provider`, as the client sees it (see upstreamFailure). */
  failure(provider: ProviderId, err: unknown, cut?: 'stream' | 'response'): GatewayError {
    return upstreamFailure(provider, this.origin(provider) ?? '', err, cut, this.timeouts);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map(({ pool }) => pool.close().catch(() => pool.destroy())));
    this.pools.clear();
  }
}

/**
 * Sets the provider's own credential on headers going upstream, the way its descriptor says; a
 * provider that takes no key gets none (the client's were already dropped by forwardRequestHeaders).
 */
function setProviderAuth(provider: ProviderId, headers: Record<string, string | string[]>, key: string): void {
  const { auth } = descriptor(provider);
  if (!auth) return;
  headers[auth.header] = auth.scheme ? `${auth.scheme} ${key}` : key;
}

/** The protocol's default headers (Anthropic's version) and the provider's configured ones, where the client sent none. */
function addProtocolHeaders(provider: ProviderId, headers: Record<string, string | string[]>): void {
  const d = descriptor(provider);
  const defaults = PROTOCOL_FACTS[d.protocol].defaultHeaders;
  for (const name in defaults) if (headers[name] === undefined) headers[name] = defaults[name]!;
  for (const name in d.headers) if (headers[name] === undefined) headers[name] = d.headers[name]!;
}

/**
 * A client's request headers as its provider gets them (the fast paths, native pass-through):
 * hop-by-hop headers and every client credential gone, the provider's own key and protocol headers
 * set, and no compression asked for (loopback needs none, and an identity body lets usage be read).
 */
export function providerHeaders(provider: ProviderId, clientHeaders: IncomingHttpHeaders, key: string): Record<string, string | string[]> {
  const headers = forwardRequestHeaders(clientHeaders);
  setProviderAuth(provider, headers, key);
  addProtocolHeaders(provider, headers);
  headers['accept-encoding'] = 'identity';
  return headers;
}

/**
 * Headers for a call the gateway itself makes (unified requests, model lists, key tests): nothing
 * of the client's, an identity body we can read, the protocol's defaults, the key.
 */
export function gatewayCallHeaders(provider: ProviderId, key: string, headers: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { 'accept-encoding': 'identity', ...headers };
  addProtocolHeaders(provider, h);
  setProviderAuth(provider, h, key);
  return h;
}

/**
 * Maps a transport failure to the error the client sees. `cut`: the provider had already answered
 * (sent its status line), then broke off that stream or response: it was reached, so this is not
 * "cannot reach".
 */
export function upstreamFailure(
  provider: ProviderId, origin: string, err: unknown, cut?: 'stream' | 'response', timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
): GatewayError {
  const name = descriptor(provider).displayName;
  if (err instanceof undiciErrors.ConnectTimeoutError) return new GatewayError('upstream_timeout', `${name} (${origin}) did not accept the connection within ${seconds(timeouts.connectMs)}`);
  if (err instanceof undiciErrors.HeadersTimeoutError) return new GatewayError('upstream_timeout', `${name} did not answer within the upstream timeout of ${seconds(timeouts.headersMs)} (set with gateway start --upstream-timeout <seconds>)`);
  if (err instanceof undiciErrors.BodyTimeoutError) return new GatewayError('upstream_timeout', `${name} stopped sending for ${seconds(timeouts.idleMs)}`);
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  const detail = code ? ` (${code})` : '';
  if (cut) return new GatewayError('upstream_interrupted', `${name} broke off the ${cut} after answering${detail}`);
  return new GatewayError('upstream_unreachable', `cannot reach ${name} at ${origin}${detail}`);
}

/** `10 s`, `5 min`: a configured timeout as a person reads it. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return s >= 60 && s % 60 === 0 ? `${s / 60} min` : `${s} s`;
}

/**
 * The part every upstream call of a client request shares: a client that goes away before the
 * exchange is settled aborts the upstream request through undici's controller, or, when undici
 * has not started the request yet, as soon as it does.
 */
export abstract class ClientBoundCall implements Dispatcher.DispatchHandler {
  protected controller: Dispatcher.DispatchController | undefined;
  protected clientGone = false;
  protected settled = false;

  constructor(res: ServerResponse) {
    res.on('close', () => {
      if (res.writableFinished || this.settled) return;
      this.clientGone = true;
      this.controller?.abort(new Error('client closed the connection'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.clientGone) controller.abort(new Error('client closed the connection'));
  }
}
