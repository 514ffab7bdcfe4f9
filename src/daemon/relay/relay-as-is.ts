// One upstream call whose answer goes to the client as the provider sent it: status, headers and
// bytes unchanged, with its usage read as it passes (native prefixes, and the doors' fast path).
// A door may ask for two differences: an error answer is handed back instead of relayed (the
// runner decides what the client sees of it), and a 2xx stream's text may be rewritten on its way
// (Chat hides the usage chunk it asked for on the client's behalf); the usage is still read from
// the provider's own bytes.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { ProviderId } from '../../providers/types.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { forwardResponseHeaders, writeNow } from '../http/http-util.js';
import type { BodyCapture } from '../observe/body-log.js';
import type { RequestTracker } from '../observe/tracker.js';
import { createNativeUsageTap, type UsageTap } from './native-usage.js';
import { ClientBoundCall, type Upstreams } from './upstream.js';

/** Rewrites a stream's bytes into the text the client gets, event by event ('' when a chunk completes none). */
export interface ChunkRewriter {
  push(chunk: Buffer): string;
  end(): string;
}

/** An error answer handed back whole (RelayOptions.forDoor). */
export interface ErrorAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What a door's relay hands back instead of sending: an error answer, or a whole answer that broke off before its end. */
export type HeldBack = ErrorAnswer | { cut: Error };

export interface RelayOptions {
  stream: boolean;
  model: string | null;
  capture: BodyCapture | undefined;
  /** The wire protocol of the answer, to read its usage. */
  protocol: ProtocolId;
  /** Called with the answer's usage tap once a successful answer has reached the client whole. */
  onAnswered?: (tap: UsageTap) => void;
  /**
   * A door's fast path: nothing is sent until the answer is known good. An error status's answer
   * is read whole and handed back (the runner decides what the client sees), and so is a whole
   * answer that breaks off before its end (the client gets a 502, not a cut 200); a whole answer
   * leaves in one write at its end.
   */
  forDoor?: {
    /** What the client gets of a 2xx stream instead of its bytes. */
    rewrite?: ChunkRewriter;
    /** The one event that tells the client, in its protocol, that the stream broke off (else the connection is cut). */
    streamError?: (error: GatewayError) => string | undefined;
    /** Right before a good answer's headers go to the client: its status, and the headers to add to. */
    beforeHead?: (status: number, headers: Record<string, string | string[]>) => void;
  };
}

/** An error body needs no more; one larger is cut there (it is a detail of the status). */
const ERROR_LIMIT = 1024 * 1024;

/**
 * Sends one request upstream and relays the provider's answer to the client as it comes. Resolves
 * once the exchange is over (with what it held back, under forDoor); rejects with the error
 * the client should see when nothing was sent to it yet.
 */
export function relayAsIs(
  ctx: DaemonContext, provider: ProviderId, res: ServerResponse, tracker: RequestTracker,
  opts: RelayOptions, call: Dispatcher.DispatchOptions,
): Promise<HeldBack | undefined> {
  return new Promise<HeldBack | undefined>((resolve, reject) => {
    const relay = new NativeRelay(res, tracker, provider, opts, ctx.upstreams, resolve, reject);
    ctx.upstreams.dispatcher(provider).dispatch(call, relay);
  });
}

/**
 * Relays one upstream response to the client as undici hands it over: each chunk is written from
 * the socket's own callback (no body stream, no async iteration), the upstream socket is paused
 * while the client cannot take more, and a client that goes away aborts the upstream request.
 */
class NativeRelay extends ClientBoundCall {
  private tap: UsageTap | undefined;
  private status = 0;
  private streaming = false;
  /** Set while an answer is held instead of relayed (a door's error answer, or its whole answer). */
  private held: { headers: IncomingHttpHeaders; parts: Buffer[]; size: number; error: boolean } | undefined;
  private rewrite: ChunkRewriter | undefined;
  /** Chunks relayed: the monitor's token estimate until the provider's usage says better. */
  private relayed = 0;
  private readonly outputTokens = () => this.tap?.outputTokens() ?? this.relayed;
  private readonly resumeUpstream = () => this.controller?.resume();

