// The upstream call of a door's translated request or token count (doors/translate.ts, count.ts), made with undici's dispatch API: no body stream,
// no async iteration, no AbortController. A whole answer (JSON, or any error status) is collected
// chunk by chunk up to a cap; a stream's chunks go straight to its relay (stream-relay.ts). A
// client that goes away aborts the upstream request through undici's controller.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../http/errors.js';
import { ClientBoundCall } from './upstream.js';

/** A JSON answer this large is not a chat completion; an error body needs far less. */
const ANSWER_LIMIT = 64 * 1024 * 1024;
const ERROR_LIMIT = 1024 * 1024;

/** Receives a streamed body from undici's callbacks, in order; it settles the call through `done`. */
export interface BodySink {
  data(controller: Dispatcher.DispatchController, chunk: Buffer): void;
  end(): void;
  /** Upstream failed mid-body, or (`clientGone`) the client went away and upstream was aborted. */
  error(err: Error, clientGone: boolean): void;
}

export type CallOutcome =
  /** Read whole; an error answer's body that could not be read whole is ''. */
  | { kind: 'answer'; status: number; headers: IncomingHttpHeaders; text: string }
  /** The provider answered 2xx, then broke off the body before its end. */
  | { kind: 'cut'; err: Error }
  /** A stream went to the sink, which has settled the exchange. */
  | { kind: 'streamed' }
  | { kind: 'client_closed' };

/** Opens a 2xx stream's sink once its headers arrive; `done` is called when the sink has settled. */
export type OpenStream = (done: () => void) => BodySink;

/**
 * Makes one upstream call and settles with its outcome. Rejects when there is no answer to give:
 * with the transport error (for upstreamFailure to map) before the response, or with a
 * GatewayError when a whole 2xx answer passes ANSWER_LIMIT.
 */
export function callUpstream(
  dispatcher: Dispatcher, opts: Dispatcher.DispatchOptions, res: ServerResponse, openStream: OpenStream | undefined,
): Promise<CallOutcome> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(opts, new UpstreamCall(res, openStream, resolve, reject));
  });
}

class UpstreamCall extends ClientBoundCall {
  private sink: BodySink | undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private limit = ANSWER_LIMIT;

  constructor(
    res: ServerResponse, private readonly openStream: OpenStream | undefined,
    private readonly resolve: (o: CallOutcome) => void, private readonly reject: (e: unknown) => void,
  ) {
    super(res);
  }

  private settle(outcome: CallOutcome | undefined, err?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    if (outcome) this.resolve(outcome); else this.reject(err);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    if (statusCode >= 400) this.limit = ERROR_LIMIT;
    else if (this.openStream) this.sink = this.openStream(() => this.settle({ kind: 'streamed' }));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.sink) { this.sink.data(controller, chunk); return; }
    this.size += chunk.length;
    if (this.size > this.limit) { controller.abort(new GatewayError('upstream_unreachable', `the provider's answer is larger than ${this.limit / 1024 / 1024} MiB`)); return; }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.sink) { this.sink.end(); return; }
    const text = utf8(this.chunks, this.size);
    this.chunks = [];
    this.settle({ kind: 'answer', status: this.status, headers: this.headers, text });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.chunks = [];
    if (this.sink) { this.sink.error(err, this.clientGone); return; }
    if (this.clientGone) this.settle({ kind: 'client_closed' });
    // An error answer's body is a detail: one that cannot be read whole is re-expressed from its status.
    else if (this.status >= 400) this.settle({ kind: 'answer', status: this.status, headers: this.headers, text: '' });
    else if (err instanceof GatewayError || this.status === 0) this.settle(undefined, err);
    else this.settle({ kind: 'cut', err });
  }
}

/** The body as UTF-8 text, exactly as undici's body.text() decoded it: a leading byte order mark is dropped. */
function utf8(chunks: Buffer[], size: number): string {
  if (size === 0) return '';
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  const bom = body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return body.toString('utf8', bom ? 3 : 0);
}
