// The provider registry: one descriptor per provider, as data. Everything that differs between
// providers (origin, how the key travels, where it is kept, the env vars that override it, the
// models path, which bare model names are theirs, quirks) is read from here; nothing else in the
// codebase names a provider. The registry is the built-in descriptors plus the ones the user
// configured (`gateway providers add`, kept in config.json and turned into descriptors by
// configured.ts); every lookup below sees both.
import type { ProtocolId } from './ir/protocol.js';
import { PROTOCOL_FACTS, type KeyPlacement } from './protocol-facts.js';

export type { KeyPlacement };

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
  /** Built into the gateway, or added by the user (`gateway providers add`). */
  readonly source: 'builtin' | 'configured';
  /**
   * The API's origin and the path its base URL carries (`/v1`, `/api/paas/v4`, `/anthropic`, or
   * ''); protocol paths are mapped onto it by `upstreamPath`.
   */
  readonly origin: string;
  readonly basePath: string;
  /** How the provider's own key is sent upstream; null: it takes no key (a local server), and gets no credential at all. */
  readonly auth: { readonly header: string; readonly scheme?: 'Bearer' } | null;
  /** Headers every upstream call carries unless the client sent its own (OpenRouter's attribution); never a credential. */
  readonly headers: Readonly<Record<string, string>>;
  /** The keychain account that holds its key, and the env var that overrides it. */
  readonly keychainAccount: string;
  readonly keyEnv: string;
  /** Lists its models (GET, a protocol path mapped like every other by `upstreamPath`). */
  readonly modelsPath: string;
  /** Its models when it has no models endpoint (`providers add --models a,b`): listed instead of asking. */
  readonly models?: readonly string[];
  /**
   * The named quirk profile its calls follow (`providers add --preset`/`--quirks`), if any: how its
   * Chat Completions API departs from OpenAI's (quirks.ts). Absent: OpenAI's own behaviour.
   */
  readonly quirks?: string;
  /** The preset it was added from, if any. */
  readonly preset?: string;
  /** A server on this machine, or one that takes no key: its requests cost nothing. */
  readonly local: boolean;
  /** Bare model names that route here without a prefix (provider-reference.md §5.1), and how to say so. */
  readonly families: readonly RegExp[];
  readonly familyHint: string;
  /** How a real key usually starts, for a hint when a pasted one does not (never enforced: formats change). */
  readonly keyPrefix: string;
  /** Where a user gets a key. */
  readonly keyUrl: string;
  /** `owned_by` in OpenAI-shaped model lists when the provider's own list does not say. */
  readonly owner: string;
  /**
   * The most output tokens its models accept per request, by model-id prefix (longest match wins):
   * a door whose clients ask for more (Claude Code sends max_tokens 32000) is capped, not refused.
   * A model not listed is not capped. From each provider's model pages.
   */
  readonly outputLimits: ReadonlyArray<readonly [prefix: string, max: number]>;
  /**
   * The provider caches a prompt only up to the breakpoints a request marks (Anthropic's
   * `cache_control`), so the gateway marks them for clients that cannot (daemon/caching/): the
   * fewest tokens a marked prefix needs to be cached, by model-id prefix (longest match wins), and
   * for any other model. Absent: the provider caches by itself, or not at all.
   */
  readonly cacheBreakpoints?: CacheMinimums;
  /** It takes OpenAI's `prompt_cache_key`: requests naming the same key are kept on the same prompt cache. */
  readonly promptCacheKey?: true;
}

export interface CacheMinimums {
  readonly minTokens: number;
  readonly byModel: ReadonlyArray<readonly [prefix: string, min: number]>;
}

/** The least cacheable prefix where nothing more is known (Anthropic's floor for most of its models). */
export const DEFAULT_CACHE_MINIMUMS: CacheMinimums = { minTokens: 1024, byModel: [] };

/** What only the built-in providers have: an origin override, SDK variables, a default chat model. */
export interface BuiltinDescriptor extends ProviderDescriptor {
  readonly source: 'builtin';
  readonly baseUrlEnv: string;
  /**
   * How the provider's official SDK is pointed elsewhere (`gateway env`): the base-URL and key
   * variables it reads, the path its base URL ends in (openai appends /chat/completions to a base
   * ending in /v1; @anthropic-ai/sdk appends /v1/messages; @google/genai /v1beta/models/…), and
   * variables it prefers over ours, which would send another credential.
   */
  readonly sdk: { readonly baseUrlVar: string; readonly keyVar: string; readonly basePath: string; readonly preferredVars: readonly string[] };
  /** The model `gateway chat` picks when this is the first provider with a key. */
  readonly defaultChatModel: string;
}

