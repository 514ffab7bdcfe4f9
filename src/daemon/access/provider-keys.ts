// The provider keys the daemon holds in memory: loaded from the secret source at start and on
// reload; a provider without a key is looked up again on demand (the user may just have set it).
// A provider may hold several keys (a pool, key-pool.ts): the attempt loop asks `pick` for a
// healthy one and reports 429s (`rest`) and refusals (`refuse`); a caller that makes one attempt
// (`cached`/`require`) gets a healthy key in turn. A provider with one key behaves as it always did.
import type { ProviderId } from '../../providers/types.js';
import { GatewayError } from '../http/errors.js';
import type { PoolSecret, SecretOrigin, SecretSource } from '../store/secrets.js';
import { allProviders, provider as descriptor } from '../../providers/registry.js';
import { DEFAULT_LABEL } from '../store/key-pools.js';
import type { KeyOrder } from '../routing/settings.js';
import { KeyPool, type PoolKey, type PoolKeyReport } from './key-pool.js';

export type { PoolKey, PoolKeyState, PoolKeyReport } from './key-pool.js';

/** Where the daemon's key for a provider comes from; `none` when it holds none. */
export type KeyOrigin = SecretOrigin | 'none';

export interface ProviderKeysOptions {
  /** The clock rests are measured against (epoch ms); tests inject one. */
  now?: () => number;
  /** The provider's key order when a caller does not give one (routing settings); round-robin by default. */
  order?: (provider: ProviderId) => KeyOrder | undefined;
}

export class ProviderKeys {
  private pools = new Map<ProviderId, KeyPool>();
  private readonly now: () => number;
  private readonly orderOf: (provider: ProviderId) => KeyOrder | undefined;

  constructor(private source: SecretSource, opts: ProviderKeysOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.orderOf = opts.order ?? (() => undefined);
  }

  private async lookup(p: ProviderId): Promise<PoolSecret[]> {
    if (this.source.pool) return this.source.pool(p).catch(() => []);
    const s = await this.source.get(p).catch(() => undefined);
    return s ? [{ ...s, label: DEFAULT_LABEL }] : [];
  }

  /**
   * Reads every provider's keys again. A key whose label comes back with the same value keeps its
   * rest or refusal; a new value for a label (the user set it again) starts healthy.
   */
  async reload(): Promise<void> {
    const ids = allProviders().filter((p) => p.auth).map((p) => p.id); // a provider that takes no key is never looked up
    const found = await Promise.all(ids.map((id) => this.lookup(id)));
    const next = new Map<ProviderId, KeyPool>();
    ids.forEach((id, i) => { if (found[i]!.length) next.set(id, new KeyPool(found[i]!, this.pools.get(id))); });
    this.pools = next;
  }

  /** The key strings held now (every pool's): what the body log redacts. Never to be logged or sent anywhere. */
  values(): string[] { return [...this.pools.values()].flatMap((p) => p.values()); }

  /** A key held in memory for a provider, if any (no lookup): with a pool, a healthy one in turn. */
  cached(p: ProviderId): string | undefined {
    return this.pools.get(p)?.serve(this.order(p), this.now())?.value;
  }

  /**
   * Where each provider's keys held now came from, for every provider that takes one (never a key):
   * the daemon's own environment may hold keys the shell asking does not, so `doctor` asks this.
   */
  origins(): Record<ProviderId, KeyOrigin> {
    const out: Record<ProviderId, KeyOrigin> = {};
    for (const p of allProviders()) if (p.auth) out[p.id] = this.pools.get(p.id)?.first()?.origin ?? 'none';
    return out;
  }

  /** The provider's pool, looked up when none is held; the 503 telling the user which command fixes it when it has no key. */
  private async held(p: ProviderId): Promise<KeyPool> {
    const cached = this.pools.get(p);
    if (cached) return cached;
    const found = await this.lookup(p);
    if (found.length) {
      const pool = new KeyPool(found);
      this.pools.set(p, pool);
      return pool;
    }
    throw new GatewayError('provider_not_configured', `no ${descriptor(p).displayName} API key is configured in the gateway; run: gateway providers set ${p}`);
  }

  /** The key for a provider (with a pool, a healthy one in turn), or the 503 telling the user which command fixes it. */
  async require(p: ProviderId): Promise<string> {
    return this.cached(p) ?? (await this.serve(p)).value;
  }

  /**
   * A key with its label: a healthy one in turn, else the first not refused, else the first (so the
   * provider's own answer reaches the user); the 503 when the provider has no key at all.
   */
  async serve(p: ProviderId, order?: KeyOrder): Promise<PoolKey> {
    // A provider that takes no key gets none (setProviderAuth sends nothing for it).
    if (!descriptor(p).auth) return { label: DEFAULT_LABEL, value: '' };
    return (await this.held(p)).serve(this.order(p, order), this.now())!;
  }

  /** The key under `label` when it is healthy (a session keeps its key), else undefined. */
  healthy(p: ProviderId, label: string): PoolKey | undefined {
    return this.pools.get(p)?.healthy(label, this.now());
  }

  private order(p: ProviderId, given?: KeyOrder): KeyOrder {
    return given ?? this.orderOf(p) ?? 'round-robin';
  }

  /**
   * A healthy key for the next attempt, by the provider's key order (round-robin default, or
   * 'priority' = pool order); `exclude`: labels this request already used. Undefined when none is
   * healthy (all resting/refused/excluded). Throws the 503 when the provider has no key at all.
   * A provider that takes no key gets `{ label: 'default', value: '' }` (nothing is sent).
   */
  async pick(p: ProviderId, opts: { exclude?: ReadonlySet<string>; order?: KeyOrder; now?: number } = {}): Promise<PoolKey | undefined> {
    if (!descriptor(p).auth) return { label: DEFAULT_LABEL, value: '' };
    return (await this.held(p)).pick(this.order(p, opts.order), opts.now ?? this.now(), opts.exclude);
  }

  /** The key answered 429: it rests until `untilMs` (epoch ms); a later rest already set stands. */
  rest(p: ProviderId, label: string, untilMs: number): void { this.pools.get(p)?.rest(label, untilMs); }

  /** The key was refused (401/403): out until it is set again (a reload that brings a different value for that label) or the daemon restarts. */
  refuse(p: ProviderId, label: string, status: number): void { this.pools.get(p)?.refuse(label, status); }

  /** More than one key: the route header and usage name keys by label only then. */
  isPool(p: ProviderId): boolean { return (this.pools.get(p)?.size ?? 0) > 1; }

  /** When the provider's first resting key wakes (epoch ms); undefined when none rests. */
  earliestRest(p: ProviderId, now = this.now()): number | undefined { return this.pools.get(p)?.earliestRest(now); }

  /** Every key's label, masked value (last 4 chars), state, until (resting), status (refused), origin: never the value. */
  states(p: ProviderId, now = this.now()): PoolKeyReport[] { return this.pools.get(p)?.states(now) ?? []; }

  /** `states` of every provider that holds a key: what `GET /admin/status` reports. */
  allStates(now = this.now()): Record<ProviderId, PoolKeyReport[]> {
    const out: Record<ProviderId, PoolKeyReport[]> = {};
    for (const [p, pool] of this.pools) out[p] = pool.states(now);
    return out;
  }
}
