// The names the gateway's telemetry uses from the OpenTelemetry GenAI semantic conventions, pinned
// at v1.41.1 (the last release of the GenAI conventions inside the main semantic-conventions
// repository; @opentelemetry/semantic-conventions 1.45.0, pinned in package.json, carries the same
// definitions, which a test compares). The conventions are still in development and renaming
// things: names are copied here, as that package recommends for its incubating entry point, so a
// package update can never rename a series under a user's dashboards.
import { findProvider } from '../../providers/registry.js';
import type { RequestMode } from '../observe/events.js';

export const SEMCONV_VERSION = '1.41.1';
export const SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  requestStream: 'gen_ai.request.stream',
  tokenType: 'gen_ai.token.type',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  conversationId: 'gen_ai.conversation.id',
  /** Opt-in content (captureContent): JSON strings in the conventions' message structure. */
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
} as const;

export const METRIC = {
  clientOperationDuration: 'gen_ai.client.operation.duration',
  clientTokenUsage: 'gen_ai.client.token.usage',
  clientTimeToFirstChunk: 'gen_ai.client.operation.time_to_first_chunk',
  clientTimePerOutputChunk: 'gen_ai.client.operation.time_per_output_chunk',
  serverRequestDuration: 'gen_ai.server.request.duration',
  serverTimeToFirstToken: 'gen_ai.server.time_to_first_token',
  serverTimePerOutputToken: 'gen_ai.server.time_per_output_token',
} as const;

/** The conventions' bucket advice for each histogram. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const TIME_TO_FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
export const TIME_PER_TOKEN_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5];

/** The well-known `gen_ai.provider.name` values, by the gateway's provider id or the preset a provider was added from. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  anthropic: 'anthropic', openai: 'openai', gemini: 'gcp.gemini', deepseek: 'deepseek', 'deepseek-anthropic': 'deepseek',
  groq: 'groq', mistral: 'mistral_ai', xai: 'x_ai', azure: 'azure.ai.openai', perplexity: 'perplexity', cohere: 'cohere',
};

/** `gen_ai.provider.name` for a provider: the conventions' value when one applies, else the gateway's id (a custom value). */
export function providerName(id: string): string {
  return PROVIDER_NAMES[id] ?? PROVIDER_NAMES[findProvider(id)?.preset ?? ''] ?? id;
}

/**
 * `gen_ai.operation.name` for a request: `chat` for the Chat, Messages and Responses doors (and
 * those paths under a native prefix), `generate_content` for Gemini's, `embeddings` and
 * `text_completion` for those native paths; a token count is the gateway's own `count_tokens`.
 * Null for a native request that is no model call (a model list): it gets no GenAI series.
 */
export function operationName(mode: RequestMode, path: string): string | null {
  if (path.endsWith('/count_tokens') || path.endsWith(':countTokens')) return 'count_tokens';
  if (mode === 'gemini') return 'generate_content';
  if (mode !== 'native') return 'chat';
  if (path.includes(':generateContent') || path.includes(':streamGenerateContent')) return 'generate_content';
  if (path.endsWith('/chat/completions') || path.endsWith('/messages') || path.endsWith('/responses')) return 'chat';
  if (path.endsWith('/embeddings') || path.includes(':embedContent') || path.includes(':batchEmbedContents')) return 'embeddings';
  if (path.endsWith('/completions')) return 'text_completion';
  return null;
}

/** The door as the gateway's own series name it (`unified` is the Chat door). */
export function doorName(mode: RequestMode): string {
  return mode === 'unified' ? 'chat' : mode;
}
