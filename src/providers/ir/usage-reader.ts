// The one reader of a wire protocol's token usage (each protocol module has one, in its usage.ts):
// its usage object → IR usage, and what its streams' events say about usage, the model, the
// answer's id and the stream's end. The provider-side readers (translation) count with the same
// functions as the daemon's tap on answers relayed untouched (native pass-through, the doors' fast
// path), so an answer's tokens read the same whichever path it took.
import type { SseEvent } from '../types.js';
import type { Usage } from './types.js';

export interface UsageReader {
  /**
   * A usage object as the protocol writes it → IR usage; `undefined` when it holds no counts. A
   * count the object reports is kept (0 included); one it leaves out stays unknown, unless the
   * protocol defines its absence as 0 (Gemini leaves out zero counts, Anthropic reports all).
   */
  fromUsage(usage: unknown): Usage | undefined;
  /** The key of a whole JSON answer's usage object (also in each element of Gemini's JSON-array stream). */
  readonly usageKey: string;
  /** The key of the model a whole answer says answered. */
  readonly modelKey: string;
  /** That model's name → its id (Gemini may write `models/…`). */
  modelId(name: string): string;
  /** The id the provider keeps a whole answer under (Responses' `resp_…`), read from the answer's first bytes. */
  answerId?(head: string): string | undefined;
  /** A stream's usage, model, answer id and end, read event by event. */
  createStreamTap(): UsageStreamTap;
}

/**
 * Reads an SSE stream for accounting, beside whatever relays or translates it. Cheap per event: it
 * parses only the events that carry usage, and finds the model and id with a scan of the few events
 * that name them.
 */
export interface UsageStreamTap {
  push(event: SseEvent): void;
  /** Usage so far (a stream's counts are cumulative). */
  usage(): Usage | undefined;
  model(): string | undefined;
  /** The id a Responses provider keeps the answer under (`resp_…`); undefined for other protocols. */
  responseId(): string | undefined;
  /** The stream's own end was seen (Anthropic `message_stop`, Chat `[DONE]`, Responses' last lifecycle event); Gemini has none. */
  complete(): boolean;
}
