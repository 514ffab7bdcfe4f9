// Providers the user adds (`gateway providers add`): how one is stored in config.json's
// `providers` section (never with a key: keys live in the keychain under the provider's name),
// how a stored entry is checked, and the registry descriptor it becomes. Pure: no I/O.
import type { ProtocolId } from './ir/protocol.js';
import { findPreset } from './presets.js';
import { PROTOCOL_FACTS } from './protocol-facts.js';
import { QUIRK_PROFILE_NAMES } from './quirks.js';
import { BUILTIN_PROVIDERS, DEFAULT_CACHE_MINIMUMS, type ProviderDescriptor } from './registry.js';

/** One configured provider as config.json keeps it. */
export interface StoredProvider {
  protocol: ProtocolId;
  /** As its SDK would take it: origin plus an optional path (`https://openrouter.ai/api/v1`). */
  baseUrl: string;
  /** Takes no key: never looked up, and no credential is ever sent to it. */
  noKey?: boolean;
  /** Extra upstream headers (never a credential). */
  headers?: Record<string, string>;
  /** Its models, for a server with no models endpoint. */
  models?: string[];
  /** A named quirk profile. */
  quirks?: string;
  /** The preset it came from (informational; its values are stored here). */
  preset?: string;
  displayName?: string;
  /** Set when the key does not travel the protocol's usual way (Azure's `api-key`). */
  auth?: { header: string; scheme?: 'Bearer' };
  /** Set when the models list is not at the protocol's usual path. */
  modelsPath?: string;
}

/**
 * Every field a stored entry may have. validateStoredProvider passes over any other (a laptop's
 * config.json stays as forgiving as it was); team mode refuses one (unknownProviderFields), since
 * it would publish the entry to the store as written: a key typed in by hand as `apiKey` with it.
 */
const STORED_FIELDS: ReadonlySet<string> = new Set<keyof StoredProvider>(['protocol', 'baseUrl', 'noKey', 'headers', 'models', 'quirks', 'preset', 'displayName', 'auth', 'modelsPath']);
const AUTH_FIELDS: ReadonlySet<string> = new Set(['header', 'scheme']);

/** The fields of stored entry `raw` that are not a provider's settings, as dotted paths (`providers.box.apiKey`). */
export function unknownProviderFields(name: string, raw: unknown): string[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const o = raw as Record<string, unknown>;
  const out = Object.keys(o).filter((k) => !STORED_FIELDS.has(k)).map((k) => `providers.${name}.${k}`);
  if (o.auth && typeof o.auth === 'object' && !Array.isArray(o.auth)) {
    out.push(...Object.keys(o.auth).filter((k) => !AUTH_FIELDS.has(k)).map((k) => `providers.${name}.auth.${k}`));
  }
  return out;
}

export const PROTOCOL_IDS: readonly ProtocolId[] = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

/** A provider name: the native prefix, the routing prefix, the keychain account, part of an env var name. */
const NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** First path segments the daemon serves itself, and the `gateway env` target for everything. */
const RESERVED = new Set(['v1', 'v1beta', 'v1alpha', 'admin', 'dashboard', 'healthz', 'all']);
/** Header names that carry credentials: a configured header may never be one (keys live in the keychain). */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie']);
/** Headers the gateway or HTTP itself owns. */
const OWNED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'accept-encoding', 'te', 'upgrade', 'keep-alive']);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const MODEL_ID = /^[^\s,]{1,200}$/;
const QUIRKS = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** The env var that overrides a configured provider's stored key: GATEWAY_<NAME>_API_KEY. */
export function keyEnvFor(name: string): string {
  return `GATEWAY_${name.toUpperCase().replace(/-/g, '_')}_API_KEY`;
}

/** Checks a name for a new provider; throws saying what is wrong. */
export function validateProviderName(name: string): string {
  if (!NAME.test(name)) throw new Error(`provider name "${name}" must be 1-32 lowercase letters, digits or '-', starting with a letter`);
  const builtin = BUILTIN_PROVIDERS.find((p) => p.id === name || p.aliases.includes(name));
  if (builtin) throw new Error(`"${name}" is the built-in ${builtin.displayName} provider; give the new one another name`);
  if (RESERVED.has(name)) throw new Error(`"${name}" is reserved (the gateway serves /${name} itself); choose another name`);
  return name;
}

/** Checks and normalises a base URL: http(s), no credentials, query or fragment; trailing slashes dropped. */
export function normalizeBaseUrl(value: string): string {
  let u: URL;
  try { u = new URL(value); } catch { throw new Error(`base URL "${value}" is not a URL (e.g. http://localhost:11434/v1)`); }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`base URL "${value}" must use http or https`);
  if (u.username || u.password) throw new Error('the base URL must not carry a user or password: the key is stored in the keychain');
  if (u.search || u.hash) throw new Error(`base URL "${value}" must not have a query or fragment`);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** `K=V` pairs → headers; throws on a malformed one or a credential header. */
