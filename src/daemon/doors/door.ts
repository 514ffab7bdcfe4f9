// What a door at the root is: the protocol its clients speak, and the hooks by which it differs
// from the others. The runner (runner.ts) runs every door the same way and calls these hooks; each
// door declares its own in its file (chat.ts, messages.ts, responses.ts, gemini.ts).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientProtocol, ProtocolId, RenderContext, Target } from '../../providers/ir/protocol.js';
import type { ProviderError } from '../../providers/ir/types.js';
import type { ProviderDescriptor } from '../../providers/registry.js';
import type { DaemonContext } from '../context.js';
import type { GatewayError } from '../http/errors.js';
import type { BodyCapture } from '../observe/body-log.js';
import type { RequestMode } from '../observe/events.js';
import type { RequestTracker } from '../observe/tracker.js';
import type { UsageTap } from '../relay/native-usage.js';
import type { ChunkRewriter } from '../relay/relay-as-is.js';
import type { KeyRecord } from '../store/keys.js';
import type { FailedOutcome } from '../routing/retry.js';

export type Obj = Record<string, unknown>;

/** Where a request was routed, decided once by the runner. */
export interface Route {
  readonly p: ProviderDescriptor;
  /** The provider's own model id. */
  readonly model: string;
  /** The protocol the provider is called in for this model (registry.ts upstreamProtocol). */
  readonly protocol: ProtocolId;
  readonly target: Target;
  readonly providerKey: string;
  /** The key's label in its provider's pool ('' for a provider with one key). */
  readonly keyLabel: string;
}

/** One request through a door, as the runner and the hooks see it. */
export interface DoorRun {
  readonly ctx: DaemonContext;
  readonly door: Door;
  readonly call: DoorCall;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: string;
  readonly key: KeyRecord;
  /** The client's bytes and their JSON (empty when the door's fast path reads nothing of it: Gemini's). */
  readonly clientRaw: Buffer;
  readonly clientBody: Obj;
  /** What this attempt sends: the client's, unless the door's prepare hook changed it for the route. */
  raw: Buffer;
  body: Obj;
  /** The target of the current attempt (the runner moves it along the request's route). */
  route: Route;
  /** The attempts so far, as `x-gateway-route` lists them (`provider/model=status`). */
  readonly attempts: string[];
  /** Time spent waiting between attempts (retry-after, backoff). */
  waitedMs: number;
  /** The client asked for a stream (the body's `stream`, or the URL's method). */
  readonly stream: boolean;
  readonly tracker: RequestTracker;
  readonly capture: BodyCapture | undefined;
  /** What a door's prepare hook adds for the rest of this request. */
  extras: RunExtras;
}

export interface RunExtras {
  /** Translated path: request fields its answers repeat, the whole answer once (RenderContext). */
  render?: Pick<RenderContext, 'echo' | 'onFinal'>;
  /** Fast path: called with the answer's usage tap once a successful answer reached the client whole. */
  onAnswered?: (tap: UsageTap) => void;
}

/**
 * How one attempt on one target ended. `done`: the client has its answer, or the request's record
 * is finished (an answer begun and then broken off, a client gone). `failed`: nothing reached the
 * client; `deliver` sends this failure to it, should no later attempt do better.
 */
export type Attempt =
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly outcome: FailedOutcome; readonly retryAfter?: string; readonly deliver: () => Promise<void> };

export const DONE: Attempt = { kind: 'done' };

/** What the route table learned from the URL, for a door whose URL says more than its path. */
export interface DoorCall {
  /** Count the input's tokens instead of answering (Messages' count_tokens, Gemini's :countTokens). */
  readonly count?: boolean;
  /** The model, when the URL names it (Gemini): the body is then not parsed for the fast path. */
  readonly model?: string;
  /** The path the monitor shows; default the door's. */
  readonly path?: string;
  /** Whether a stream is asked for, when the URL says it (Gemini's method); default the body's `stream`. */
  readonly stream?: boolean;
  /** Fast path: the provider's path, when it is not the monitor's path (Gemini's names version, model and method). */
  readonly providerPath?: (model: string) => string;
  /** How a translated stream is framed (Gemini: SSE with `?alt=sse`, else one JSON array). */
  readonly streamFormat?: 'sse' | 'json-array';
}

export interface Door {
  /** How the monitor and the usage history name requests that came in by it. */
  readonly mode: RequestMode;
  readonly protocol: ProtocolId;
  /** The path clients post to; also the provider's path on the fast path unless the call names one. */
  readonly path: string;
  /** The door's protocol module, loaded on first use. */
  readonly client: () => Promise<ClientProtocol>;
  /** An id for an answer whose provider gave none in this protocol's form. */
  readonly newId: () => string;
  /** Strict checks of the body on the fast path (the door's parser checks it on the translated one). */
  readonly validate?: (body: Obj) => void;
  /**
   * Fast path: the body without opaque state another provider minted (a conversation that moved
   * to this door's own provider), or undefined when there is none (checked on the raw bytes first).
   */
  readonly withoutForeignState?: (raw: Buffer) => Obj | undefined;
  /**
   * Fast path: the body the provider gets when more than the model must change (Chat asks a
   * stream's usage for accounting, and applies the provider's quirk profile); undefined: the
   * client's own bytes go, with only the model changed.
   */
  readonly editBody?: (body: Obj, route: Route) => Obj | undefined;
  /** Fast path: what the client sees of a 2xx stream, when not the provider's bytes (Chat hides the usage it did not ask for). */
  readonly rewriteStream?: (body: Obj) => ChunkRewriter | undefined;
  /**
   * Fast path: the one event that tells the client, in its protocol, that the provider broke off
   * a stream it had begun (undefined: the connection is cut instead, the only signal left).
   */
  readonly streamError?: (error: ProviderError, client: ClientProtocol, call: DoorCall) => string | undefined;
  /** Translated path: the client asked for usage in its stream (OpenAI Chat's stream_options.include_usage). */
  readonly includeUsage?: (body: Obj) => boolean;
  /** The error for a model no route knows, when the door's clients expect another than the 400 (Gemini's 404). */
  readonly modelNotFound?: (asked: string, err: GatewayError) => GatewayError;
  /**
   * Before each attempt's path is chosen, from the client's body for that attempt's route (the
   * Responses store's previous_response_id and `store`): sets run.body/raw and run.extras.
   */
  readonly prepare?: (run: DoorRun) => Promise<void>;
  /**
   * Bytes of input the request carries by reference (a stored conversation it continues), for
   * its key's limits to reserve; Infinity when only the provider knows how much.
   */
  readonly heldInput?: (run: DoorRun) => Promise<number>;
}

// Ids for answers whose provider gave none: unique per daemon run (a random prefix, then a count),
// without asking the OS for randomness on every request.
const ID_PREFIX = randomBytes(9).toString('hex');
let idCount = 0;
export const newIdSuffix = (): string => `${ID_PREFIX}${(++idCount).toString(16).padStart(6, '0')}`;