const anthropic: BuiltinDescriptor = {
  id: 'anthropic',
  source: 'builtin',
  displayName: 'Anthropic',
  aliases: [],
  protocol: 'anthropic',
  origin: 'https://api.anthropic.com',
  basePath: '',
  headers: {},
  local: false,
  auth: { header: 'x-api-key' },
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
  // platform.claude.com/docs/en/build-with-claude/prompt-caching ("Cache limitations"), as of
  // Oct 2026: 512 for Opus 5, Fable 5, Mythos 5; 1,024 for Sonnet 5, Opus 4.8, Sonnet 4.x, Opus 4
  // and 4.1, Sonnet 3.7; 2,048 for Opus 4.7 and Haiku 3/3.5; 4,096 for Opus 4.5/4.6 and Haiku 4.5.
  cacheBreakpoints: {
    minTokens: 1024,
    byModel: [
      ['claude-opus-5', 512], ['claude-fable-5', 512], ['claude-mythos-5', 512], ['claude-sonnet-5', 1024],
      ['claude-opus-4', 1024], ['claude-opus-4-5', 4096], ['claude-opus-4-6', 4096], ['claude-opus-4-7', 2048], ['claude-opus-4-8', 1024],
      ['claude-sonnet-4', 1024], ['claude-haiku-4-5', 4096], ['claude-3-7-sonnet', 1024], ['claude-3-5-haiku', 2048], ['claude-3-haiku', 2048],
    ],
  },
  owner: 'anthropic',
  defaultChatModel: 'anthropic/claude-opus-5',
};

const openai: BuiltinDescriptor = {
  id: 'openai',
  source: 'builtin',
  displayName: 'OpenAI',
  aliases: [],
  protocol: 'openai-chat',
  alsoSpeaks: ['openai-responses'],
  // provider-reference.md §5.1 (OpenAI's `ModelIdsResponses`): not valid on Chat Completions.
  modelProtocols: [{ match: /^(o\d+-pro|o\d+(-mini)?-deep-research|computer-use-preview|gpt-[\d.]+-(pro|codex)|gpt-[\d.]+-codex-|codex-mini|gpt-[\d.]+-cyber|gpt-daybreak-)/, protocol: 'openai-responses' }],
  origin: 'https://api.openai.com',
  basePath: '',
  headers: {},
  local: false,
  auth: { header: 'authorization', scheme: 'Bearer' },
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
  promptCacheKey: true,
  outputLimits: [['gpt-3.5-turbo', 4_096], ['gpt-4-turbo', 4_096], ['gpt-4o', 16_384], ['chatgpt-4o', 16_384], ['gpt-4.1', 32_768], ['o1', 100_000], ['o3', 100_000], ['o4', 100_000], ['gpt-5', 128_000]],
  owner: 'openai',
  defaultChatModel: 'openai/gpt-5.4',
};

