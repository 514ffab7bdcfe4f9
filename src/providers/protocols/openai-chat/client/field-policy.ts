// Which Chat Completions fields a target protocol cannot express, as data: a request bound for a
// provider speaking that protocol is refused with a 400 naming the field (and the provider) when
// the field is set to anything but a harmless value, because dropping it would change what the
// client gets back. Fields not listed are either mapped into the IR (parse-request.ts) or dropped
// because they only tune delivery, storage or billing on OpenAI's side (`store`, `service_tier`,
// `prompt_cache_key`, `metadata`, `stream_options`, `verbosity`…), and, for a target without the
// knob, sampling nudges such as `seed` and the penalties.
import type { ProtocolId } from '../../../ir/protocol.js';

export interface FieldRule {
  field: string;
  /** True when the value asks for nothing the target would drop (OpenAI's default, an empty object…). */
  harmless: (value: unknown) => boolean;
  /** The message, for a provider shown as `provider`. */
  reason: (provider: string, value: unknown) => string;
}

const isEmptyObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
const never = (): boolean => false;
const textOnly = (v: unknown): boolean => Array.isArray(v) && v.every((m) => m === 'text');

/** Refusals worded as the Anthropic translator always has. */
const ANTHROPIC: readonly FieldRule[] = [
  { field: 'n', harmless: (v) => v === 1, reason: (p, v) => `n=${JSON.stringify(v)} is not supported: ${p} returns exactly one choice per request.` },
  { field: 'logprobs', harmless: (v) => v !== true, reason: (p) => `logprobs is not supported: ${p} does not return token log probabilities.` },
  { field: 'top_logprobs', harmless: (v) => v === 0, reason: (p) => `top_logprobs is not supported: ${p} does not return token log probabilities.` },
  { field: 'logit_bias', harmless: isEmptyObject, reason: (p) => `logit_bias is not supported by ${p} models.` },
  { field: 'modalities', harmless: textOnly, reason: (p) => `Only text output is supported for ${p} models; remove "audio" from modalities.` },
  { field: 'audio', harmless: never, reason: (p) => `Audio output is not supported for ${p} models.` },
  { field: 'web_search_options', harmless: never, reason: (p) => `web_search_options is not supported for ${p} models through the unified endpoint.` },
  { field: 'functions', harmless: never, reason: (p) => `The deprecated \`functions\` field is not supported for ${p} models; send \`tools\` instead.` },
  { field: 'function_call', harmless: never, reason: (p) => `The deprecated \`function_call\` field is not supported for ${p} models; send \`tool_choice\` instead.` },
];

/** Gemini has candidates and log probabilities; an empty object asks for nothing. */
const unsupported = (field: string): FieldRule => ({ field, harmless: isEmptyObject, reason: (p) => `${field} is not supported for ${p} models.` });
const GEMINI_LEVELS: readonly string[] = ['minimal', 'low', 'medium', 'high'];
const GEMINI: readonly FieldRule[] = [
  ...['logit_bias', 'audio', 'prediction', 'web_search_options', 'functions', 'function_call'].map(unsupported),
  { field: 'modalities', harmless: (v) => !Array.isArray(v) || textOnly(v), reason: (p) => `modalities other than "text" are not supported for ${p} models.` },
  {
    field: 'reasoning_effort', harmless: (v) => GEMINI_LEVELS.includes(v as string),
    reason: (p, v) => `reasoning_effort ${JSON.stringify(v)} has no ${p} thinking level; use minimal, low, medium or high.`,
  },
];

/** Keyed by the target's protocol; a protocol not listed refuses nothing here. */
export const CHAT_FIELD_POLICY: Readonly<Partial<Record<ProtocolId, readonly FieldRule[]>>> = {
  'openai-chat': [],
  anthropic: ANTHROPIC,
  gemini: GEMINI,
};

/** The first field `protocol` cannot express, with its message; `null` and absent count as unset. */
export function refusedField(body: Record<string, unknown>, protocol: ProtocolId | undefined, provider: string): { field: string; message: string } | undefined {
  const rules = protocol === undefined ? undefined : CHAT_FIELD_POLICY[protocol];
  for (const { field, harmless, reason } of rules ?? []) {
    const value = body[field];
    if (value === undefined || value === null || harmless(value)) continue;
    return { field, message: reason(provider, value) };
  }
  return undefined;
}
