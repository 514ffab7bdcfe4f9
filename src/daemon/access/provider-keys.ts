// The provider keys the daemon holds in memory: loaded from the secret source at start and on
// reload; a provider without a key is looked up again on demand (the user may just have set it).
import type { ProviderId } from '../../providers/types.js';
import { GatewayError } from '../http/errors.js';
import type { ProviderSecret, SecretOrigin, SecretSource } from '../store/secrets.js';
import { allProviders, provider as descriptor } from '../../providers/registry.js';

/** Where the daemon's key for a provider comes from; `none` when it holds none. */
export type KeyOrigin = SecretOrigin | 'none';

export class ProviderKeys {
  private keys = new Map<ProviderId, ProviderSecret>();
  constructor(private source: SecretSource) {}

  async reload(): Promise<void> {
    const next = new Map<ProviderId, ProviderSecret>();
    for (const p of allProviders()) {
      if (!p.auth) continue; // takes no key: never looked up
      const s = await this.source.get(p.id).catch(() => undefined);
      if (s) next.set(p.id, s);
    }
    this.keys = next;
  }

  /** The key strings held now: what the body log redacts. Never to be logged or sent anywhere. */
  values(): string[] { return [...this.keys.values()].map((s) => s.key); }

  /** The key held in memory for a provider, if any (no lookup). */
  cached(p: ProviderId): string | undefined { return this.keys.get(p)?.key; }

  /**
   * Where each key held now came from, for every provider that takes one (never the key): the
   * daemon's own environment may hold keys the shell asking does not, so `doctor` asks this.
   */
  origins(): Record<ProviderId, KeyOrigin> {
    const out: Record<ProviderId, KeyOrigin> = {};
    for (const p of allProviders()) if (p.auth) out[p.id] = this.keys.get(p.id)?.origin ?? 'none';
    return out;
  }

  /** The key for a provider, or the 503 telling the user which command fixes it. */
  async require(p: ProviderId): Promise<string> {
    const cached = this.keys.get(p)?.key;
    if (cached) return cached;
    // A provider that takes no key gets none (setProviderAuth sends nothing for it).
    if (!descriptor(p).auth) return '';
    const s = await this.source.get(p).catch(() => undefined);
    if (s) { this.keys.set(p, s); return s.key; }
    throw new GatewayError('provider_not_configured', `no ${descriptor(p).displayName} API key is configured in the gateway; run: gateway providers set ${p}`);
  }
}

