// The two faces of a wire protocol module (HUB.md): the client side parses a door's request into
// the IR and renders IR answers, streams and errors in the door's shape; the provider side builds
// a provider request from the IR and reads the provider's answers, streams and errors into it.
// Implementations are pure: no I/O, no clock (times and ids come in through the contexts).
import type { SseEvent, UpstreamCall } from '../types.js';
import type { QuirkProfile } from '../quirks.js';
import type { CacheTtl, ProviderError, Request, Response, StreamEvent, Usage } from './types.js';

export type ProtocolId = 'openai-chat' | 'anthropic' | 'gemini' | 'openai-responses';

/** The provider and model a request was routed to, as a door's parser and a builder need it. */
export interface Target {
  /** Provider id (`anthropic`, `openai`, `gemini`, a configured provider's name). */
  provider: string;
  /** Shown in messages: "Anthropic", "Gemini". */
  displayName: string;
  /** The provider's own model id (routing prefix stripped). */
  model: string;
  /**
   * The wire protocol the provider speaks (its descriptor's `protocol`): a door refuses the fields
   * that protocol cannot express (openai-chat/client/field-policy.ts). Absent: nothing is refused
   * for the target's sake, only what the door itself cannot read.
   */
  protocol?: ProtocolId;
  /**
   * How the provider's Chat Completions API departs from OpenAI's (quirks.ts), for the Chat
   * builder and readers. Absent: OpenAI's own behaviour.
   */
  quirks?: QuirkProfile;
  /**
   * Prompt-cache breakpoints the Anthropic builder places itself, for a client that could not mark
   * them (anthropic/provider/cache-breakpoints.ts): the fewest tokens a marked prefix must reach,
   * and the TTL. Absent: only the client's own marks are sent.
   */
  cache?: { minTokens: number; ttl: CacheTtl };
}

export interface RenderContext {
  /** The model name the client sees: the provider's id on its own door, else `provider/<id>`. */
  model: string;
  /**
   * Put before the model id a provider reports mid-answer (a stream's start), so the client sees
   * the dated id it served under the same rule: '' on the provider's own door, else `provider/`.
   */
  modelPrefix?: string;
  /** Unix seconds, for protocols whose answers carry a creation time. */
  created: number;
  /** Used when the provider gave no id. */
  fallbackId: string;
  /** The client asked for usage in its stream (OpenAI `stream_options.include_usage`). */
  includeUsage: boolean;
  /**
   * The request's own fields, for a protocol whose answers repeat them (a Responses object echoes
   * `instructions`, `tools`, `previous_response_id`…, and renders calls of its freeform tools as
   * custom tool calls). Absent for doors that echo nothing.
   */
  echo?: Readonly<Record<string, unknown>>;
  /**
   * Called once with the whole answer a stream's closing event carries (Responses'
   * response.completed), for a door that keeps answers (the gateway's response store).
   */
  onFinal?: (answer: Record<string, unknown>, json: string) => void;
  /**
   * How a stream is framed, for a door that has two forms: Gemini's `:streamGenerateContent`
   * answers SSE with `?alt=sse` and one incrementally written JSON array without it. Absent: SSE.
   */
  streamFormat?: 'sse' | 'json-array';
}

/** IR stream events → the door's stream text (SSE frames), event by event, never held back. */
export interface StreamRenderer {
  /** The text to write for one event ('' when it completes nothing the client sees yet). */
  push(event: StreamEvent): string;
  /** The provider's stream is over (after `finish` or `error`, or cut short): whatever closes the client's stream. */
  end(): string;
}

/** Provider SSE events → IR stream events, a small state machine over parsed events. */
export interface StreamReader {
  /** One provider event. Never throws on odd input: unknown events give nothing. */
  push(event: SseEvent): StreamEvent[];
  /** Provider EOF: a `finish`, or an `error` when the stream ended before the provider said it was done. */
  end(): StreamEvent[];
  /** The provider has said it is done (or failed): the client's stream can close now. */
  complete(): boolean;
  /** Usage so far, cumulative (for accounting). */
  usage(): Usage | undefined;
}

export interface ClientProtocol {
  readonly id: ProtocolId;
  /** A door's JSON body → IR. Throws TranslationError naming the field it cannot accept for `target`. */
  parseRequest(body: unknown, target: Target): Request;
  renderResponse(response: Response, ctx: RenderContext): unknown;
  createStreamRenderer(ctx: RenderContext): StreamRenderer;
  /** An error before any answer byte: the status and body the client gets. */
  renderError(error: ProviderError): { status: number; body: unknown };
  /** The door's token-count request (Anthropic's count_tokens, Gemini's countTokens), when it has one. */
  readonly countTokens?: {
    /** Its body → the IR request whose input is counted (TranslationError naming the field). */
    parseRequest(body: unknown, target: Target): Request;
    /** The count as the door answers it. */
    render(tokens: number): unknown;
  };
}

export interface ProviderProtocol {
  readonly id: ProtocolId;
  /** IR → the provider call. Throws TranslationError for what the provider cannot honour. */
  buildRequest(request: Request, target: Target): UpstreamCall;
  /** `target` tags the provider state the answer carries. */
  readResponse(body: unknown, target: Target): Response;
  createStreamReader(target: Target): StreamReader;
  /** A non-2xx answer → a neutral error, the provider's message kept. */
  readError(status: number, bodyText: string, target: Target): ProviderError;
  /** Where the provider counts a request's input tokens itself: the call, and its answer read. */
  countTokens?: { build(request: Request, target: Target): UpstreamCall; read(body: unknown): number | undefined };
}
