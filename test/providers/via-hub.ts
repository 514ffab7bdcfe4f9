// The earlier Chat ⇄ Anthropic and Chat ⇄ Gemini translators' interface, served by the hub's modules
// (the Chat door's client side composed with each provider side), so the unit tests written for
// those translators keep testing the behaviour /v1/chat/completions has now.
import type { ProviderProtocol, RenderContext, Target } from '../../src/providers/ir/protocol.js';
import type { Usage } from '../../src/providers/ir/types.js';
import { fromAnthropicStopReason } from '../../src/providers/protocols/anthropic/stop-reason.js';
import { mergeAnthropicUsage, toIrUsage, ZERO_TOKEN_COUNTS } from '../../src/providers/protocols/anthropic/usage.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import { fromGeminiFinishReason } from '../../src/providers/protocols/gemini/finish-reason.js';
import { fromGeminiUsage as geminiUsageToIr } from '../../src/providers/protocols/gemini/usage.js';
import { geminiProvider } from '../../src/providers/protocols/gemini/provider/index.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { CHAT_FIELD_POLICY } from '../../src/providers/protocols/openai-chat/client/field-policy.js';
import { toChatFinishReason, toChatUsage } from '../../src/providers/protocols/openai-chat/wire.js';
import type { ChatCompletion, ChatCompletionRequest, OpenAIErrorBody, OpenAIUsage, SseEvent, UpstreamCall } from '../../src/providers/types.js';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/** What the earlier translators took per request (the daemon now builds a RenderContext instead). */
export interface TranslateContext {
  model: string;
  /** The model name shown to the client when the request named it with its provider. */
  displayModel?: string;
  created: number;
  fallbackId: string;
  includeUsage: boolean;
}

/** One Chat frame of a translated stream. */
export type StreamOutput = { kind: 'chunk'; chunk: ChatCompletionChunk } | { kind: 'error'; error: OpenAIErrorBody };

export interface StreamTranslator {
  push(event: SseEvent): StreamOutput[];
  end(): StreamOutput[];
  usage(): OpenAIUsage | undefined;
  complete(): boolean;
}

export interface TranslatingProvider {
  toRequest(req: ChatCompletionRequest, ctx: TranslateContext): UpstreamCall;
  fromResponse(body: unknown, ctx: TranslateContext): ChatCompletion;
  createStreamTranslator(ctx: TranslateContext): StreamTranslator;
  fromError(status: number, bodyText: string): { status: number; body: OpenAIErrorBody };
}

/** The Chat frames of a piece of stream text, without `[DONE]`. */
function outputs(text: string): StreamOutput[] {
  return text.split('\n\n').filter((f) => f.startsWith('data: ') && f !== 'data: [DONE]').map((f) => {
    const v = JSON.parse(f.slice(6)) as Record<string, unknown>;
    return 'error' in v && !('choices' in v) ? { kind: 'error', error: v as unknown as OpenAIErrorBody } : { kind: 'chunk', chunk: v as never };
  });
}

function via(provider: ProviderProtocol, id: string, displayName: string): TranslatingProvider {
  const target = (ctx: TranslateContext): Target => ({ provider: id, displayName, model: ctx.model, protocol: provider.id });
  // The daemon's naming rule: as asked when the request named a provider, else provider/<the id it served>.
  const rctx = (ctx: TranslateContext): RenderContext => (ctx.displayModel !== undefined
    ? { model: ctx.displayModel, created: ctx.created, fallbackId: ctx.fallbackId, includeUsage: ctx.includeUsage }
    : { model: `${id}/${ctx.model}`, modelPrefix: `${id}/`, created: ctx.created, fallbackId: ctx.fallbackId, includeUsage: ctx.includeUsage });
  return {
    toRequest: (req, ctx) => provider.buildRequest(openaiChatClient.parseRequest(req, target(ctx)), target(ctx)),
    fromResponse: (body, ctx) => openaiChatClient.renderResponse(provider.readResponse(body, target(ctx)), rctx(ctx)) as ChatCompletion,
    createStreamTranslator(ctx) {
      const reader = provider.createStreamReader(target(ctx));
      const renderer = openaiChatClient.createStreamRenderer(rctx(ctx));
      return {
        push: (event) => outputs(reader.push(event).map((e) => renderer.push(e)).join('')),
        end: () => outputs(reader.end().map((e) => renderer.push(e)).join('') + renderer.end()),
        usage: () => { const u = reader.usage(); return u === undefined ? undefined : toChatUsage(u); },
        complete: () => reader.complete(),
      };
    },
    fromError(status, bodyText) {
      const r = openaiChatClient.renderError(provider.readError(status, bodyText, { provider: id, displayName, model: '', protocol: provider.id }));
      return { status: r.status, body: r.body as OpenAIErrorBody };
    },
  };
}