  constructor(
    private readonly res: ServerResponse, private readonly tracker: RequestTracker, private readonly provider: ProviderId,
    private readonly opts: RelayOptions, private readonly upstreams: Upstreams,
    private readonly resolve: (e: HeldBack | undefined) => void, private readonly reject: (e: unknown) => void,
  ) {
    super(res);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    const door = this.opts.forDoor;
    const contentType = String(headers['content-type'] ?? '');
    const streaming = this.opts.stream || contentType.includes('text/event-stream');
    this.streaming = streaming;
    this.tap = createNativeUsageTap(this.opts.protocol, contentType);
    this.tracker.responseIsStream(streaming);
    if (door && (statusCode >= 400 || !streaming)) { this.held = { headers, parts: [], size: 0, error: statusCode >= 400 }; return; }
    const out = forwardResponseHeaders(headers);
    door?.beforeHead?.(statusCode, out);
    if (streaming && statusCode < 300 && door?.rewrite) {
      this.rewrite = door.rewrite;
      delete out['content-length'];
    }
    this.res.writeHead(statusCode, out);
    // A stream's headers go out now, as the provider sent them; any other response's headers leave
    // with its first body bytes, in one write.
    if (streaming) this.res.flushHeaders();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const h = this.held;
    if (h) {
      if (!h.error || h.size + chunk.length <= ERROR_LIMIT) { h.parts.push(chunk); h.size += chunk.length; }
      if (!h.error) this.tap?.push(chunk);
      return;
    }
    if (this.res.destroyed) return;
    const out = this.rewrite ? this.rewrite.push(chunk) : chunk;
    // A stream's chunk leaves at once; a whole answer's bytes go with its end.
    const ok = out.length === 0 || (this.streaming ? writeNow(this.res, out) : this.res.write(out));
    // Accounting after the write: the bytes go first (usage from the provider's own bytes).
    this.tap?.push(chunk);
    if (out.length > 0) {
      this.relayed++;
      this.opts.capture?.wrote(out);
      this.tracker.wrote(out.length, this.tap ? this.outputTokens : undefined);
    }
    if (!ok) {
      controller.pause();
      this.res.once('drain', this.resumeUpstream);
    }
  }

  onResponseEnd(): void {
    this.settled = true;
    const h = this.held;
    if (h?.error) { this.resolve({ status: this.status, headers: h.headers, body: Buffer.concat(h.parts, h.size) }); return; }
    const { tap, tracker } = this;
    if (h && !this.res.destroyed) {
      // A door's whole answer, complete: status, headers and body in one write.
      const body = h.parts.length === 1 ? h.parts[0]! : Buffer.concat(h.parts, h.size);
      const out = forwardResponseHeaders(h.headers);
      this.opts.forDoor?.beforeHead?.(this.status, out);
      this.res.writeHead(this.status, out);
      this.opts.capture?.wrote(body);
      tracker.wrote(body.length);
      this.res.end(body);
      tracker.finish(this.status, tap?.usage() ?? {}, tap?.model() ?? this.opts.model);
      if (tap) this.opts.onAnswered?.(tap);
      this.resolve(undefined);
      return;
    }
    if (this.res.destroyed && !tap?.complete()) {
      tracker.fail(499, 'client_closed', 'client closed the connection', tap?.usage() ?? {});
    } else {
      const tail = this.rewrite?.end();
      if (tail) { this.opts.capture?.wrote(tail); tracker.wrote(tail.length); }
      this.res.end(tail || undefined);
      const usage = tap?.usage() ?? {};
      if (this.status >= 400) tracker.fail(this.status, 'upstream_error', `${this.provider} answered ${this.status}`, usage);
      else {
        tracker.finish(this.status, usage, tap?.model() ?? this.opts.model);
        if (tap) this.opts.onAnswered?.(tap);
      }
    }
    this.resolve(undefined);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    this.settled = true;
    const { tap, tracker } = this;
    const h = this.held;
    if (this.status === 0 || h) {
      // Nothing was sent: the client gets the error in its protocol's shape (or is gone). An error
      // answer that broke off is still that answer: its status says what went wrong.
      if (this.clientGone) { tracker.fail(499, 'client_closed', 'client closed the connection', tap?.usage() ?? {}); this.resolve(undefined); return; }
      if (h) { this.resolve(h.error ? { status: this.status, headers: h.headers, body: Buffer.concat(h.parts, h.size) } : { cut: err }); return; }
      // A door's runner decides about a call that got no answer (it may try again): the error as undici gave it.
      if (this.opts.forDoor) { this.reject(err); return; }
      const ge = err instanceof GatewayError ? err : this.upstreams.failure(this.provider, err);
      tracker.fail(ge.status, ge.code, ge.message);
      this.reject(ge);
      return;
    }
    // Mid-body failure: the status line is gone. A door's client gets its protocol's error event;
    // otherwise the connection is cut, so the client sees it broke.
    if (tap?.complete()) { this.res.end(); tracker.finish(this.status, tap.usage(), tap.model() ?? this.opts.model); }
    else if (this.clientGone) { this.res.destroy(); tracker.fail(499, 'client_closed', 'client closed the connection', tap?.usage() ?? {}); }
    else {
      const ge = this.upstreams.failure(this.provider, err, this.streaming ? 'stream' : 'response');
      const frame = this.status < 300 ? this.opts.forDoor?.streamError?.(ge) : undefined;
      if (frame !== undefined && !this.res.destroyed) {
        // After a blank line: the provider may have stopped inside an event.
        const tail = `${this.rewrite?.end() ?? ''}\n\n`;
        this.opts.capture?.wrote(tail + frame);
        tracker.wrote(tail.length + frame.length);
        this.res.end(tail + frame);
      } else this.res.destroy();
      tracker.fail(ge.status, ge.code, ge.message, tap?.usage() ?? {});
    }
    this.resolve(undefined);
  }
}
