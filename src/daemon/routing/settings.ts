// The `routing` section of config.json as the daemon uses it: retries, the retry-after cap,
// per-provider overrides, the circuit breaker's thresholds, and routes (an alias with several
// targets, a model with fallbacks). Durations are milliseconds here; config.json says seconds.

export type KeyOrder = 'round-robin' | 'priority';

export interface RoutingSettings {
  /** Retries of one target (per provider key) after its first attempt; default 2. */
  readonly retries: number;
  /** The longest `retry-after` (or Gemini RetryInfo) waited for; a longer one moves on. Default 30 s. */
  readonly retryAfterCapMs: number;
  /** Exponential backoff with full jitter when the provider says no wait: base and ceiling. */
  readonly backoff: { readonly baseMs: number; readonly maxMs: number };
  /** Per provider id: its own retry count, and how its key pool is used. */
  readonly providers: Readonly<Record<string, { readonly retries?: number; readonly keyOrder?: KeyOrder }>>;
  /** A target that failed retryably `failures` times within `windowMs` is skipped for `cooldownMs` (at least its retry-after). */
  readonly breaker: { readonly failures: number; readonly windowMs: number; readonly cooldownMs: number };
  /**
   * Name a client sends → the targets tried in order (`provider/model`). An alias with several
   * targets is its whole list; a model given fallbacks is listed with itself first.
   */
  readonly routes: Readonly<Record<string, readonly string[]>>;
}

export const DEFAULT_ROUTING: RoutingSettings = {
  retries: 2,
  retryAfterCapMs: 30_000,
  backoff: { baseMs: 200, maxMs: 4_000 },
  providers: {},
  breaker: { failures: 5, windowMs: 30_000, cooldownMs: 30_000 },
  routes: {},
};
