// Providers for the dashboard and `/admin/providers`: where each key comes from (never the key:
// at most its last four characters), storing a pasted key once into the OS keychain, and a test
// that asks the provider's models endpoint whether the key the daemon holds is accepted; with each
// provider's key pool (labels, masked, resting or refused) and its open circuit breakers.
import type { ProviderId } from '../../providers/types.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { allProviders, findProvider, provider as descriptor, providerIds, upstreamPath } from '../../providers/registry.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { gatewayCallHeaders } from '../relay/upstream.js';
import { deleteInsecureSecret, type GatewaySecretSource } from '../store/secret-source.js';
import type { SecretOrigin } from '../store/secrets.js';
import type { PoolKeyReport } from '../access/provider-keys.js';
import { ApiError } from './http.js';

export interface ProviderView {
  provider: ProviderId;
  configured: boolean;
  origin: SecretOrigin | null;
  last4: string | null;
  envVar: string;
  shadowed: SecretOrigin[];
  /** Where its requests go: origin and base path. */
  baseUrl: string;
  protocol: string;
  source: 'builtin' | 'configured';
  /** Added with --no-key: it takes no key (and `configured` is true). */
  keyless: boolean;
  quirks: string | null;
  /** Every key the daemon holds for it (a pool has several): label, masked form, state; never a key. */
  keys: PoolKeyReport[];
  /** Its targets the circuit breaker passes over now (`provider/model`, or the provider when unreachable), and until when (ISO). */
  breakers: Array<{ target: string; until: string }>;
}

export interface KeychainView { available: boolean; name: string | null; survivesReboot: boolean; error: string | null }

export interface ProviderDeps {
  dir: string;
  secrets: GatewaySecretSource;
  ctx: () => DaemonContext;
  /** Re-reads provider keys (and the rest) in the daemon. */
  reload: () => Promise<void>;
}

const last4 = (key: string): string | null => (key.length >= 12 ? key.slice(-4) : null);

export function providerParam(p: string): ProviderId {
  const d = findProvider(p);
  if (!d) throw new ApiError(404, 'unknown_provider', `no provider "${p}" (${providerIds().join(', ')})`);
  return d.id;
}

export async function keychainView(secrets: GatewaySecretSource): Promise<KeychainView> {
  try {
    const b = await secrets.keychain.backend();
    return { available: true, name: b.name, survivesReboot: b.survivesReboot, error: null };
  } catch (e) {
    return { available: false, name: null, survivesReboot: false, error: (e as Error).message };
  }
}

export async function listProviders(deps: ProviderDeps): Promise<{ keychain: KeychainView; providers: ProviderView[] }> {
  const ctx = deps.ctx();
  const upstreams = ctx.upstreams;
  const open = ctx.breaker.open();
  const providers = allProviders();
  // A provider that takes no key has nothing to look up.
  const [keychain, lookups] = await Promise.all([keychainView(deps.secrets), Promise.all(providers.map((p) => (p.auth ? deps.secrets.inspect(p.id) : undefined)))]);
  return {
    keychain,
    providers: providers.map((p, i) => {
      const l = lookups[i];
      return {
        provider: p.id,
        configured: !p.auth || Boolean(l?.secret),
        origin: l?.secret?.origin ?? null,
        last4: l?.secret ? last4(l.secret.key) : null,
        envVar: p.keyEnv,
        shadowed: l?.shadowed ?? [],
        baseUrl: `${upstreams.origin(p.id) ?? ''}${p.basePath}`,
        protocol: p.protocol,
        source: p.source,
        keyless: !p.auth,
        quirks: p.quirks ?? null,
        keys: ctx.providerKeys.states(p.id),
        breakers: open.filter((b) => b.key === p.id || b.key.startsWith(`${p.id}/`)).map((b) => ({ target: b.key, until: new Date(b.until).toISOString() })),
      };
    }),
  };
}