export function parseHeaderPairs(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--header "${pair}" must be Name=value`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return validateHeaders(out);
}

function validateHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new Error(`header name "${name}" is not a valid HTTP header name`);
    if (CREDENTIAL_HEADERS.has(lower)) throw new Error(`header "${name}" carries a credential; the key goes in the keychain (omit --no-key and give it when asked)`);
    if (OWNED_HEADERS.has(lower)) throw new Error(`header "${name}" is set by the gateway itself`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > 1024) throw new Error(`header "${name}" needs a one-line value`);
    out[lower] = value;
  }
  return out;
}

export function parseModelList(value: string): string[] {
  const models = value.split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new Error('--models needs at least one model id (a,b,c)');
  for (const m of models) if (!MODEL_ID.test(m)) throw new Error(`model id "${m}" must have no spaces`);
  return [...new Set(models)];
}

/** Checks one stored entry (from the CLI or a hand-edited config.json); throws saying what is wrong. */
export function validateStoredProvider(name: string, raw: unknown): StoredProvider {
  validateProviderName(name);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`providers.${name} must be an object`);
  const o = raw as Record<string, unknown>;
  if (typeof o.protocol !== 'string' || !PROTOCOL_IDS.includes(o.protocol as ProtocolId)) throw new Error(`providers.${name}.protocol must be one of ${PROTOCOL_IDS.join(', ')}`);
  if (typeof o.baseUrl !== 'string') throw new Error(`providers.${name}.baseUrl is required`);
  const out: StoredProvider = { protocol: o.protocol as ProtocolId, baseUrl: normalizeBaseUrl(o.baseUrl) };
  if (o.noKey === true) out.noKey = true;
  if (o.headers !== undefined) {
    if (!o.headers || typeof o.headers !== 'object' || Array.isArray(o.headers)) throw new Error(`providers.${name}.headers must be an object of strings`);
    const h = validateHeaders(o.headers as Record<string, string>);
    if (Object.keys(h).length) out.headers = h;
  }
  if (o.models !== undefined) {
    if (!Array.isArray(o.models) || !o.models.every((m) => typeof m === 'string' && MODEL_ID.test(m))) throw new Error(`providers.${name}.models must be a list of model ids`);
    if (o.models.length) out.models = [...new Set(o.models as string[])];
  }
  if (o.quirks !== undefined) {
    if (typeof o.quirks !== 'string' || !QUIRKS.test(o.quirks)) throw new Error(`providers.${name}.quirks must be a profile name (lowercase letters, digits, '-')`);
    if (!QUIRK_PROFILE_NAMES.includes(o.quirks)) throw new Error(`providers.${name}.quirks: no quirk profile is named "${o.quirks}" (known: ${QUIRK_PROFILE_NAMES.join(', ')})`);
    out.quirks = o.quirks;
  }
  if (typeof o.preset === 'string' && QUIRKS.test(o.preset)) out.preset = o.preset;
  if (typeof o.displayName === 'string' && o.displayName.trim() && o.displayName.length <= 64) out.displayName = o.displayName.trim();
  if (o.auth !== undefined) {
    const a = o.auth as { header?: unknown; scheme?: unknown } | null;
    if (!a || typeof a.header !== 'string' || !HEADER_NAME.test(a.header) || (a.scheme !== undefined && a.scheme !== 'Bearer')) throw new Error(`providers.${name}.auth must be {"header": "<name>"} with an optional "scheme": "Bearer"`);
    out.auth = { header: a.header.toLowerCase(), ...(a.scheme === 'Bearer' ? { scheme: 'Bearer' as const } : {}) };
  }
  if (o.modelsPath !== undefined) {
    if (typeof o.modelsPath !== 'string' || !o.modelsPath.startsWith('/')) throw new Error(`providers.${name}.modelsPath must be a path starting with /`);
    out.modelsPath = o.modelsPath;
  }
  return out;
}

/** A host on this machine: what `local` (requests cost nothing) is judged by, with noKey. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** The registry descriptor for a checked stored entry. */
export function toDescriptor(name: string, s: StoredProvider): ProviderDescriptor {
  const url = new URL(s.baseUrl);
  const defaults = PROTOCOL_FACTS[s.protocol].providerDefaults;
  // Added from a preset that caches by breakpoints, and still speaking that preset's protocol.
  const preset = s.preset ? findPreset(s.preset) : undefined;
  const breakpoints = preset?.cacheBreakpoints === true && preset.protocol === s.protocol;
  return {
    id: name,
    source: 'configured',
    displayName: s.displayName ?? name,
    aliases: [],
    protocol: s.protocol,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ''),
    auth: s.noKey ? null : s.auth ?? defaults.auth,
    headers: s.headers ?? {},
    keychainAccount: name,
    keyEnv: keyEnvFor(name),
    modelsPath: s.modelsPath ?? defaults.modelsPath,
    ...(s.models ? { models: s.models } : {}),
    ...(s.quirks ? { quirks: s.quirks } : {}),
    ...(s.preset ? { preset: s.preset } : {}),
    local: s.noKey === true || isLoopbackHost(url.hostname),
    families: [],
    familyHint: '',
    keyPrefix: '',
    keyUrl: '',
    owner: name,
    outputLimits: [],
    ...(breakpoints ? { cacheBreakpoints: DEFAULT_CACHE_MINIMUMS } : {}),
  };
}

/**
 * config.json's `providers` section → descriptors. A bad entry is left out and reported (the rest
 * still load): one typo must not take every other provider down.
 */
export function configuredProviders(section: unknown): { providers: ProviderDescriptor[]; stored: Record<string, StoredProvider>; problems: string[] } {
  const providers: ProviderDescriptor[] = [];
  const stored: Record<string, StoredProvider> = {};
  const problems: string[] = [];
  if (section === undefined) return { providers, stored, problems };
  if (!section || typeof section !== 'object' || Array.isArray(section)) return { providers, stored, problems: ['config providers: must be an object of name → provider'] };
  for (const [name, raw] of Object.entries(section)) {
    try {
      const s = validateStoredProvider(name, raw);
      stored[name] = s;
      providers.push(toDescriptor(name, s));
    } catch (e) {
      problems.push(`config providers.${name}: ${(e as Error).message}`);
    }
  }
  return { providers, stored, problems };
}
