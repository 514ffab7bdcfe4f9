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
  /** Other protocols the same API serves with the same key (OpenAI: Responses beside Chat). */
  readonly alsoSpeaks?: readonly ProtocolId[];
  /**
   * Models that must be called through one protocol, by id pattern (OpenAI's Responses-only
   * models refuse Chat requests): a request for one is sent in that protocol whatever door it
   * came by. First match wins.
   */
  readonly modelProtocols?: ReadonlyArray<{ readonly match: RegExp; readonly protocol: ProtocolId }>;
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
  /** Bare model names that route here without a prefix (provider-reference.md §5.1), and how to say so. */
  readonly families: readonly RegExp[];
  readonly familyHint: string;
  /** How a real key usually starts, for a hint when a pasted one does not (never enforced: formats change). */
  readonly keyPrefix: string;
  /** Where a user gets a key. */
  readonly keyUrl: string;
  /**
   * How the provider's official SDK is pointed elsewhere (`gateway env`): the base-URL and key
   * variables it reads, the path its base URL ends in (openai appends /chat/completions to a base
   * ending in /v1; @anthropic-ai/sdk appends /v1/messages; @google/genai /v1beta/models/…), and
   * variables it prefers over ours, which would send another credential.
   */
  readonly sdk: { readonly baseUrlVar: string; readonly keyVar: string; readonly basePath: string; readonly preferredVars: readonly string[] };
  /**
   * The most output tokens its models accept per request, by model-id prefix (longest match wins):
   * a door whose clients ask for more (Claude Code sends max_tokens 32000) is capped, not refused.
   * A model not listed is not capped. From each provider's model pages.
   */
  readonly outputLimits: ReadonlyArray<readonly [prefix: string, max: number]>;
  /** `owned_by` in OpenAI-shaped model lists when the provider's own list does not say. */
  readonly owner: string;
  /** The model `gateway chat` picks when this is the first provider with a key. */
  readonly defaultChatModel: string;
  /** Its quirk profile's name (quirks.ts): how its Chat Completions API departs from OpenAI's. Absent: OpenAI's own behaviour. */
  readonly quirks?: string;
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
  familyHint: 'claude-…',
  keyPrefix: 'sk-ant-',
  keyUrl: 'https://console.anthropic.com/settings/keys',
  sdk: { baseUrlVar: 'ANTHROPIC_BASE_URL', keyVar: 'ANTHROPIC_API_KEY', basePath: '', preferredVars: ['ANTHROPIC_AUTH_TOKEN'] },
  outputLimits: [],
  owner: 'anthropic',
  defaultChatModel: 'anthropic/claude-opus-5',
};

const openai: ProviderDescriptor = {
  id: 'openai',
  displayName: 'OpenAI',
  aliases: [],
  protocol: 'openai-chat',
  alsoSpeaks: ['openai-responses'],
  // provider-reference.md §5.1 (OpenAI's `ModelIdsResponses`): not valid on Chat Completions.
  modelProtocols: [{ match: /^(o\d+-pro|o\d+(-mini)?-deep-research|computer-use-preview|gpt-[\d.]+-(pro|codex)|gpt-[\d.]+-codex-|codex-mini|gpt-[\d.]+-cyber|gpt-daybreak-)/, protocol: 'openai-responses' }],
  origin: 'https://api.openai.com',
  basePath: '',
  auth: { header: 'authorization', scheme: 'Bearer' },
  clientKeyPlacements: ['bearer'],
  keychainAccount: 'openai',
  keyEnv: 'GATEWAY_OPENAI_API_KEY',
  baseUrlEnv: 'GATEWAY_OPENAI_BASE_URL',
  modelsPath: '/v1/models',
  families: [/^(gpt-|chatgpt-|codex-)/, /^o\d(-|$)/, /^computer-use-preview$/],
  familyHint: 'gpt-…, o1/o3/o4…, chatgpt-…',
  keyPrefix: 'sk-',
  keyUrl: 'https://platform.openai.com/api-keys',
  sdk: { baseUrlVar: 'OPENAI_BASE_URL', keyVar: 'OPENAI_API_KEY', basePath: '/v1', preferredVars: [] },
  // platform.openai.com/docs/models: gpt-4o 16,384; gpt-4.1 32,768; o-series 100,000; gpt-5.x 128,000.
  outputLimits: [['gpt-3.5-turbo', 4_096], ['gpt-4-turbo', 4_096], ['gpt-4o', 16_384], ['chatgpt-4o', 16_384], ['gpt-4.1', 32_768], ['o1', 100_000], ['o3', 100_000], ['o4', 100_000], ['gpt-5', 128_000]],
  owner: 'openai',
  defaultChatModel: 'openai/gpt-5.4',
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
  familyHint: 'gemini-…',
  keyPrefix: 'AIza',
  keyUrl: 'https://aistudio.google.com/apikey',
  sdk: { baseUrlVar: 'GOOGLE_GEMINI_BASE_URL', keyVar: 'GEMINI_API_KEY', basePath: '', preferredVars: ['GOOGLE_API_KEY'] },
  // ai.google.dev/gemini-api/docs/models: gemini-2.0-flash 8,192; 2.5 and 3.x 65,536.
  outputLimits: [['gemini-2.0', 8_192], ['gemini-2.5', 65_536], ['gemini-3', 65_536]],
  owner: 'google',
  defaultChatModel: 'gemini/gemini-3.5-flash',
};

