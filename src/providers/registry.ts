// The provider registry: one descriptor per provider, as data. Everything that differs between
// providers (origin, how the key travels, where it is kept, the env vars that override it, the
// models path, which bare model names are theirs, quirks) is read from here; nothing else in the
// codebase names a provider. A provider configured by the user later is one more descriptor.
import type { ProtocolId } from './ir/protocol.js';

/** Where a client may put its proxy key on a native prefix (Bearer always, plus each SDK's default spot). */
export type KeyPlacement = 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'query';

export interface ProviderDescriptor {
  /** Lowercase id: the native prefix (`/<id>/…`), the routing prefix (`<id>/model`), the CLI argument. */
  readonly id: string;
  readonly displayName: string;
  /** Other names accepted as a routing prefix and CLI argument (`google` for Gemini). */
  readonly aliases: readonly string[];
  /** The wire protocol its API speaks. */
  readonly protocol: ProtocolId;
  /** The API's origin (overridable with `baseUrlEnv`); protocol paths are appended to `basePath`. */
  readonly origin: string;
  readonly basePath: string;
  /** How the provider's own key is sent upstream. */
  readonly auth: { readonly header: string; readonly scheme?: 'Bearer' };
  /** Where the native prefix accepts a client's proxy key. */
  readonly clientKeyPlacements: readonly KeyPlacement[];
  /** The keychain account that holds its key, and the env var that overrides it. */
  readonly keychainAccount: string;
  readonly keyEnv: string;
  readonly baseUrlEnv: string;
  /** Lists its models (GET, relative to the origin). */
  readonly modelsPath: string;
  /** Bare model names that route here without a prefix (provider-reference.md §5.1). */
  readonly families: readonly RegExp[];
  /** What a real key looks like, for hints (never validated strictly: formats change). */
  readonly keyHint: string;
  /** Where a user gets a key. */
  readonly keyUrl: string;
}

const anthropic: ProviderDescriptor = {
  id: 'anthropic',
  displayName: 'Anthropic',
  aliases: [],
  protocol: 'anthropic',
  origin: 'https://api.anthropic.com',
  basePath: '',
  auth: { header: 'x-api-key' },
  clientKeyPlacements: ['bearer', 'x-api-key'],
  keychainAccount: 'anthropic',
  keyEnv: 'GATEWAY_ANTHROPIC_API_KEY',
  baseUrlEnv: 'GATEWAY_ANTHROPIC_BASE_URL',
  modelsPath: '/v1/models?limit=1000',
  families: [/^claude-/],
  keyHint: 'sk-ant-…',
  keyUrl: 'https://console.anthropic.com/settings/keys',
};

const openai: ProviderDescriptor = {
  id: 'openai',
  displayName: 'OpenAI',
  aliases: [],
  protocol: 'openai-chat',
  origin: 'https://api.openai.com',
  basePath: '',
  auth: { header: 'authorization', scheme: 'Bearer' },
  clientKeyPlacements: ['bearer'],
  keychainAccount: 'openai',
  keyEnv: 'GATEWAY_OPENAI_API_KEY',
  baseUrlEnv: 'GATEWAY_OPENAI_BASE_URL',
  modelsPath: '/v1/models',
  families: [/^(gpt-|chatgpt-|codex-)/, /^o\d(-|$)/, /^computer-use-preview$/],
  keyHint: 'sk-…',
  keyUrl: 'https://platform.openai.com/api-keys',
};

const gemini: ProviderDescriptor = {
  id: 'gemini',
  displayName: 'Gemini',
  aliases: ['google'],
  protocol: 'gemini',
  origin: 'https://generativelanguage.googleapis.com',
  basePath: '',
  auth: { header: 'x-goog-api-key' },
  clientKeyPlacements: ['bearer', 'x-goog-api-key', 'query'],
  keychainAccount: 'gemini',
  keyEnv: 'GATEWAY_GEMINI_API_KEY',
  baseUrlEnv: 'GATEWAY_GEMINI_BASE_URL',
  modelsPath: '/v1beta/models?pageSize=1000',
  families: [/^(gemini-|gemma-)/],
  keyHint: 'AIza…',
  keyUrl: 'https://aistudio.google.com/apikey',
};

/** The built-in providers, in the order lists show them. */
export const BUILTIN_PROVIDERS: readonly ProviderDescriptor[] = [anthropic, openai, gemini];

const byName = new Map<string, ProviderDescriptor>();
for (const p of BUILTIN_PROVIDERS) for (const name of [p.id, ...p.aliases]) byName.set(name, p);

/** The provider a name (id or alias, any case) stands for. */
export function findProvider(name: string): ProviderDescriptor | undefined {
  return byName.get(name.toLowerCase());
}

/** The provider whose bare model names include `model`, if any. */
export function providerForFamily(model: string): ProviderDescriptor | undefined {
  return BUILTIN_PROVIDERS.find((p) => p.families.some((re) => re.test(model)));
}

/** Names accepted wherever a provider is named: ids and aliases. */
export function providerNames(): string[] {
  return [...byName.keys()];
}