const gemini: BuiltinDescriptor = {
  id: 'gemini',
  source: 'builtin',
  displayName: 'Gemini',
  aliases: ['google'],
  protocol: 'gemini',
  origin: 'https://generativelanguage.googleapis.com',
  basePath: '',
  headers: {},
  local: false,
  auth: { header: 'x-goog-api-key' },
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
export const BUILTIN_PROVIDERS: readonly BuiltinDescriptor[] = [anthropic, openai, gemini];

// The registry as it stands: built-ins first, then the configured ones (replaced as a whole when
// the user adds, changes or removes one). One daemon per process holds one configured set.
let all: readonly ProviderDescriptor[] = BUILTIN_PROVIDERS;
let byName = new Map<string, ProviderDescriptor>();
let authHeaders: ReadonlySet<string> = new Set();
index();

function index(): void {
  const next = new Map<string, ProviderDescriptor>();
  for (const p of all) for (const name of [p.id, ...p.aliases]) if (!next.has(name)) next.set(name, p);
  byName = next;
  authHeaders = new Set(all.flatMap((p) => (p.auth ? [p.auth.header] : [])));
}

/** Every header some provider takes its key in (lowercase): a client's value in one is a credential, never forwarded. */
export function isProviderAuthHeader(name: string): boolean {
  return authHeaders.has(name);
}

/**
 * Replaces the configured providers (descriptors from configured.ts). A name a built-in already
 * holds is ignored: configured.ts refuses those, so this only guards against a hand-edited file.
 */
export function setConfiguredProviders(list: readonly ProviderDescriptor[]): void {
  const builtinNames = new Set(BUILTIN_PROVIDERS.flatMap((p) => [p.id, ...p.aliases]));
  all = [...BUILTIN_PROVIDERS, ...list.filter((p) => !builtinNames.has(p.id))];
  index();
}

/** Every provider, built-in then configured, in the order lists show them. */
export function allProviders(): readonly ProviderDescriptor[] {
  return all;
}

/** Every provider id, in list order. */
export function providerIds(): string[] {
  return all.map((p) => p.id);
}

/** The descriptor for a provider id the daemon already resolved (throws on an unknown id: a bug). */
export function provider(id: string): ProviderDescriptor {
  const p = byName.get(id);
  if (!p) throw new Error(`unknown provider id "${id}"`);
  return p;
}

/** The built-in descriptor for an id (throws for anything else: a bug). */
export function builtinProvider(id: string): BuiltinDescriptor {
  const p = BUILTIN_PROVIDERS.find((b) => b.id === id);
  if (!p) throw new Error(`"${id}" is not a built-in provider`);
  return p;
}

/** The built-in provider whose main protocol is `protocol` (Anthropic's for Messages, Gemini's for Gemini), if any. */
export function builtinProviderFor(protocol: ProtocolId): BuiltinDescriptor | undefined {
  return BUILTIN_PROVIDERS.find((p) => p.protocol === protocol);
}

/** The provider a name (id or alias, any case) stands for. */
export function findProvider(name: string): ProviderDescriptor | undefined {
  return byName.get(name.toLowerCase());
}

/** The provider whose bare model names include `model`, if any. */
export function providerForFamily(model: string): ProviderDescriptor | undefined {
  return all.find((p) => p.families.some((re) => re.test(model)));
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
  return byPrefix(byName.get(providerId)?.outputLimits ?? [], model);
}

/** The longest prefix of `model` a table lists, and its value. */
function byPrefix(table: ReadonlyArray<readonly [string, number]>, model: string): number | undefined {
  let best: readonly [string, number] | undefined;
  for (const row of table) if (model.startsWith(row[0]) && (!best || row[0].length > best[0].length)) best = row;
  return best?.[1];
}

/** The fewest tokens a marked prefix of `model` needs to be cached, by the provider's table (or Anthropic's usual floor). */
export function cacheMinimum(p: Pick<ProviderDescriptor, 'cacheBreakpoints'>, model: string): number {
  const m = p.cacheBreakpoints ?? DEFAULT_CACHE_MINIMUMS;
  return byPrefix(m.byModel, model) ?? m.minTokens;
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

/**
 * The path a protocol path (`/v1/chat/completions`, a native request's path under `/<id>`) takes
 * on the provider's server, given the path its base URL carries. The rule:
 * 1. No base path (the built-ins, `https://api.deepseek.com`): the path as the protocol writes it.
 * 2. A protocol whose base URLs end at the API version (OpenAI's: SDKs take `…/v1` and append
 *    `/chat/completions`): the path's leading version segment stands for the whole base path, so
 *    `/v1/chat/completions` goes to `/api/paas/v4/chat/completions` or `/openai/v1/chat/completions`.
 * 3. Otherwise (Anthropic's and Gemini's SDKs append `/v1/…` to a root such as `…/anthropic`):
 *    base path + path, with the longest run of whole segments that ends the one and starts the
 *    other written once, so `/anthropic/v1` + `/v1/messages` is `/anthropic/v1/messages`.
 * Never `/v1/v1/…`. A query string rides along untouched.
 */
export function upstreamPath(p: Pick<ProviderDescriptor, 'basePath' | 'protocol'>, path: string): string {
  return joinBasePath(p.basePath, path, PROTOCOL_FACTS[p.protocol].baseVersion);
}

/** `upstreamPath`'s rule on bare values (exported for its tests). */
export function joinBasePath(basePath: string, path: string, baseVersion: string | undefined): string {
  const base = basePath.replace(/\/+$/, '');
  if (!base) return path;
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  const query = q === -1 ? '' : path.slice(q);
  if (baseVersion && (pathname === baseVersion || pathname.startsWith(`${baseVersion}/`))) {
    return `${base}${pathname.slice(baseVersion.length)}${query}`;
  }
  const baseSegs = base.split('/').slice(1);
  const pathSegs = pathname.split('/').slice(1);
  for (let n = Math.min(baseSegs.length, pathSegs.length); n > 0; n--) {
    const tail = baseSegs.slice(baseSegs.length - n);
    if (tail.every((s, i) => s === pathSegs[i])) {
      const rest = pathSegs.slice(n).join('/');
      return `${rest ? `${base}/${rest}` : base}${query}`;
    }
  }
  return `${base}${pathname}${query}`;
}
