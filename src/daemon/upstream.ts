// The upstream HTTP client: one pooled undici dispatcher per provider origin, with the daemon's
// timeouts, and the mapping of transport failures to gateway errors (502 unreachable, 504 timeout).
import type { ServerResponse } from 'node:http';
import { Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import type { ProviderId } from '../providers/types.js';
import { PROTOCOL_FACTS } from '../providers/protocol-facts.js';
import { BUILTIN_PROVIDERS, provider as descriptor } from '../providers/registry.js';
import { GatewayError } from './errors.js';

/** Each provider's origin, as its registry descriptor gives it. */
export function defaultOrigins(): Record<ProviderId, string> {
  return Object.fromEntries(BUILTIN_PROVIDERS.map((p) => [p.id, p.origin]));
}

export interface UpstreamTimeouts {
  connectMs: number; // 10 s
  headersMs: number; // time to response headers: --upstream-timeout, default 600 s
  idleMs: number; // gap between two body chunks: 5 min
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = { connectMs: 10_000, headersMs: 600_000, idleMs: 300_000 };

/** Origins from each provider's GATEWAY_<P>_BASE_URL (never the SDKs' own OPENAI_BASE_URL etc.). */
export function originsFromEnv(env: NodeJS.ProcessEnv = process.env): Record<ProviderId, string> {
  const out = defaultOrigins();
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
  private pools = new Map<ProviderId, Pool>();
  constructor(readonly origins: Record<ProviderId, string>, readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS) {}

  dispatcher(provider: ProviderId): Pool {
    let pool = this.pools.get(provider);
    if (!pool) {
      const origin = this.origins[provider];
      if (origin === undefined) throw new GatewayError('internal_error', `no origin for provider "${provider}"`);
      pool = new Pool(origin, {
        connections: 256,
        pipelining: 1,
        connectTimeout: this.timeouts.connectMs,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.idleMs,
        keepAliveTimeout: 30_000,
      });
      this.pools.set(provider, pool);
    }
    return pool;
  }

  request(provider: ProviderId, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
    return this.dispatcher(provider).request(opts);
  }

  /** A transport failure of a call to `provider`, as the client sees it (see upstreamFailure). */
  failure(provider: ProviderId, err: unknown, cut?: 'stream' | 'response'): GatewayError {
    return upstreamFailure(provider, this.origins[provider] ?? '', err, cut, this.timeouts);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => p.destroy())));
    this.pools.clear();
  }
}

/** Sets the provider's own credential on headers going upstream, the way its descriptor says. */
export function setProviderAuth(provider: ProviderId, headers: Record<string, string | string[]>, key: string): void {
  const { auth } = descriptor(provider);
  headers[auth.header] = auth.scheme ? `${auth.scheme} ${key}` : key;
}

/** The protocol's default headers (Anthropic's version) where the client sent none. */
export function addProtocolHeaders(provider: ProviderId, headers: Record<string, string | string[]>): void {
  const defaults = PROTOCOL_FACTS[descriptor(provider).protocol].defaultHeaders;
  for (const name in defaults) if (headers[name] === undefined) headers[name] = defaults[name]!;
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
