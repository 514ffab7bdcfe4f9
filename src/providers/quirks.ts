// Quirk profiles: how an OpenAI-Chat-compatible server departs from OpenAI's own API, as data. A
// provider descriptor names its profile (`quirks: 'deepseek'`); the Chat builder and readers
// (protocols/openai-chat/provider/*) and the Chat door's fast path (daemon/doors/chat.ts) read
// the switches here and nothing else: no code anywhere asks which provider it is talking to.
// Every switch cites where the provider documents the behaviour (README "Quirks" has the table).
// A profile only touches Chat Completions traffic: native prefixes stay byte for byte.

/** A request field a provider answers 400 to. */
export interface RejectedField {
  /** The Chat Completions field: top level (`store`), or on every message (`messages[].name`). */
  readonly field: string;
  /** Only for models whose id matches (xAI's reasoning models); absent: every model. */
  readonly models?: RegExp;
  /**
   * `drop`: the field is removed and the request goes on (it only tunes something the provider
   * has no notion of). `refuse`: the client gets a 400 naming the field, because dropping it would
   * change what comes back (a stop sequence, log probabilities, several choices).
   */
  readonly action: 'drop' | 'refuse';
  /** Values that ask for nothing the provider lacks (`n: 1`, `logprobs: false`): removed silently even when `action` is `refuse`. */
  readonly harmless?: (value: unknown) => boolean;
  /** Finishes "<provider> does not accept …" in a refusal. */
  readonly what: string;
}

export interface QuirkProfile {
  readonly name: string;
  /** Send `stream_options: {include_usage: true}` on streams (OpenAI needs it to report a stream's usage; some servers 4xx on it). */
  readonly streamUsage: boolean;
  /** The field that carries the output cap. */
  readonly maxTokensField: 'max_completion_tokens' | 'max_tokens';
  readonly rejectedFields: readonly RejectedField[];
  /** System (and developer) message content must be one string, not a list of text parts. */
  readonly systemAsString: boolean;
  /** Tool-call ids must be exactly 9 characters of [a-zA-Z0-9]: others are rewritten on the way up. */
  readonly toolCallIds9: boolean;
  /**
   * The server also sends `reasoning_details` (beyond the `reasoning_content` / `reasoning` text
   * every reader takes): typed blocks, some signed or encrypted, that are read as the reasoning's
   * state and go back whole, in that field rather than `reasoning_content`.
   */
  readonly reasoningDetails: boolean;
  /**
   * Which assistant turns get their reasoning back on the next request: `tool-turns` (those with
   * tool calls, with an empty `reasoning_content` where there is none to give: DeepSeek answers 400
   * when it is missing), `all`, or `none` (OpenAI takes none back).
   */
  readonly reasoningBack: 'none' | 'tool-turns' | 'all';
  /** Streamed answers lose tool calls: with tools, call without streaming and stream the answer to the client. */
  readonly toolsWithoutStreaming: boolean;
}

/** OpenAI's own behaviour: the profile of a provider that names none. */
export const OPENAI_PROFILE: QuirkProfile = {
  name: 'openai',
  streamUsage: true,
  maxTokensField: 'max_completion_tokens',
  rejectedFields: [],
  systemAsString: false,
  toolCallIds9: false,
  reasoningDetails: false,
  reasoningBack: 'none',
  toolsWithoutStreaming: false,
};

const isFalse = (v: unknown): boolean => v === false;
const isOne = (v: unknown): boolean => v === 1;
const isZero = (v: unknown): boolean => v === 0;
const isEmptyObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/** xAI's reasoning models (docs.x.ai/docs/models): grok-3-mini, grok-4* but not -non-reasoning, grok-code-*, grok-build-*. */
const XAI_REASONING = /^grok-(?!.*non-reasoning)(3-mini|4|code|build)/;

/** `store` only asks OpenAI to keep the exchange for its dashboard: meaningless elsewhere, dropped. */
const STORE: RejectedField = { field: 'store', action: 'drop', what: 'store' };

