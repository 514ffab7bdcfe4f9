// Settings in `config.json` (state dir, mode 0600). Reads are a plain JSON read with defaults
// applied, so the daemon never loads conf/ajv; writes go through conf (imported lazily), which
// validates against the schema and writes atomically.
import { BUILTIN_PROVIDERS, providerNames, setConfiguredProviders } from '../../providers/registry.js';
import { configuredProviders, type StoredProvider } from '../../providers/configured.js';
import type { ProviderDescriptor } from '../../providers/registry.js';
import { join } from 'node:path';
import { FILES, ensureStateDir } from './paths.js';
import { readJsonSync } from './atomic.js';
import { withStateLock } from './state-lock.js';
import { parseRouting, type ParsedRouting } from '../routing/settings.js';
import { parseCache, registryNames, type ParsedCache } from '../caching/settings.js';

/**
 * config.json, as the CLI and the daemon read it. Its routing part:
 *
 *   "aliases": { "fast": "anthropic/claude-haiku-4-5", "coding": ["anthropic/claude-sonnet-4-5", "openai/gpt-5.4"] },
 *   "routing": {
 *     "retries": 2, "retryAfterCapSeconds": 30, "backoff": { "baseMs": 200, "maxMs": 4000 },
 *     "providers": { "openai": { "retries": 3, "keyOrder": "priority" } },
 *     "breaker": { "failures": 5, "windowSeconds": 30, "cooldownSeconds": 30 },
 *     "fallbacks": { "claude-sonnet-4-5": ["openai/gpt-5.4"] }
 *   }
 *
 * An alias is one target or a list tried in order; `fallbacks` gives any name a client sends the
 * targets tried after it. routing/settings.ts parses and checks both (parseRouting). The `cache`
 * section (the gateway's prompt-cache marks) is parsed by caching/settings.ts (parseCache).
 */
export interface GatewayConfig {
  /** alias → its first `provider/model` (what resolveModel takes; a list alias's later targets are in `routing`). */
  aliases: Record<string, string>;
  /** alias → its target or targets as written (aliases whose first target names a provider). */
  aliasTargets: Record<string, string | string[]>;
  /** `routing.fallbacks` as written: model name → targets tried after it. */
  fallbacks: Record<string, string[]>;
  /** The `routing` section parsed (with the aliases' lists as routes), and its problems. */
  routing: ParsedRouting;
  /** The `cache` section parsed (the gateway's prompt-cache marks, caching/settings.ts), and its problems. */
  cache: ParsedCache;
  bodyLimitBytes: number;
  upstreamTimeoutSeconds: number;
  lastChatModel?: string;
  /** Usage history settings (retention, prices), validated by src/daemon/observe/usage/settings.ts. */
  usage?: Record<string, unknown>;
  /** Stored Responses API answers (retention, size cap), validated by src/daemon/store/responses.ts. */
  responses?: Record<string, unknown>;
  /** Metrics and traces (/metrics, OTLP), validated by src/daemon/telemetry/settings.ts. */
  telemetry?: Record<string, unknown>;
  /** Team mode's shared store (`store.url`: a postgres:// URL, store/store-url.ts); absent: the laptop's SQLite. */
  storeUrl?: string;
  /** Providers the user added (`gateway providers add`), checked; never a key. */
  providers: Record<string, StoredProvider>;
  /** Their registry descriptors, and what was wrong with any left out. */
  providerDescriptors: ProviderDescriptor[];
  problems: string[];
}

export const CONFIG_DEFAULTS: Readonly<Pick<GatewayConfig, 'bodyLimitBytes' | 'upstreamTimeoutSeconds'>> = {
  bodyLimitBytes: 32 * 1024 * 1024,
  upstreamTimeoutSeconds: 600,
};


const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** `<provider>/<model>` with a provider the registry knows (its id or an alias such as `google`). */
const validAliasTarget = (v: string, names: readonly string[] = providerNames()): boolean => {
  const slash = v.indexOf('/');
  return slash > 0 && names.includes(v.slice(0, slash).toLowerCase()) && /^\S+$/.test(v.slice(slash + 1));
};
/** What conf checks on write (the provider is checked against the registry before that). */
const ALIAS_TARGET_SHAPE = '^[A-Za-z0-9-]+/\\S+$';

export function configPath(dir: string): string {
  return join(dir, FILES.config);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isPositiveNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0;
}

/** config.json as written (an object; a missing file is `{}`); invalid JSON throws clearly. */
export function readRawConfig(dir: string): Record<string, unknown> {
  const raw = readJsonSync<unknown>(configPath(dir), {});
  return isObject(raw) ? raw : {};
}

/** The config with defaults applied; a missing file is all defaults, invalid JSON throws clearly. */
export function readConfig(dir: string): GatewayConfig {
  return parseConfig(readRawConfig(dir));
}

