// Settings in `config.json` (state dir, mode 0600). Reads are a plain JSON read with defaults
// applied, so the daemon never loads conf/ajv; writes go through conf (imported lazily), which
// validates against the schema and writes atomically.
import { BUILTIN_PROVIDERS, providerNames, setConfiguredProviders } from '../../providers/registry.js';
import { configuredProviders, type StoredProvider } from '../../providers/configured.js';
import type { ProviderDescriptor } from '../../providers/registry.js';
import { join } from 'node:path';
import { FILES, ensureStateDir } from './paths.js';
import { readJsonSync } from './atomic.js';

export interface GatewayConfig {
  /** alias → `provider/model` */
  aliases: Record<string, string>;
  bodyLimitBytes: number;
  upstreamTimeoutSeconds: number;
  lastChatModel?: string;
  /** Usage history settings (retention, prices), validated by src/daemon/observe/usage/settings.ts. */
  usage?: Record<string, unknown>;
  /** Stored Responses API answers (retention, size cap), validated by src/daemon/store/responses.ts. */
  responses?: Record<string, unknown>;
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

function isPositiveNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0;
}

/** The config with defaults applied; a missing file is all defaults, invalid JSON throws clearly. */
export function readConfig(dir: string): GatewayConfig {
  const raw = readJsonSync<Record<string, unknown>>(configPath(dir), {});
  const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
  const configured = configuredProviders(obj.providers);
  const names = [...BUILTIN_PROVIDERS.flatMap((p) => [p.id, ...p.aliases]), ...Object.keys(configured.stored)];
  const aliases: Record<string, string> = {};
  if (obj.aliases && typeof obj.aliases === 'object' && !Array.isArray(obj.aliases)) {
    for (const [k, v] of Object.entries(obj.aliases)) if (typeof v === 'string' && validAliasTarget(v, names)) aliases[k] = v;
  }
  return {
    aliases,
    providers: configured.stored,
    providerDescriptors: configured.providers,
    problems: configured.problems,
    bodyLimitBytes: isPositiveNumber(obj.bodyLimitBytes) ? Math.floor(obj.bodyLimitBytes) : CONFIG_DEFAULTS.bodyLimitBytes,
    upstreamTimeoutSeconds: isPositiveNumber(obj.upstreamTimeoutSeconds) ? obj.upstreamTimeoutSeconds : CONFIG_DEFAULTS.upstreamTimeoutSeconds,
    ...(typeof obj.lastChatModel === 'string' && obj.lastChatModel ? { lastChatModel: obj.lastChatModel } : {}),
    ...(obj.usage && typeof obj.usage === 'object' && !Array.isArray(obj.usage) ? { usage: obj.usage as Record<string, unknown> } : {}),
    ...(obj.responses && typeof obj.responses === 'object' && !Array.isArray(obj.responses) ? { responses: obj.responses as Record<string, unknown> } : {}),
  };
}

export function validateAliasName(name: string): string {
  if (!ALIAS_NAME.test(name)) throw new Error(`alias name "${name}" must be 1-64 letters, digits, '.', '_', ':' or '-' (no '/')`);
  return name;
}

export function validateAliasTarget(target: string): string {
  if (!validAliasTarget(target)) {
    throw new Error(`alias target "${target}" must be <provider>/<model> with provider ${providerNames().join(', ')} (e.g. anthropic/claude-sonnet-4-5)`);
  }
  return target;
}

type StoredConfig = Partial<Pick<GatewayConfig, 'aliases' | 'bodyLimitBytes' | 'upstreamTimeoutSeconds' | 'lastChatModel' | 'usage' | 'responses' | 'providers'>>;

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
        aliases: { type: 'object', additionalProperties: { type: 'string', pattern: ALIAS_TARGET_SHAPE } },
        providers: { type: 'object', additionalProperties: { type: 'object' } },
        bodyLimitBytes: { type: 'integer', minimum: 1 },
        upstreamTimeoutSeconds: { type: 'number', exclusiveMinimum: 0 },
        lastChatModel: { type: 'string' },
        usage: { type: 'object' },
        responses: { type: 'object' },
      },
    });
  } catch (e) {
    throw new Error(`${configPath(dir)} is not valid (${e instanceof Error ? e.message : String(e)}); fix or remove it`);
  }
}

export async function setAlias(dir: string, name: string, target: string): Promise<void> {
  validateAliasName(name);
  validateAliasTarget(target);
  const store = await openConfStore(dir);
  store.set('aliases', { ...(store.get('aliases') ?? {}), [name]: target });
}

/** True when the alias existed. */
export async function removeAlias(dir: string, name: string): Promise<boolean> {
  const store = await openConfStore(dir);
  const aliases = { ...(store.get('aliases') ?? {}) };
  if (!(name in aliases)) return false;
  delete aliases[name];
  store.set('aliases', aliases);
  return true;
}

export async function setLastChatModel(dir: string, model: string): Promise<void> {
  const store = await openConfStore(dir);
  store.set('lastChatModel', model);
}

/** Adds or replaces a configured provider (already checked by configured.ts). True when it replaced one. */
export async function setProviderConfig(dir: string, name: string, stored: StoredProvider): Promise<boolean> {
  const store = await openConfStore(dir);
  const providers = { ...(store.get('providers') ?? {}) };
  const existed = Object.hasOwn(providers, name);
  providers[name] = stored;
  store.set('providers', providers);
  return existed;
}

/** Removes a configured provider; true when there was one. */
export async function removeProviderConfig(dir: string, name: string): Promise<boolean> {
  const store = await openConfStore(dir);
  const providers = { ...(store.get('providers') ?? {}) };
  if (!Object.hasOwn(providers, name)) return false;
  delete providers[name];
  store.set('providers', providers);
  return true;
}

/** Reads config.json and puts its providers into the registry (the CLI at start, the daemon on every reload). */
export function loadProviderConfig(dir: string): GatewayConfig {
  const config = readConfig(dir);
  setConfiguredProviders(config.providerDescriptors);
  return config;
}