export const QUIRK_PROFILES: Readonly<Record<string, QuirkProfile>> = {
  openai: OPENAI_PROFILE,

  // api-docs.deepseek.com/api/create-chat-completion: the cap is `max_tokens`.
  // api-docs.deepseek.com/guides/thinking_mode ("Tool Calls"): in thinking mode, "for turns that do
  // perform tool calls, the reasoning_content must be fully passed back to the API in all
  // subsequent requests", else 400 "The reasoning_content in the thinking mode must be passed back
  // to the API."; turns without tool calls have it ignored, so only tool turns carry it.
  deepseek: { ...OPENAI_PROFILE, name: 'deepseek', maxTokensField: 'max_tokens', reasoningBack: 'tool-turns' },

  // docs.mistral.ai/api (chat completion): a strict schema that answers 422 "Extra inputs are not
  // permitted" to `max_completion_tokens`, `store` and `stream_options` (usage comes in the last
  // chunk without asking); tool-call ids must match [a-zA-Z0-9]{9}: "Tool call id was call_0 but
  // must be a-z, A-Z, 0-9, with a length of 9." (langchain-ai/langchain#24668, mistral-common).
  mistral: {
    ...OPENAI_PROFILE, name: 'mistral', streamUsage: false, maxTokensField: 'max_tokens', toolCallIds9: true,
    rejectedFields: [STORE],
  },

  // console.groq.com/docs/openai ("Currently Unsupported OpenAI Features"): `logprobs`,
  // `logit_bias`, `top_logprobs` and `messages[].name` "will result in a 400 error", and `n` must
  // be 1. `store` is answered "property 'store' is unsupported, did you mean 'stop'?", and system
  // content must be a string: "'messages.0' : for 'role:system' … 'messages.0.content' : value
  // must be a string" (OpenHands/OpenHands#4643).
  groq: {
    ...OPENAI_PROFILE, name: 'groq', systemAsString: true,
    rejectedFields: [
      STORE,
      { field: 'logprobs', action: 'refuse', harmless: isFalse, what: 'logprobs (token log probabilities)' },
      { field: 'top_logprobs', action: 'refuse', harmless: isZero, what: 'top_logprobs (token log probabilities)' },
      { field: 'n', action: 'refuse', harmless: isOne, what: 'n other than 1 (several choices)' },
      { field: 'logit_bias', action: 'refuse', harmless: isEmptyObject, what: 'logit_bias' },
      // A participant's name is a label, not an instruction the answer depends on: dropped.
      { field: 'messages[].name', action: 'drop', what: 'messages[].name' },
    ],
  },

  // docs.x.ai/docs/guides/reasoning: "presencePenalty, frequencyPenalty and stop parameters are
  // not supported by reasoning models. Adding them in the request would result in an error."
  // Penalties are sampling nudges and are dropped; a stop sequence decides where the answer ends,
  // so it is refused rather than silently ignored. Reasoning models: grok-3-mini, grok-4* (not
  // the -non-reasoning variants), grok-code-*, grok-build-*.
  xai: {
    ...OPENAI_PROFILE, name: 'xai',
    rejectedFields: [
      { field: 'presence_penalty', models: XAI_REASONING, action: 'drop', what: 'presence_penalty' },
      { field: 'frequency_penalty', models: XAI_REASONING, action: 'drop', what: 'frequency_penalty' },
      { field: 'stop', models: XAI_REASONING, action: 'refuse', what: 'stop sequences on reasoning models' },
    ],
  },

  // docs.ollama.com/api/openai-compatibility: the supported request fields list `max_tokens` (not
  // `max_completion_tokens`). Streamed answers drop tool calls (ollama/ollama#9632, #12557: the
  // stream ends with finish_reason "stop" and no tool_calls), while the same request without
  // streaming returns them.
  ollama: { ...OPENAI_PROFILE, name: 'ollama', maxTokensField: 'max_tokens', toolsWithoutStreaming: true },

  // openrouter.ai/docs/guides/best-practices/reasoning-tokens ("Preserving reasoning blocks",
  // "reasoning_details array structure"): reasoning comes as `reasoning_details` (reasoning.text
  // with a signature, reasoning.summary, reasoning.encrypted) and must be sent back unmodified on
  // the assistant turn for tool calling to continue the model's reasoning.
  openrouter: { ...OPENAI_PROFILE, name: 'openrouter', reasoningDetails: true, reasoningBack: 'all' },

  // docs.vllm.ai/en/stable/features/reasoning_outputs: reasoning comes as `reasoning` (formerly
  // `reasoning_content`, both read by every Chat reader) and is not taken back.
  vllm: { ...OPENAI_PROFILE, name: 'vllm' },
};

/** The profile names a descriptor or preset may use. */
export const QUIRK_PROFILE_NAMES: readonly string[] = Object.keys(QUIRK_PROFILES);

/** The profile a provider's descriptor names; OpenAI's own behaviour when it names none (or one unknown). */
export function quirksOf(descriptor: { readonly quirks?: string }): QuirkProfile {
  return (descriptor.quirks !== undefined ? QUIRK_PROFILES[descriptor.quirks] : undefined) ?? OPENAI_PROFILE;
}
