// Which OpenAI request fields the Anthropic translation maps, ignores or rejects. Fields not listed
// here are not OpenAI Chat Completions fields; the unified endpoint's validator deals with them.
import type { ChatCompletionRequest } from '../types.js';
import { TranslationError } from '../types.js';

/** Fields translated into the Anthropic request (see request.ts). */
export const ANTHROPIC_MAPPED_FIELDS: readonly string[] = [
  'model', 'messages', 'stream', 'temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens',
  'stop', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort',
  'user', 'safety_identifier',
];

/**
 * Fields dropped without error: they tune delivery, storage, caching or billing on OpenAI's side,
 * or nudge sampling in a way Anthropic has no knob for, and leaving them out does not change the
 * shape or meaning of the answer. `stream_options.include_usage` is honoured by the gateway itself.
 */
export const ANTHROPIC_IGNORED_FIELDS: readonly string[] = [
  'stream_options', 'seed', 'store', 'metadata', 'service_tier', 'prompt_cache_key', 'prompt_cache_options',
  'frequency_penalty', 'presence_penalty', 'verbosity', 'prediction',
];

/**
 * Fields rejected when set to anything but their OpenAI default, because dropping them would change
 * what the client gets back. Each check returns the reason, or `undefined` when the value is harmless.
 */
const REJECTED: ReadonlyArray<{ field: string; reason: (value: unknown) => string | undefined }> = [
  { field: 'n', reason: (v) => (v === 1 ? undefined : `n=${JSON.stringify(v)} is not supported: Anthropic returns exactly one choice per request.`) },
  { field: 'logprobs', reason: (v) => (v === true ? 'logprobs is not supported: Anthropic does not return token log probabilities.' : undefined) },
  { field: 'top_logprobs', reason: (v) => (v === 0 ? undefined : 'top_logprobs is not supported: Anthropic does not return token log probabilities.') },
  { field: 'logit_bias', reason: (v) => (isEmptyObject(v) ? undefined : 'logit_bias is not supported by Anthropic models.') },
  { field: 'modalities', reason: (v) => (Array.isArray(v) && v.every((m) => m === 'text') ? undefined : 'Only text output is supported for Anthropic models; remove "audio" from modalities.') },
  { field: 'audio', reason: () => 'Audio output is not supported for Anthropic models.' },
  { field: 'web_search_options', reason: () => 'web_search_options is not supported for Anthropic models through the unified endpoint.' },
  { field: 'functions', reason: () => 'The deprecated `functions` field is not supported for Anthropic models; send `tools` instead.' },
  { field: 'function_call', reason: () => 'The deprecated `function_call` field is not supported for Anthropic models; send `tool_choice` instead.' },
];

export const ANTHROPIC_REJECTED_FIELDS: readonly string[] = REJECTED.map((r) => r.field);

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/** Throws a TranslationError for the first field Anthropic cannot honour. `null` counts as unset. */
export function assertAnthropicCanHonour(req: ChatCompletionRequest): void {
  for (const { field, reason } of REJECTED) {
    const value = req[field];
    if (value === undefined || value === null) continue;
    const problem = reason(value);
    if (problem !== undefined) throw new TranslationError(problem, field);
  }
}