/** The built-in providers, in the order lists show them. */
export const BUILTIN_PROVIDERS: readonly ProviderDescriptor[] = [anthropic, openai, gemini];

const byName = new Map<string, ProviderDescriptor>();
for (const p of BUILTIN_PROVIDERS) for (const name of [p.id, ...p.aliases]) byName.set(name, p);

/** Every provider id, in list order. */
export const PROVIDER_IDS: readonly string[] = BUILTIN_PROVIDERS.map((p) => p.id);

/** The descriptor for a provider id the daemon already resolved (throws on an unknown id: a bug). */
export function provider(id: string): ProviderDescriptor {
  const p = byName.get(id);
  if (!p) throw new Error(`unknown provider id "${id}"`);
  return p;
}

/** The provider a name (id or alias, any case) stands for. */
export function findProvider(name: string): ProviderDescriptor | undefined {
  return byName.get(name.toLowerCase());
}

/** The provider whose bare model names include `model`, if any. */
export function providerForFamily(model: string): ProviderDescriptor | undefined {
  return BUILTIN_PROVIDERS.find((p) => p.families.some((re) => re.test(model)));
}

/**
 * Splits `<provider>/<rest>` when the first segment names a provider (id or alias, any case);
 * the rest is the provider's own model id, slashes included.
 */
export function splitProviderPrefix(name: string): { provider: ProviderDescriptor; rest: string } | undefined {
  const slash = name.indexOf('/');
  if (slash <= 0) return undefined;
  const p = findProvider(name.slice(0, slash));
  return p ? { provider: p, rest: name.slice(slash + 1) } : undefined;
}

/** A model name without its provider prefix, if it has one. */
export function withoutProviderPrefix(name: string): string {
  return splitProviderPrefix(name)?.rest ?? name;
}

/** The most output tokens `model` of `providerId` accepts, when its descriptor knows. */
export function maxOutputTokens(providerId: string, model: string): number | undefined {
  let best: readonly [string, number] | undefined;
  for (const limit of byName.get(providerId)?.outputLimits ?? []) {
    if (model.startsWith(limit[0]) && (!best || limit[0].length > best[0].length)) best = limit;
  }
  return best?.[1];
}

/**
 * The protocol a request for `model` is sent upstream in, coming by a door that speaks `door`:
 * the model's own rule first, else the door's protocol when the provider serves it (the fast
 * path), else the provider's main protocol.
 */
export function upstreamProtocol(p: ProviderDescriptor, model: string, door: ProtocolId): ProtocolId {
  const rule = p.modelProtocols?.find((r) => r.match.test(model));
  if (rule) return rule.protocol;
  return door === p.protocol || p.alsoSpeaks?.includes(door) ? door : p.protocol;
}

/** Names accepted wherever a provider is named: ids and aliases. */
export function providerNames(): string[] {
  return [...byName.keys()];
}
