// Where provider keys come from, in order: GATEWAY_<PROVIDER>_API_KEY in the environment (headless
// machines, CI), then the OS keychain, then — only when the user chose it — the 0600 insecure file.
// A provider may hold several keys (a pool): the variable may list them separated by commas, and
// the stores hold one entry per label (key-pools.ts).
import type { ProviderId } from '../../providers/types.js';
import { provider as descriptor } from '../../providers/registry.js';
import { envLabel } from './key-pools.js';

export type SecretOrigin = 'environment' | 'keychain' | 'insecure-file';

export interface ProviderSecret { key: string; origin: SecretOrigin }

/** One key of a provider's pool, by its label (`default`, `env1`, or one the user gave). */
export interface PoolSecret extends ProviderSecret { label: string }

export interface SecretSource {
  /** The key for a provider (its pool's first), or undefined when none is configured. Never throws for "not set". */
  get(provider: ProviderId): Promise<ProviderSecret | undefined>;
  /** Every key of the provider's pool, in pool order; empty when none. A source without it holds one key per provider (`get`'s). */
  pool?(provider: ProviderId): Promise<PoolSecret[]>;
}

/** The keys in a GATEWAY_<P>_API_KEY value: one, or several separated by commas (spaces around them ignored). */
export function splitKeyList(value: string | undefined): string[] {
  if (!value) return [];
  if (!value.includes(',')) return [value];
  return value.split(',').map((k) => k.trim()).filter(Boolean);
}

/** The pool the environment gives a provider: env1, env2, … in the order listed. */
export function envSecrets(provider: ProviderId, env: NodeJS.ProcessEnv = process.env): PoolSecret[] {
  return splitKeyList(env[descriptor(provider).keyEnv]).map((key, i) => ({ key, origin: 'environment', label: envLabel(i) }));
}

export function envSecret(provider: ProviderId, env: NodeJS.ProcessEnv = process.env): ProviderSecret | undefined {
  const first = envSecrets(provider, env)[0];
  return first ? { key: first.key, origin: first.origin } : undefined;
}

/** A fixed set of keys (tests, and `startDaemon` callers that already hold the keys); a list is a pool, labelled as the environment's. */
export function staticSecrets(keys: Partial<Record<ProviderId, string | readonly string[]>>): SecretSource {
  const pool = (provider: ProviderId): PoolSecret[] => {
    const k = keys[provider];
    const list = typeof k === 'string' ? (k ? [k] : []) : (k ?? []);
    return list.map((key, i) => ({ key, origin: 'environment', label: envLabel(i) }));
  };
  return {
    async get(provider) {
      const first = pool(provider)[0];
      return first ? { key: first.key, origin: first.origin } : undefined;
    },
    async pool(provider) { return pool(provider); },
  };
}
