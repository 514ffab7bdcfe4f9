// Label values stay bounded: a model is named only when the gateway knows it (it has a price, its
// provider lists it, or config.json routes to it); any other name, whatever a client or an
// echoing server sent, is `other`. Key names appear only where configured; error types are codes
// of a bounded shape. Together with the store's cap per family, no label grows with traffic.
import { findProvider } from '../../providers/registry.js';
import type { DaemonSettings } from '../context.js';
import { bareModel, findPrice, type PriceTable } from '../observe/usage/prices.js';
import { DEFAULT_ROUTING } from '../routing/settings.js';
import type { KeyLabels } from './settings.js';

export const OTHER = 'other';
/** The conventions' `error.type` for a value that is not one of a known shape. */
const OTHER_ERROR = '_OTHER';
const MAX_CACHED = 10_000;

export class ModelLabels {
  private cache = new Map<string, string>();
  private targets: Set<string> | undefined;
  private seen: { aliases: unknown; routes: unknown; prices: unknown } | undefined;
  private gen = 0;

  constructor(private readonly settings: DaemonSettings, private readonly prices: () => PriceTable | undefined) {}

  /** The model's name when the gateway knows it, else `other`; '' for no model at all. */
  label(provider: string | null, model: string | null): string {
    if (!model) return '';
    if (!provider) return OTHER;
    this.fresh();
    const k = `${provider}\u0001${model}`;
    let v = this.cache.get(k);
    if (v === undefined) {
      const bare = bareModel(model);
      v = this.known(provider, bare) ? bare : OTHER;
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(k, v);
    }
    return v;
  }

  private known(provider: string, model: string): boolean {
    const prices = this.prices();
    if (prices && findPrice(prices, provider, model)) return true;
    if (findProvider(provider)?.models?.includes(model)) return true;
    return this.targets!.has(`${provider}/${model}`) || this.targets!.has(model);
  }

  /** Changes when the known models may have (a reload): labels made before are stale. */
  get generation(): number {
    this.fresh();
    return this.gen;
  }

  /** Starts over when config.json's aliases, routes or the prices changed (a reload). */
  private fresh(): void {
    const routes = (this.settings.routing ?? DEFAULT_ROUTING).routes;
    const now = { aliases: this.settings.aliases, routes, prices: this.prices() };
    if (this.seen && this.seen.aliases === now.aliases && this.seen.routes === now.routes && this.seen.prices === now.prices) return;
    this.seen = now;
    this.gen++;
    this.cache.clear();
    const t = new Set<string>();
    for (const v of Object.values(now.aliases)) t.add(v);
    for (const [name, list] of Object.entries(routes)) { t.add(name); for (const x of list) t.add(x); }
    this.targets = t;
  }
}

/** `gateway.key.name` for a key: '' (no label) unless configured; session keys (`chat.…`, `run.…`) are one `session`. */
export function keyLabeler(config: KeyLabels): (name: string | undefined) => string {
  if (config === 'none') return () => '';
  if (config === 'all') return (name) => (!name || name === '(no valid key)' ? '' : /^(chat|run)\./.test(name) ? 'session' : name);
  const named = new Set(config);
  return (name) => (name && named.has(name) ? name : name ? OTHER : '');
}

const CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** An error code or an attempt's outcome as `error.type`: kept when it looks like a code, else `_OTHER`. */
export function errorType(code: string): string {
  return CODE.test(code) ? code : OTHER_ERROR;
}