export const anthropic = via(anthropicProvider, 'anthropic', 'Anthropic');
export const gemini = via(geminiProvider, 'gemini', 'Gemini');

export const createAnthropicStreamTranslator = (ctx: TranslateContext): StreamTranslator => anthropic.createStreamTranslator(ctx);
export const fromAnthropicResponse = (body: unknown, ctx: TranslateContext): ChatCompletion => anthropic.fromResponse(body, ctx);
export const fromAnthropicError = (status: number, text: string) => anthropic.fromError(status, text);
export const fromGeminiError = (status: number, text: string) => gemini.fromError(status, text);
export const fromAnthropicUsage = (u: unknown): OpenAIUsage => toChatUsage(toIrUsage(mergeAnthropicUsage(ZERO_TOKEN_COUNTS, u)));
export const mapAnthropicStopReason = (r: unknown) => toChatFinishReason(fromAnthropicStopReason(r));
export const mapGeminiFinishReason = (r: string | undefined, calls: boolean) => toChatFinishReason(fromGeminiFinishReason(r, calls));
export const fromGeminiUsage = (u: unknown): OpenAIUsage | undefined => { const ir: Usage | undefined = geminiUsageToIr(u); return ir === undefined ? undefined : toChatUsage(ir); };
/** Chat fields refused for Gemini models whatever their value (a subset of the door's field policy). */
export const GEMINI_UNSUPPORTED_FIELDS: readonly string[] = (CHAT_FIELD_POLICY.gemini ?? []).map((r) => r.field).filter((f) => !['modalities', 'reasoning_effort'].includes(f));
/** Chat fields accepted and dropped for Gemini models (README, "Unified endpoint: fields"). */
export const GEMINI_IGNORED_FIELDS: readonly string[] = [
  'user', 'safety_identifier', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'prompt_cache_options',
  'stream_options', 'parallel_tool_calls', 'verbosity',
];

export const toAnthropicRequest = (req: ChatCompletionRequest, ctx: TranslateContext): UpstreamCall => anthropic.toRequest(req, ctx);
export const toGeminiRequest = (req: ChatCompletionRequest, ctx: TranslateContext): UpstreamCall => gemini.toRequest(req, ctx);
export { defaultMaxTokens } from '../../src/providers/protocols/anthropic/max-tokens.js';
export { JSON_OBJECT_INSTRUCTION } from '../../src/providers/protocols/anthropic/constants.js';

/** Chat fields the door maps for Anthropic models (parse-request.ts and the Anthropic provider). */
export const ANTHROPIC_MAPPED_FIELDS: readonly string[] = [
  'model', 'messages', 'stream', 'temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens',
  'stop', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort',
  'user', 'safety_identifier',
];
/** Chat fields accepted and dropped for Anthropic models (README, "Unified endpoint: fields"). */
export const ANTHROPIC_IGNORED_FIELDS: readonly string[] = [
  'stream_options', 'seed', 'store', 'metadata', 'service_tier', 'prompt_cache_key', 'prompt_cache_options',
  'frequency_penalty', 'presence_penalty', 'verbosity', 'prediction',
];
/** Chat fields refused for Anthropic models (the door's field policy). */
export const ANTHROPIC_REJECTED_FIELDS: readonly string[] = (CHAT_FIELD_POLICY.anthropic ?? []).map((r) => r.field);