/** Stores a pasted key in the keychain (never on disk in clear), then reloads the daemon's keys. */
export async function storeProviderKey(deps: ProviderDeps, provider: ProviderId, body: Record<string, unknown>) {
  const raw = body.key;
  if (typeof raw !== 'string' || !raw.trim()) throw new ApiError(400, 'invalid_request', 'send the key as {"key": "…"}');
  const key = raw.trim();
  if (/\s/.test(key)) throw new ApiError(400, 'invalid_request', 'the key contains whitespace or a line break; paste only the key itself');
  if (key.startsWith('sk-proxy-')) throw new ApiError(400, 'invalid_request', 'that is a gateway proxy key (sk-proxy-…), not a provider key; paste the key from the provider\'s console');
  if (key.length > 1024) throw new ApiError(400, 'invalid_request', 'that is too long to be an API key');
  let backend;
  try {
    backend = await deps.secrets.keychain.backend();
    await deps.secrets.keychain.set(provider, key);
  } catch (e) {
    throw new ApiError(409, 'keychain_unavailable', `cannot store the key in a keychain: ${(e as Error).message}. Set it from a terminal instead: gateway providers set ${provider} --insecure-storage`);
  }
  deleteInsecureSecret(deps.dir, provider);
  await deps.reload();
  const envVar = descriptor(provider).keyEnv;
  const env = process.env[envVar];
  return {
    stored: true, provider, origin: 'keychain' as const, backend: backend.name, last4: last4(key),
    warnings: [
      ...(key.startsWith(descriptor(provider).keyPrefix) ? [] : [`${provider} keys usually start with "${descriptor(provider).keyPrefix}"; stored anyway`]),
      ...(env ? [`${envVar} is set in the daemon's environment and overrides the stored key`] : []),
      ...(backend.survivesReboot ? [] : [`the ${backend.name} does not survive a reboot`]),
    ],
  };
}

export interface ProviderTest { provider: ProviderId; ok: boolean; status: number | null; latencyMs: number | null; models: number | null; message: string }

function errorMessage(text: string): string | undefined {
  try {
    const j = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof j.error === 'object' ? j.error?.message : j.error ?? j.message;
    return typeof m === 'string' ? m.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}

/** Lists the provider's models with the key the daemon holds: the cheapest call that proves the key. */
export async function testProvider(ctx: DaemonContext, provider: ProviderId): Promise<ProviderTest> {
  let key: string;
  try {
    key = await ctx.providerKeys.require(provider);
  } catch (e) {
    return { provider, ok: false, status: null, latencyMs: null, models: null, message: e instanceof GatewayError ? e.message : 'no key configured' };
  }
  const headers = gatewayCallHeaders(provider, key, { accept: 'application/json' });
  const t0 = performance.now();
  try {
    const res = await ctx.upstreams.request(provider, { method: 'GET', path: upstreamPath(descriptor(provider), descriptor(provider).modelsPath), headers, signal: AbortSignal.timeout(15_000) });
    const text = await res.body.text();
    const latencyMs = Math.round(performance.now() - t0);
    if (res.statusCode === 200) {
      let models: number | null = null;
      try {
        const j = JSON.parse(text) as { data?: unknown[]; models?: unknown[] };
        const list = j.data ?? j.models;
        models = Array.isArray(list) ? list.length : null;
      } catch { /* a 200 is what matters */ }
      const works = descriptor(provider).auth ? 'the key works' : 'it answers';
      return { provider, ok: true, status: 200, latencyMs, models, message: models === null ? works : `${works}: ${models} models available` };
    }
    const why = errorMessage(text);
    const rejected = res.statusCode === 401 || res.statusCode === 403 || (res.statusCode === 400 && PROTOCOL_FACTS[descriptor(provider).protocol].badKey400?.test(text) === true);
    return {
      provider, ok: false, status: res.statusCode, latencyMs, models: null,
      message: `${rejected ? 'the provider rejected the key' : `the provider answered HTTP ${res.statusCode}`}${why ? `: ${why}` : ''}`,
    };
  } catch (e) {
    const msg = (e as Error).name === 'TimeoutError' ? 'no answer within 15 s' : ctx.upstreams.failure(provider, e).message;
    return { provider, ok: false, status: null, latencyMs: null, models: null, message: msg };
  }
}
