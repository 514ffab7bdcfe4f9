// Presets for `gateway providers add <name> --preset <id>`: what the user would otherwise type as
// --protocol/--base-url, as data. Adding one is one command; the result is a stored provider like
// any other (configured.ts), so a preset's values can still be overridden at `add` time.
// A provider serving two protocols (DeepSeek, Moonshot, Z.ai and MiniMax offer OpenAI Chat and an
// Anthropic-compatible endpoint, each with the same key) has one preset per endpoint,
// `<id>` and `<id>-anthropic`: add either or both, under different names.
import type { ProtocolId } from './ir/protocol.js';

export interface ProviderPreset {
  readonly id: string;
  readonly displayName: string;
  readonly protocol: ProtocolId;
  /** As its SDK takes it; `<resource>` is filled from `--resource` (Azure). */
  readonly baseUrl: string;
  /** A local server that takes no key. */
  readonly noKey?: true;
  /** The variable the vendor's own docs keep the key in: shown in hints, never read by the gateway. */
  readonly vendorKeyEnv?: string;
  /** When the key does not travel the protocol's usual way (Azure's `api-key`). */
  readonly auth?: { readonly header: string; readonly scheme?: 'Bearer' };
  /** When its models list is not at the protocol's usual path. */
  readonly modelsPath?: string;
  /** The quirk profile its calls follow (the quirk table names these). */
  readonly quirks?: string;
  /** Where its API is documented (the base URL was checked there). */
  readonly docs: string;
  /** A note `providers add` prints (a port clash, a placeholder to fill). */
  readonly note?: string;
  /**
   * The preset whose list prices (data/prices.json "presets") its requests are billed at, when it
   * is another endpoint of the same API and account (DeepSeek's Anthropic endpoint: DeepSeek's).
   */
  readonly billedAs?: string;
  /**
   * An Anthropic-protocol API that, like Anthropic's, caches a prompt only up to the breakpoints a
   * request marks with `cache_control`: the gateway marks them for clients that cannot (the
   * others cache a repeated prefix by themselves). Its minimum is Anthropic's usual floor.
   */
  readonly cacheBreakpoints?: true;
}

