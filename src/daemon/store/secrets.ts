// Where provider keys come from, in order: GATEWAY_<PROVIDER>_API_KEY in the environment (headless
// machines, CI), then the OS keychain, then — only when the user chose it — the 0600 insecure file.
import type { ProviderId } from '../../providers/types.js';
import { provider as descriptor } from '../../providers/registry.js';

export type SecretOrigin = 'environment' | 'keychain' | 'insecure-file';

export interface ProviderSecret { key: string; origin: SecretOrigin }

export interface SecretSource {
  /** The key for a provider, or undefined when none is configured. Never throws for "not set". */
  get(provider: ProviderId): Promise<ProviderSecret | undefined>;
}

export function envSecret(provider: ProviderId, env: NodeJS.ProcessEnv = process.env): ProviderSecret | undefined {
  const key = env[descriptor(provider).keyEnv];
  return key ? { key, origin: 'environment' } : undefined;
}

/** A fixed set of keys (tests, and `startDaemon` callers that already hold the keys). */
export function staticSecrets(keys: Partial<Record<ProviderId, string>>): SecretSource {
  return {
    async get(provider) {
      const key = keys[provider];
      return key ? { key, origin: 'environment' } : undefined;
    },
  };
}
