// The internal representation (IR) every wire protocol translates to and from: a request, an
// answer and a stream of events, provider-neutral and owned by us (HUB.md). Pure data, no I/O.
// Protocol modules (src/providers/protocols/<p>/) parse a client's request into it and render it
// back in the client's protocol; on the provider side they build a provider request from it and
// read the provider's answer and stream into it. No protocol's JSON is the hub.

// ---- opaque provider state ------------------------------------------------------------------

/**
 * State only the provider that minted it can read (Anthropic's thinking `signature` and
 * `redacted_thinking` data, Gemini's `thoughtSignature`, OpenAI's reasoning `encrypted_content`).
 * It is tagged with the provider id (not the protocol: an Anthropic-compatible provider's
 * signatures mean nothing to Anthropic) and given back only to that provider on the next turn.
 */
export interface ProviderState {
  provider: string;
  /** The provider's own fields, e.g. `{ signature }`, `{ thoughtSignature }`, `{ encryptedContent }`. */
  data: Record<string, string>;
}

/** How long a prompt-cache entry lives after its last use (Anthropic's two; absent is 5 minutes). */
export type CacheTtl = '5m' | '1h';

/** A prompt-cache breakpoint the client asked for (Anthropic `cache_control`, and the same on Chat content parts). */
export interface CacheHint { type: 'ephemeral'; ttl?: CacheTtl }

// ---- content parts ----------------------------------------------------------------------------

export type MediaSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string; mediaType?: string }
  /** Plain text documents (Anthropic `source.type: "text"`). */
  | { kind: 'text'; mediaType: string; text: string };

export interface TextPart { type: 'text'; text: string; cache?: CacheHint; state?: ProviderState }
/**
 * `param` on a part: the client's field to name when a builder cannot send the part (e.g.
 * `messages[1].content[0].image_url.url`), set by doors that know it; builders fall back to a
 * description of the part. (Only a builder knows its provider's limits; only a door knows field names.)
 */
export interface ImagePart { type: 'image'; source: MediaSource; detail?: 'auto' | 'low' | 'high'; cache?: CacheHint; param?: string }
/** A file the model reads: PDF, plain text, or other media a provider takes inline (Chat `input_audio` too). */
export interface DocumentPart { type: 'document'; source: MediaSource; title?: string; cache?: CacheHint; param?: string }

export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  /** The call's input as JSON text (OpenAI's form; objects are serialized once, losslessly). */
  arguments: string;
  state?: ProviderState;
  /** The client's field holding the arguments, for a builder that cannot parse them. */
  param?: string;
}

export interface ToolResultPart {
  type: 'tool-result';
  callId: string;
  /** The tool's name, where the client's protocol carries it (Gemini needs it). */
  name?: string;
  content: Array<TextPart | ImagePart | DocumentPart>;
  /**
   * The client sent the output as one plain string rather than a list of parts (Chat and Messages
   * `content: "…"`); a builder whose protocol has both forms keeps the one the client used.
   */
  plain?: boolean;
  isError?: boolean;
  cache?: CacheHint;
  param?: string;
}

/** Model reasoning ("thinking"). `redacted`: no readable text, only the provider's state. */
export interface ReasoningPart { type: 'reasoning'; text: string; state?: ProviderState; redacted?: boolean }

export type UserPart = TextPart | ImagePart | DocumentPart | ToolResultPart;
export type AssistantPart = TextPart | ToolCallPart | ReasoningPart;
export type Part = UserPart | AssistantPart;

/**
 * One turn. Tool results are user parts (as Anthropic and Gemini send them); a protocol that keeps
 * them in messages of their own (OpenAI's `tool` role) splits them out when it builds a request.
 * Turns are kept as the client sent them: builders merge or split what their protocol requires.
 */
export type Message =
  | { role: 'user'; parts: UserPart[] }
  | { role: 'assistant'; parts: AssistantPart[] };

// ---- request ------------------------------------------------------------------------------------

/** JSON Schema, as the client sent it; builders convert it to their protocol's dialect. */
export type JsonSchema = Record<string, unknown>;

export interface Tool { name: string; description?: string; inputSchema: JsonSchema; strict?: boolean; cache?: CacheHint }

export type ToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  /** The model must call some tool (OpenAI `required`, Anthropic `any`, Gemini `ANY`). */
  | { type: 'required' }
  | { type: 'tool'; name: string };

/** One scale for reasoning effort; each builder maps it to its protocol's knob. */
export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ReasoningSettings {
  /** `false`: the client turned reasoning off explicitly. */
  enabled?: boolean;
  effort?: Effort;
  /** A token budget for thinking (Anthropic `budget_tokens`, Gemini `thinkingBudget`). */
  budgetTokens?: number;
  /** Whether the client wants reasoning text back (summaries, thoughts). */
  includeText?: boolean;
}

export type OutputFormat =
  | { type: 'text' }
  | { type: 'json'; schema?: JsonSchema; name?: string; description?: string; strict?: boolean };

