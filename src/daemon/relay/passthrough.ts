// Native endpoints (/anthropic/*, /openai/*, /gemini/*, /<configured provider>/*): the request body
// streams upstream byte for byte, only the credential is swapped, and the provider's status, headers and body stream back as
// they arrive. A client that goes away aborts the upstream request.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProviderId } from '../../providers/types.js';
import { checkModelAllowed, extractKey } from '../access/auth.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { provider as descriptor, upstreamPath, type ProviderDescriptor } from '../../providers/registry.js';
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { declaredLength, forwardResponseHeaders, limitedBody, readBody, upstreamQuery, writeNow } from '../http/http-util.js';
import type { BodyCapture } from '../observe/body-log.js';
import { createNativeUsageTap, type UsageTap } from './native-usage.js';
import { RequestTracker, type RequestFacts } from '../observe/tracker.js';
import { ClientBoundCall, providerHeaders, type Upstreams } from './upstream.js';


/** The model a native request names: in the path (Gemini's protocol) or in the JSON body. */
function nativeModel(modelIn: 'body' | 'path', nativePath: string, body: Buffer | undefined): string | null {
  if (modelIn === 'path') {
    const m = /\/models\/([^/:]+)/.exec(nativePath);
    return m ? decodeURIComponent(m[1]!) : null;
  }
  if (!body || body.length === 0) return null;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { model?: unknown };
    return typeof parsed.model === 'string' ? parsed.model : null;
  } catch { return null; }
}

export async function handleNative(
  ctx: DaemonContext, provider: ProviderId, req: IncomingMessage, res: ServerResponse,
  nativePath: string, rawQuery: string, seen: RequestFacts,
): Promise<void> {
  const query = rawQuery ? new URLSearchParams(rawQuery) : null;
  const p = descriptor(provider);
  const wire = PROTOCOL_FACTS[p.protocol];
  const record = ctx.keys.authenticate(extractKey(req, query, p.clientKeyPlacements), wire.errorShape);
  seen.key = { id: record.id, name: record.name };
  const limit = ctx.settings.bodyLimitBytes;
  const length = declaredLength(req, limit);

  // Only keys with a model allow-list make us look at the body; the original bytes still go upstream.
  let buffered: Buffer | undefined;
  let model: string | null = wire.modelIn === 'path' ? nativeModel('path', nativePath, undefined) : null;
  seen.model = model;
  if (record.models) {
    if (wire.modelIn === 'body') buffered = await readBody(req, limit);
    model = nativeModel(wire.modelIn, nativePath, buffered);
    seen.model = model;
    checkModelAllowed(record, model);
  }
  const providerKey = ctx.providerKeys.cached(provider) ?? await ctx.providerKeys.require(provider);

  const headers = providerHeaders(provider, req.headers, providerKey);
  // A `key` parameter is a client credential on every prefix: never forwarded.
  const q = upstreamQuery(rawQuery);
  // The path under the prefix, mapped onto the provider's base URL (its path written once).
  const path = upstreamPath(p, q ? `${nativePath}?${q}` : nativePath);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const stream = /[:?&]alt=sse|streamGenerateContent/.test(path) || (req.headers.accept ?? '').includes('text/event-stream');
  // logBodies (debugging only): the body is read whole to keep a copy, and that buffer goes upstream.
  const bodyLog = ctx.bodyLog;
  if (bodyLog && hasBody && !buffered) buffered = await readBody(req, limit);

  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'native', provider, model,
    method: req.method ?? 'GET', path: nativePath, stream, requestBytes: length ?? buffered?.length ?? 0, headers: req.headers,
  });
  seen.tracked = true;
  const capture = bodyLog?.begin(tracker, buffered);
  const body = !hasBody ? undefined : buffered ?? (length !== undefined ? req : Readable.from(limitedBody(req, limit)));
  await relayAsIs(ctx, provider, res, tracker, { stream, model, capture, protocol: answerProtocol(p, nativePath) }, { method: (req.method ?? 'GET') as 'GET', path, headers, body });
}

/** The protocol a native path's answer is in: another one the provider also speaks when the path is its, else its main one. */
function answerProtocol(p: ProviderDescriptor, nativePath: string): ProtocolId {
  return p.alsoSpeaks?.find((id) => nativePath.startsWith(PROTOCOL_FACTS[id].mainPath)) ?? p.protocol;
}