/** config.json's content (as readRawConfig gives it, or the team's sections over it) with defaults applied. */
export function parseConfig(obj: Record<string, unknown>): GatewayConfig {
  const configured = configuredProviders(obj.providers);
  const names = [...BUILTIN_PROVIDERS.flatMap((p) => [p.id, ...p.aliases]), ...Object.keys(configured.stored)];
  const aliases: Record<string, string> = {};
  const aliasTargets: Record<string, string | string[]> = {};
  if (isObject(obj.aliases)) {
    for (const [k, v] of Object.entries(obj.aliases)) {
      const first: unknown = Array.isArray(v) ? v[0] : v;
      if (typeof first !== 'string' || !validAliasTarget(first, names)) continue;
      aliases[k] = first;
      aliasTargets[k] = Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : first;
    }
  }
  const routing = isObject(obj.routing) ? obj.routing : {};
  const fallbacks: Record<string, string[]> = {};
  if (isObject(routing.fallbacks)) {
    for (const [k, v] of Object.entries(routing.fallbacks)) if (Array.isArray(v)) fallbacks[k] = v.filter((t): t is string => typeof t === 'string');
  }
  return {
    aliases,
    aliasTargets,
    fallbacks,
    routing: parseRouting(obj, names),
    cache: parseCache(obj.cache, registryNames([...BUILTIN_PROVIDERS, ...configured.providers])),
    providers: configured.stored,
    providerDescriptors: configured.providers,
    problems: configured.problems,
    bodyLimitBytes: isPositiveNumber(obj.bodyLimitBytes) ? Math.floor(obj.bodyLimitBytes) : CONFIG_DEFAULTS.bodyLimitBytes,
    upstreamTimeoutSeconds: isPositiveNumber(obj.upstreamTimeoutSeconds) ? obj.upstreamTimeoutSeconds : CONFIG_DEFAULTS.upstreamTimeoutSeconds,
    ...(typeof obj.lastChatModel === 'string' && obj.lastChatModel ? { lastChatModel: obj.lastChatModel } : {}),
    ...(obj.usage && typeof obj.usage === 'object' && !Array.isArray(obj.usage) ? { usage: obj.usage as Record<string, unknown> } : {}),
    ...(obj.responses && typeof obj.responses === 'object' && !Array.isArray(obj.responses) ? { responses: obj.responses as Record<string, unknown> } : {}),
    ...(obj.telemetry && typeof obj.telemetry === 'object' && !Array.isArray(obj.telemetry) ? { telemetry: obj.telemetry as Record<string, unknown> } : {}),
    ...(storeUrlOf(obj.store) ? { storeUrl: storeUrlOf(obj.store) } : {}),
  };
}

function storeUrlOf(store: unknown): string | undefined {
  const url = store && typeof store === 'object' && !Array.isArray(store) ? (store as Record<string, unknown>).url : undefined;
  return typeof url === 'string' && url.trim() !== '' ? url : undefined;
}

export function validateAliasName(name: string): string {
  if (!ALIAS_NAME.test(name)) throw new Error(`alias name "${name}" must be 1-64 letters, digits, '.', '_', ':' or '-' (no '/')`);
  return name;
}

/** Throws unless `target` is `<provider>/<model>` with a provider the registry knows; `what` names it in the message. */
export function validateAliasTarget(target: string, what = 'alias target'): string {
  if (validAliasTarget(target)) return target;
  const names = providerNames();
  const slash = target.indexOf('/');
  if (slash > 0 && /^\S+$/.test(target.slice(slash + 1)) && !names.includes(target.slice(0, slash).toLowerCase())) {
    throw new Error(`${what} "${target}" names an unknown provider "${target.slice(0, slash)}" (known: ${names.join(', ')})`);
  }
  throw new Error(`${what} "${target}" must be <provider>/<model> with provider ${names.join(', ')} (e.g. anthropic/claude-sonnet-4-5)`);
}

type StoredConfig = Partial<Pick<GatewayConfig, 'bodyLimitBytes' | 'upstreamTimeoutSeconds' | 'lastChatModel' | 'usage' | 'responses' | 'telemetry' | 'providers'>> & {
  store?: { url?: string };
  aliases?: Record<string, string | string[]>;
  /** Checked by parseRouting, not by the schema: a hand-edited mistake there must not block every other write. */
  routing?: Record<string, unknown>;
  /** Checked by parseCache, likewise. */
  cache?: Record<string, unknown>;
};

async function openConfStore(dir: string) {
  ensureStateDir(dir);
  const { default: Conf } = await import('conf');
  try {
    return new Conf<StoredConfig>({
      cwd: dir,
      configName: FILES.config.replace(/\.json$/, ''),
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
      schema: {
        aliases: {
          type: 'object',
          additionalProperties: {
            anyOf: [
              { type: 'string', pattern: ALIAS_TARGET_SHAPE },
              { type: 'array', minItems: 1, items: { type: 'string', pattern: ALIAS_TARGET_SHAPE } },
            ],
          },
        },
        routing: { type: 'object' },
        cache: { type: 'object' },
        providers: { type: 'object', additionalProperties: { type: 'object' } },
        bodyLimitBytes: { type: 'integer', minimum: 1 },
        upstreamTimeoutSeconds: { type: 'number', exclusiveMinimum: 0 },
        lastChatModel: { type: 'string' },
        usage: { type: 'object' },
        responses: { type: 'object' },
        telemetry: { type: 'object' },
        store: { type: 'object' },
      },
    });
  } catch (e) {
    throw new Error(`${configPath(dir)} is not valid (${e instanceof Error ? e.message : String(e)}); fix or remove it`);
  }
}

