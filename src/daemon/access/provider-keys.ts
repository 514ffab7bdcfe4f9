// The provider keys the daemon holds in memory: loaded from the secret source at start and on
// reload; a provider without a key is looked up again on demand (the user may just have set it).
import type { ProviderId } from '../../providers/types.js';
import { GatewayError } from '../http/errors.js';
import type { SecretSource } from '../store/secrets.js';
import { allProviders, provider as descriptor } from '../../providers/registry.js';

export class ProviderKeys {
  private keys = new Map<ProviderId, string>();
  constructor(private source: SecretSource) {}

  async reload(): Promise<void> {
    const next = new Map<ProviderId, string>();
    for (const p of allProviders()) {
      if (!p.auth) continue; // takes no key: never looked up
      const s = await this.source.get(p.id).catch(() => undefined);
      if (s) next.set(p.id, s.key);
    }
    this.keys = next;
  }

  /** The key strings held now: what the body log redacts. Never to be logged or sent anywhere. */
  values(): string[] { return [...this.keys.values()]; }

  /** The key held in memory for a provider, if any (no lookup). */
  cached(p: ProviderId): string | undefined { return this.keys.get(p); }

  /** The key for a provider, or the 503 telling the user which command fixes it. */
  async require(p: ProviderId): Promise<string> {
    const cached = this.keys.get(p);
    if (cached) return cached;
    // A provider that takes no key gets none (setProviderAuth sends nothing for it).
    if (!descriptor(p).auth) return '';
    const s = await this.source.get(p).catch(() => undefined);
    if (s) { this.keys.set(p, s.key); return s.key; }
    throw new GatewayError('provider_not_configured', `no ${descriptor(p).displayName} API key is configured in the gateway; run: gateway providers set ${p}`);
  }
}