export interface Request {
  /** The model id sent to the provider (routing already resolved, prefix stripped). */
  model: string;
  system: TextPart[];
  messages: Message[];
  tools: Tool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences: string[];
  output?: OutputFormat;
  reasoning?: ReasoningSettings;
  /** An opaque end-user id (OpenAI `user`/`safety_identifier`, Anthropic `metadata.user_id`). */
  user?: string;
  /**
   * OpenAI's `prompt_cache_key`: requests naming the same key are kept on the same prompt cache.
   * Set by the gateway for a provider that takes it (the client's own, or one derived from the
   * session the client names); builders whose protocol has the field send it.
   */
  promptCacheKey?: string;
  stream: boolean;
  /** Sampling knobs only some protocols have; a builder that has no place for one refuses or ignores it. */
  candidates?: number;
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  logprobs?: { top: number };
}

// ---- answer -------------------------------------------------------------------------------------

export type FinishReason =
  | 'stop' | 'length' | 'tool-calls' | 'stop-sequence' | 'content-filter' | 'refusal'
  /** Anthropic `pause_turn`: the client should send the answer back to continue. */
  | 'pause'
  | 'other';

/**
 * Token counts, one convention for every protocol (each protocol's usage.ts reads into it and its
 * door writes out of it):
 * - `inputTokens` is the whole prompt: uncached input + cache reads + cache writes (as OpenAI and
 *   Gemini count it; Anthropic's `input_tokens` is the uncached part only, so its reader adds the
 *   other two and the Messages door takes them out again).
 * - `cachedInputTokens` (cache reads) and `cacheWriteTokens` (cache writes, every TTL) are parts of
 *   `inputTokens`, never added to it; `cacheWrite1hTokens` is the part of `cacheWriteTokens` written
 *   with a 1-hour TTL (the rest were 5-minute writes). So the uncached input is
 *   `inputTokens - cachedInputTokens - cacheWriteTokens`.
 * - `outputTokens` includes `reasoningTokens`.
 * A part the provider did not report is left out (unknown), unless its protocol defines an absent
 * count as 0 (usage-reader.ts).
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Of inputTokens: read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** Of inputTokens: written to the prompt cache, whatever the TTL. */
  cacheWriteTokens?: number;
  /** Of cacheWriteTokens: written with a 1-hour TTL (Anthropic `cache_creation.ephemeral_1h_input_tokens`). */
  cacheWrite1hTokens?: number;
  /** Of outputTokens: reasoning ("thinking") tokens. */
  reasoningTokens?: number;
}

export interface TokenLogprob { token: string; logprob: number; bytes?: number[] | null; top?: Array<{ token: string; logprob: number; bytes?: number[] | null }> }

export interface Choice {
  index: number;
  parts: AssistantPart[];
  finish: FinishReason;
  /** The stop sequence that ended the answer, when the provider says which. */
  stopSequence?: string;
  /** The provider's explanation of a refusal. */
  refusal?: string;
  logprobs?: TokenLogprob[];
}

export interface Response {
  id?: string;
  /** The model the provider says answered (often a dated id). */
  model?: string;
  /** Almost always one; more only when a client asked for several candidates. */
  choices: Choice[];
  usage?: Usage;
}

// ---- stream ------------------------------------------------------------------------------------

/**
 * What a provider stream reader emits and a client stream renderer consumes. Renderers infer block
 * boundaries (a text delta after reasoning starts a new block); tool calls have explicit
 * start/arguments/end because several can be open at once. `choice` is absent for choice 0.
 */
export type StreamEvent =
  | { type: 'start'; id?: string; model?: string; usage?: Usage }
  | { type: 'text'; text: string; choice?: number; state?: ProviderState; logprobs?: TokenLogprob[] }
  | { type: 'reasoning'; text: string; choice?: number }
  /** The end of a reasoning block: its signature (or a redacted block's data). */
  | { type: 'reasoning-end'; state?: ProviderState; redacted?: boolean; choice?: number }
  /**
   * `arguments` and `state`: what a provider that sends each call whole (Gemini) knows at its
   * start; a door that writes the call's id first (Chat) can carry the state only from here.
   */
  | { type: 'tool-call-start'; id: string; name: string; choice?: number; arguments?: string; state?: ProviderState }
  | { type: 'tool-call-arguments'; id: string; delta: string; choice?: number }
  | { type: 'tool-call-end'; id: string; state?: ProviderState; choice?: number }
  /** Cumulative usage so far (for accounting); the final counts also come with `finish`. */
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; choice?: number; stopSequence?: string; refusal?: string; usage?: Usage }
  | { type: 'error'; error: ProviderError };

// ---- errors ------------------------------------------------------------------------------------

/**
 * What went wrong, in neutral terms; each protocol module renders it in its own shape (see
 * errors.ts for the table of kinds).
 */
export type ErrorKind =
  | 'invalid_request' | 'authentication' | 'permission' | 'not_found' | 'request_too_large'
  | 'rate_limit' | 'billing' | 'server' | 'overloaded' | 'timeout' | 'unreachable'
  /** The provider closed its stream before saying it was done (no message_stop / [DONE]). */
  | 'stream_ended'
  /** The provider's connection broke off mid-stream after a 200. */
  | 'stream_broken'
  /** The provider sent nothing usable. */
  | 'empty_response';

export interface ProviderError {
  /** The HTTP status the client should see (before headers), already mapped. */
  status: number;
  kind: ErrorKind;
  message: string;
  /** The field at fault, when the client's request named it. */
  param?: string | null;
  /** A more specific machine code for protocols that carry one (OpenAI `code`). */
  code?: string | null;
  /** Seconds or an HTTP date, as the provider's `retry-after` said. */
  retryAfter?: string;
}