export interface RelayOptions {
  stream: boolean;
  model: string | null;
  capture: BodyCapture | undefined;
  /** The wire protocol of the answer, to read its usage. */
  protocol: ProtocolId;
  /** Called with the answer's usage tap once a successful answer has reached the client whole. */
  onAnswered?: (tap: UsageTap) => void;
}

/**
 * Sends one request upstream and relays the provider's answer to the client as it comes, status,
 * headers and bytes unchanged, with its usage accounted (native prefixes, and the doors' fast path).
 * Resolves once the exchange is over; rejects with the error the client should see when nothing
 * was sent to it yet.
 */
export function relayAsIs(
  ctx: DaemonContext, provider: ProviderId, res: ServerResponse, tracker: RequestTracker,
  opts: RelayOptions, call: Dispatcher.DispatchOptions,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const relay = new NativeRelay(res, tracker, provider, opts, ctx.upstreams, resolve, reject);
    ctx.upstreams.dispatcher(provider).dispatch(call, relay);
  });
}

/**
 * Relays one upstream response to the client as undici hands it over: each chunk is written from
 * the socket's own callback (no body stream, no async iteration), the upstream socket is paused
 * while the client cannot take more, and a client that goes away aborts the upstream request.
 * Settles once the exchange is over: resolves, or rejects with the error the client should see
 * when nothing was sent to it yet.
 */
class NativeRelay extends ClientBoundCall {
  private tap: UsageTap | undefined;
  private status = 0;
  private streaming = false;
  private readonly outputTokens = () => this.tap?.outputTokens();
  private readonly resumeUpstream = () => this.controller?.resume();

  constructor(
    private readonly res: ServerResponse, private readonly tracker: RequestTracker, private readonly provider: ProviderId,
    private readonly opts: RelayOptions, private readonly upstreams: Upstreams,
    private readonly resolve: () => void, private readonly reject: (e: unknown) => void,
  ) {
    super(res);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    const contentType = String(headers['content-type'] ?? '');
    const streaming = this.opts.stream || contentType.includes('text/event-stream');
    this.res.writeHead(statusCode, forwardResponseHeaders(headers));
    // A stream's headers go out now, as the provider sent them; any other response's headers leave
    // with its first body bytes, in one write.
    if (streaming) this.res.flushHeaders();
    this.streaming = streaming;
    this.tap = createNativeUsageTap(this.opts.protocol, contentType);
    this.tracker.responseIsStream(streaming);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.res.destroyed) return;
    // A stream's chunk leaves at once; a whole answer's bytes go with its end.
    const ok = this.streaming ? writeNow(this.res, chunk) : this.res.write(chunk);
    // Accounting after the write: the bytes go first.
    this.tap?.push(chunk);
    this.opts.capture?.wrote(chunk);
    this.tracker.wrote(chunk.length, this.tap ? this.outputTokens : undefined);
    if (!ok) {
      controller.pause();
      this.res.once('drain', this.resumeUpstream);
    }
  }

  onResponseEnd(): void {
    this.settled = true;
    const { tap, tracker } = this;
    if (this.res.destroyed && !tap?.complete()) {
      tracker.fail(499, 'client_closed', 'client closed the connection', tap?.usage() ?? {});
    } else {
      this.res.end();
      const usage = tap?.usage() ?? {};
      if (this.status >= 400) tracker.fail(this.status, 'upstream_error', `${this.provider} answered ${this.status}`, usage);
      else {
        tracker.finish(this.status, usage, tap?.model() ?? this.opts.model);
        if (tap) this.opts.onAnswered?.(tap);
      }
    }
    this.resolve();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    this.settled = true;
    const { tap, tracker } = this;
    if (this.status === 0) {
      // Nothing was sent: the client gets the error in its protocol's shape (or is gone).
      if (this.clientGone) { tracker.fail(499, 'client_closed', 'client closed the connection'); this.resolve(); return; }
      const ge = err instanceof GatewayError ? err : this.upstreams.failure(this.provider, err);
      tracker.fail(ge.status, ge.code, ge.message);
      this.reject(ge);
      return;
    }
    // Mid-body failure: the status line is gone; cut the connection so the client sees it broke.
    this.res.destroy();
    if (tap?.complete()) tracker.finish(this.status, tap.usage(), tap.model() ?? this.opts.model);
    else if (this.clientGone) tracker.fail(499, 'client_closed', 'client closed the connection', tap?.usage() ?? {});
    else {
      const ge = this.upstreams.failure(this.provider, err, this.streaming ? 'stream' : 'response');
      tracker.fail(ge.status, ge.code, ge.message, tap?.usage() ?? {});
    }
    this.resolve();
  }
}
