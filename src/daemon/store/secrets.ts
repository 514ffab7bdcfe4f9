// Where provider keys come from, in order: GATEWAY_<PROVIDER>_API_KEY in the environment (headless
// machines, CI), then the OS keychain, then — only when the user chose it — the 0600 insecure file.
import type { ProviderId } from '../../providers/types.js';

export type SecretOrigin = 'environment' | 'keychain' | 'insecure-file';

export interface ProviderSecret { key: string; origin: SecretOrigin }

export interface SecretSource {
  /** The key for a provider, or undefined when none is configured. Never throws for "not set". */
  get(provider: ProviderId): Promise<ProviderSecret | undefined>;
}

export const ENV_KEY_NAMES: Record<ProviderId, string> = {
  anthropic: 'GATEWAY_ANTHROPIC_API_KEY',
  openai: 'GATEWAY_OPENAI_API_KEY',
  gemini: 'GATEWAY_GEMINI_API_KEY',
};

export function envSecret(provider: ProviderId, env: NodeJS.ProcessEnv = process.env): ProviderSecret | undefined {
  const key = env[ENV_KEY_NAMES[provider]];
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