export const PRESETS: readonly ProviderPreset[] = [
  // docs.ollama.com/api/openai-compatibility: OpenAI-compatible under /v1, no key.
  { id: 'ollama', displayName: 'Ollama', protocol: 'openai-chat', baseUrl: 'http://localhost:11434/v1', noKey: true, quirks: 'ollama', docs: 'https://docs.ollama.com/api/openai-compatibility' },
  // lmstudio.ai/docs/app/api/endpoints/openai: the local server on port 1234.
  { id: 'lmstudio', displayName: 'LM Studio', protocol: 'openai-chat', baseUrl: 'http://localhost:1234/v1', noKey: true, docs: 'https://lmstudio.ai/docs/app/api/endpoints/openai' },
  // docs.vllm.ai (OpenAI-compatible server, `vllm serve`, port 8000); a key only when started with --api-key.
  { id: 'vllm', displayName: 'vLLM', protocol: 'openai-chat', baseUrl: 'http://localhost:8000/v1', noKey: true, quirks: 'vllm', docs: 'https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html' },
  // llama-server listens on 8080 by default (github.com/ggml-org/llama.cpp tools/server), which is
  // also the gateway's default port: the preset expects it on 8081 (`llama-server --port 8081`).
  {
    id: 'llamacpp', displayName: 'llama.cpp', protocol: 'openai-chat', baseUrl: 'http://localhost:8081/v1', noKey: true,
    docs: 'https://github.com/ggml-org/llama.cpp/tree/master/tools/server',
    note: 'llama-server listens on 8080 by default, the gateway\'s own port: start it with --port 8081 (or give --base-url)',
  },
  // openrouter.ai/docs/api-reference/overview
  { id: 'openrouter', displayName: 'OpenRouter', protocol: 'openai-chat', baseUrl: 'https://openrouter.ai/api/v1', vendorKeyEnv: 'OPENROUTER_API_KEY', quirks: 'openrouter', docs: 'https://openrouter.ai/docs/api-reference/overview' },
  // api-docs.deepseek.com: base_url https://api.deepseek.com (…/v1 also accepted); Anthropic API at /anthropic.
  { id: 'deepseek', displayName: 'DeepSeek', protocol: 'openai-chat', baseUrl: 'https://api.deepseek.com', vendorKeyEnv: 'DEEPSEEK_API_KEY', quirks: 'deepseek', docs: 'https://api-docs.deepseek.com/' },
  { id: 'deepseek-anthropic', displayName: 'DeepSeek (Anthropic API)', protocol: 'anthropic', baseUrl: 'https://api.deepseek.com/anthropic', vendorKeyEnv: 'DEEPSEEK_API_KEY', billedAs: 'deepseek', docs: 'https://api-docs.deepseek.com/guides/anthropic_api' },
  // console.groq.com/docs/openai
  { id: 'groq', displayName: 'Groq', protocol: 'openai-chat', baseUrl: 'https://api.groq.com/openai/v1', vendorKeyEnv: 'GROQ_API_KEY', quirks: 'groq', docs: 'https://console.groq.com/docs/openai' },
  // docs.mistral.ai/api
  { id: 'mistral', displayName: 'Mistral', protocol: 'openai-chat', baseUrl: 'https://api.mistral.ai/v1', vendorKeyEnv: 'MISTRAL_API_KEY', quirks: 'mistral', docs: 'https://docs.mistral.ai/api/' },
  // docs.x.ai/docs/api-reference
  { id: 'xai', displayName: 'xAI', protocol: 'openai-chat', baseUrl: 'https://api.x.ai/v1', vendorKeyEnv: 'XAI_API_KEY', quirks: 'xai', docs: 'https://docs.x.ai/docs/api-reference' },
  // inference-docs.cerebras.ai/resources/openai
  { id: 'cerebras', displayName: 'Cerebras', protocol: 'openai-chat', baseUrl: 'https://api.cerebras.ai/v1', vendorKeyEnv: 'CEREBRAS_API_KEY', docs: 'https://inference-docs.cerebras.ai/resources/openai' },
  // docs.together.ai/docs/openai-api-compatibility
  { id: 'together', displayName: 'Together AI', protocol: 'openai-chat', baseUrl: 'https://api.together.xyz/v1', vendorKeyEnv: 'TOGETHER_API_KEY', docs: 'https://docs.together.ai/docs/openai-api-compatibility' },
  // docs.fireworks.ai/tools-sdks/openai-compatibility
  { id: 'fireworks', displayName: 'Fireworks AI', protocol: 'openai-chat', baseUrl: 'https://api.fireworks.ai/inference/v1', vendorKeyEnv: 'FIREWORKS_API_KEY', docs: 'https://docs.fireworks.ai/tools-sdks/openai-compatibility' },
  // platform.moonshot.ai/docs (OpenAI-compatible /v1; Anthropic-compatible /anthropic for Claude Code)
  { id: 'moonshot', displayName: 'Moonshot AI (Kimi)', protocol: 'openai-chat', baseUrl: 'https://api.moonshot.ai/v1', vendorKeyEnv: 'MOONSHOT_API_KEY', docs: 'https://platform.moonshot.ai/docs/api/chat' },
  { id: 'moonshot-anthropic', displayName: 'Moonshot AI (Anthropic API)', protocol: 'anthropic', baseUrl: 'https://api.moonshot.ai/anthropic', vendorKeyEnv: 'MOONSHOT_API_KEY', billedAs: 'moonshot', docs: 'https://platform.moonshot.ai/docs/guide/agent-support' },
  // docs.z.ai/api-reference/introduction (general /api/paas/v4); docs.z.ai/devpack/tool/claude (/api/anthropic)
  // zai-anthropic is not billedAs zai: it is the GLM Coding Plan's endpoint (a flat fee), so it stays unpriced.
  { id: 'zai', displayName: 'Z.ai (GLM)', protocol: 'openai-chat', baseUrl: 'https://api.z.ai/api/paas/v4', vendorKeyEnv: 'ZAI_API_KEY', docs: 'https://docs.z.ai/api-reference/introduction' },
  { id: 'zai-anthropic', displayName: 'Z.ai (Anthropic API)', protocol: 'anthropic', baseUrl: 'https://api.z.ai/api/anthropic', vendorKeyEnv: 'ZAI_API_KEY', docs: 'https://docs.z.ai/devpack/tool/claude' },
  // platform.minimax.io/docs/api-reference/text-openai-api and …/text-anthropic-api; its Anthropic API
  // caches by cache_control breakpoints (…/anthropic-api-compatible-cache).
  { id: 'minimax', displayName: 'MiniMax', protocol: 'openai-chat', baseUrl: 'https://api.minimax.io/v1', vendorKeyEnv: 'MINIMAX_API_KEY', docs: 'https://platform.minimax.io/docs/api-reference/text-openai-api' },
  { id: 'minimax-anthropic', displayName: 'MiniMax (Anthropic API)', protocol: 'anthropic', baseUrl: 'https://api.minimax.io/anthropic', vendorKeyEnv: 'MINIMAX_API_KEY', billedAs: 'minimax', cacheBreakpoints: true, docs: 'https://platform.minimax.io/docs/api-reference/text-anthropic-api' },
  // learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle: the v1 API needs no
  // api-version; the key travels in `api-key`; the model is the deployment name.
  {
    id: 'azure', displayName: 'Azure OpenAI', protocol: 'openai-chat', baseUrl: 'https://<resource>.openai.azure.com/openai/v1', vendorKeyEnv: 'AZURE_OPENAI_API_KEY',
    auth: { header: 'api-key' }, docs: 'https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle',
    note: 'models are your deployment names: azure/<deployment>',
  },
];

export function findPreset(id: string): ProviderPreset | undefined {
  return PRESETS.find((p) => p.id === id.toLowerCase());
}

/** A preset's base URL with its placeholders filled; throws naming the option that is missing. */
export function presetBaseUrl(preset: ProviderPreset, opts: { resource?: string }): string {
  if (!preset.baseUrl.includes('<resource>')) return preset.baseUrl;
  if (!opts.resource) throw new Error(`the ${preset.id} preset needs --resource <name> (the <resource> in ${preset.baseUrl}) or --base-url`);
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(opts.resource)) throw new Error(`--resource "${opts.resource}" must be letters, digits and '-'`);
  return preset.baseUrl.replace('<resource>', opts.resource.toLowerCase());
}
