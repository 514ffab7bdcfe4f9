// Settings in `config.json` (state dir, mode 0600). Reads are a plain JSON read with defaults
// applied, so the daemon never loads conf/ajv; writes go through conf (imported lazily), which
// validates against the schema and writes atomically.
import { providerNames } from '../../providers/registry.js';
import { join } from 'node:path';
import { FILES, ensureStateDir } from './paths.js';
import { readJsonSync } from './atomic.js';

export interface GatewayConfig {
  /** alias → `provider/model` */
  aliases: Record<string, string>;
  bodyLimitBytes: number;
  upstreamTimeoutSeconds: number;
  lastChatModel?: string;
  /** Usage history settings (retention, prices), validated by src/daemon/usage/settings.ts. */
  usage?: Record<string, unknown>;
  /** Stored Responses API answers (retention, size cap), validated by src/daemon/responses/store.ts. */
  responses?: Record<string, unknown>;
}

export const CONFIG_DEFAULTS: Readonly<Omit<GatewayConfig, 'aliases' | 'lastChatModel'>> = {
  bodyLimitBytes: 32 * 1024 * 1024,
  upstreamTimeoutSeconds: 600,
};


const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** `<provider>/<model>` with a provider the registry knows (its id or an alias such as `google`). */
const ALIAS_TARGET = new RegExp(`^(${providerNames().join('|')})/\\S+$`);
const validAliasTarget = (v: string): boolean => ALIAS_TARGET.test(v);

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
  const aliases: Record<string, string> = {};
  if (obj.aliases && typeof obj.aliases === 'object' && !Array.isArray(obj.aliases)) {
    for (const [k, v] of Object.entries(obj.aliases)) if (typeof v === 'string' && validAliasTarget(v)) aliases[k] = v;
  }
  return {
    aliases,
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

type StoredConfig = Partial<GatewayConfig>;

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
        aliases: { type: 'object', additionalProperties: { type: 'string', pattern: ALIAS_TARGET.source } },
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