type ConfStore = Awaited<ReturnType<typeof openConfStore>>;

/**
 * Runs an edit (read, change, write) of config.json holding the state directory's lock, so that a
 * team daemon writing the team's config into the file at that moment is not undone (state-lock.ts).
 */
async function editConf<T>(dir: string, edit: (store: ConfStore) => T): Promise<T> {
  const store = await openConfStore(dir);
  return withStateLock(dir, () => edit(store));
}

/**
 * Throws, naming each, the routing problems `next` (the aliases and routing section about to be
 * written) has that the file does not have already: an edit is refused for what it would break,
 * not for a hand-made mistake elsewhere that the daemon is already warning about.
 */
function refuseNewRoutingProblems(store: ConfStore, next: Pick<StoredConfig, 'aliases' | 'routing'>): void {
  const current = { aliases: store.get('aliases'), routing: store.get('routing') };
  const before = new Set(parseRouting(current).problems);
  const added = parseRouting({ ...current, ...next }).problems.filter((p) => !before.has(p));
  if (added.length > 0) throw new Error(added.join('; '));
}

/** One target is stored as a string (as before routes existed), several as the list tried in order. */
export async function setAlias(dir: string, name: string, targets: string | readonly string[]): Promise<void> {
  validateAliasName(name);
  const list = typeof targets === 'string' ? [targets] : [...targets];
  if (list.length === 0) throw new Error(`alias "${name}" needs at least one target`);
  for (const t of list) validateAliasTarget(t);
  await editConf(dir, (store) => {
    const aliases = { ...(store.get('aliases') ?? {}), [name]: list.length === 1 ? list[0]! : list };
    refuseNewRoutingProblems(store, { aliases });
    store.set('aliases', aliases);
  });
}

/** Sets the targets tried after `model` (any name a client sends: bare, provider/model, an alias). */
export async function setFallbacks(dir: string, model: string, targets: readonly string[]): Promise<void> {
  if (!/^\S{1,200}$/.test(model)) throw new Error(`model "${model}" must be a name a client sends, without spaces`);
  if (targets.length === 0) throw new Error(`give ${model} at least one fallback target (provider/model)`);
  for (const t of targets) validateAliasTarget(t, 'fallback target');
  await editConf(dir, (store) => {
    const routing = { ...(store.get('routing') ?? {}) };
    routing.fallbacks = { ...(isObject(routing.fallbacks) ? routing.fallbacks : {}), [model]: [...targets] };
    refuseNewRoutingProblems(store, { routing });
    store.set('routing', routing);
  });
}

/** Removes the fallbacks of `model`; true when it had some. */
export async function removeFallbacks(dir: string, model: string): Promise<boolean> {
  return editConf(dir, (store) => {
    const routing = { ...(store.get('routing') ?? {}) };
    const fallbacks = isObject(routing.fallbacks) ? { ...routing.fallbacks } : {};
    if (!Object.hasOwn(fallbacks, model)) return false;
    delete fallbacks[model];
    if (Object.keys(fallbacks).length > 0) routing.fallbacks = fallbacks;
    else delete routing.fallbacks;
    store.set('routing', routing);
    return true;
  });
}

/** True when the alias existed. */
export async function removeAlias(dir: string, name: string): Promise<boolean> {
  return editConf(dir, (store) => {
    const aliases = { ...(store.get('aliases') ?? {}) };
    if (!(name in aliases)) return false;
    delete aliases[name];
    store.set('aliases', aliases);
    return true;
  });
}

export async function setLastChatModel(dir: string, model: string): Promise<void> {
  await editConf(dir, (store) => store.set('lastChatModel', model));
}

/** Adds or replaces a configured provider (already checked by configured.ts). True when it replaced one. */
export async function setProviderConfig(dir: string, name: string, stored: StoredProvider): Promise<boolean> {
  return editConf(dir, (store) => {
    const providers = { ...(store.get('providers') ?? {}) };
    const existed = Object.hasOwn(providers, name);
    providers[name] = stored;
    store.set('providers', providers);
    return existed;
  });
}

/** Removes a configured provider; true when there was one. */
export async function removeProviderConfig(dir: string, name: string): Promise<boolean> {
  return editConf(dir, (store) => {
    const providers = { ...(store.get('providers') ?? {}) };
    if (!Object.hasOwn(providers, name)) return false;
    delete providers[name];
    store.set('providers', providers);
    return true;
  });
}

/** Reads config.json and puts its providers into the registry (the CLI at start, the daemon on every reload). */
export function loadProviderConfig(dir: string): GatewayConfig {
  const config = readConfig(dir);
  setConfiguredProviders(config.providerDescriptors);
  return config;
}
