// The `cache` section of config.json: the gateway's own prompt-cache marks.
//
//   "cache": {
//     "breakpoints": true,       // Anthropic cache breakpoints for clients that cannot mark (default on)
//     "ttl": "5m",               // their TTL: "5m" (default) or "1h"
//     "promptCacheKey": true,    // a session's prompt_cache_key for OpenAI (default on)
//     "providers": { "anthropic": { "ttl": "1h" }, "my-claude-proxy": { "breakpoints": true } }
//   }
//
// A provider's own entry wins over the section's. `breakpoints: true` on an added Anthropic-protocol
// provider turns the marks on for it even when its preset does not say it caches this way.
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { CacheTtl } from '../../providers/ir/types.js';
import { allProviders } from '../../providers/registry.js';

export interface ProviderCacheSettings { readonly breakpoints?: boolean; readonly ttl?: CacheTtl; readonly promptCacheKey?: boolean }

export interface CacheSettings {
  readonly breakpoints: boolean;
  readonly ttl: CacheTtl;
  readonly promptCacheKey: boolean;
  /** By provider id (an alias such as `google` is stored under its id). */
  readonly providers: Readonly<Record<string, ProviderCacheSettings>>;
}

export const DEFAULT_CACHE: CacheSettings = { breakpoints: true, ttl: '5m', promptCacheKey: true, providers: {} };

export interface ParsedCache { readonly settings: CacheSettings; readonly problems: string[] }

const TTLS: readonly CacheTtl[] = ['5m', '1h'];
const SWITCHES = ['breakpoints', 'ttl', 'promptCacheKey'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every name a provider goes by (id or alias, lowercase) → its id and protocol. */
export type ProviderNames = ReadonlyMap<string, { readonly id: string; readonly protocol: ProtocolId }>;

/** The registry's providers as ProviderNames. */
export function registryNames(list: ReadonlyArray<{ id: string; aliases: readonly string[]; protocol: ProtocolId }> = allProviders()): ProviderNames {
  const out = new Map<string, { id: string; protocol: ProtocolId }>();
  for (const p of list) for (const n of [p.id, ...p.aliases]) if (!out.has(n)) out.set(n, { id: p.id, protocol: p.protocol });
  return out;
}

/**
 * config.json's `cache` section → the settings, and every problem found, each naming its field.
 * `known` names the providers (with the ones config.json adds), to refuse a switch that cannot
 * apply to one. The daemon keeps its last good settings while there is a problem.
 */
export function parseCache(section: unknown, known: ProviderNames = registryNames()): ParsedCache {
  const problems: string[] = [];
  if (section === undefined) return { settings: DEFAULT_CACHE, problems };
  if (!isObject(section)) return { settings: DEFAULT_CACHE, problems: ['cache must be an object'] };
  for (const k of Object.keys(section)) {
    if (![...SWITCHES, 'providers'].includes(k)) problems.push(`cache.${k} is not a setting (known: ${[...SWITCHES, 'providers'].join(', ')})`);
  }
  const top = switches('cache', section, problems);
  const providers: Record<string, ProviderCacheSettings> = {};
  if (section.providers !== undefined && !isObject(section.providers)) problems.push('cache.providers must be an object of provider → settings');
  for (const [name, v] of Object.entries(isObject(section.providers) ? section.providers : {})) {
    const field = `cache.providers.${name}`;
    const p = known.get(name.toLowerCase());
    if (p === undefined) { problems.push(`${field}: unknown provider "${name}" (known: ${[...known.keys()].join(', ')})`); continue; }
    const protocol = p.protocol;
    if (!isObject(v)) { problems.push(`${field} must be an object`); continue; }
    for (const k of Object.keys(v)) if (!(SWITCHES as readonly string[]).includes(k)) problems.push(`${field}.${k} is not a setting (known: ${SWITCHES.join(', ')})`);
    const own = switches(field, v, problems);
    // Breakpoints are Anthropic's protocol; prompt_cache_key is OpenAI's.
    if (own.breakpoints === true && protocol !== 'anthropic') problems.push(`${field}.breakpoints: "${name}" speaks ${protocol}; cache breakpoints are for Anthropic-protocol providers`);
    if (own.promptCacheKey === true && protocol !== 'openai-chat' && protocol !== 'openai-responses') problems.push(`${field}.promptCacheKey: "${name}" speaks ${protocol}; prompt_cache_key is for OpenAI-protocol providers`);
    providers[p.id] = own;
  }
  return {
    settings: { breakpoints: top.breakpoints ?? DEFAULT_CACHE.breakpoints, ttl: top.ttl ?? DEFAULT_CACHE.ttl, promptCacheKey: top.promptCacheKey ?? DEFAULT_CACHE.promptCacheKey, providers },
    problems,
  };
}

function switches(field: string, o: Record<string, unknown>, problems: string[]): { breakpoints?: boolean; ttl?: CacheTtl; promptCacheKey?: boolean } {
  const out: { breakpoints?: boolean; ttl?: CacheTtl; promptCacheKey?: boolean } = {};
  for (const k of ['breakpoints', 'promptCacheKey'] as const) {
    if (o[k] === undefined) continue;
    if (typeof o[k] === 'boolean') out[k] = o[k];
    else problems.push(`${field}.${k} must be true or false, not ${JSON.stringify(o[k])}`);
  }
  if (o.ttl !== undefined) {
    if (TTLS.includes(o.ttl as CacheTtl)) out.ttl = o.ttl as CacheTtl;
    else problems.push(`${field}.ttl must be "5m" or "1h" (Anthropic's two cache lifetimes), not ${JSON.stringify(o.ttl)}`);
  }
  return out;
}
