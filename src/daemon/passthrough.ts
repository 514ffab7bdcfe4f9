// Native endpoints (/anthropic/*, /openai/*, /gemini/*): the request body streams upstream byte for
// byte, only the credential is swapped, and the provider's status, headers and body stream back as
// they arrive. A client that goes away aborts the upstream request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ProviderId } from '../providers/types.js';
import { checkModelAllowed, extractKey, KEY_PLACEMENTS } from './auth.js';
import type { DaemonContext } from './context.js';
import { GatewayError, sendError } from './errors.js';
import { declaredLength, forwardRequestHeaders, forwardResponseHeaders, limitedBody, readBody, stripKeyParam, write } from './http-util.js';
import { createNativeUsageTap } from './native-usage.js';
import { RequestTracker, type RequestFacts } from './tracker.js';
import { setProviderAuth, upstreamFailure } from './upstream.js';
import { ANTHROPIC_VERSION } from '../providers/anthropic/request.js';


/** The model a native request names: in the path for Gemini, in the JSON body for the others. */
function nativeModel(provider: ProviderId, upstreamPath: string, body: Buffer | undefined): string | null {
  if (provider === 'gemini') {
    const m = /\/models\/([^/:]+)/.exec(upstreamPath);
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
  upstreamPath: string, rawQuery: string, facts: RequestFacts,
): Promise<void> {
  const query = rawQuery ? new URLSearchParams(rawQuery) : null;
  const record = ctx.keys.authenticate(extractKey(req, query, KEY_PLACEMENTS[provider]));
  facts.key = { id: record.id, name: record.name };
  const limit = ctx.settings.bodyLimitBytes;
  const length = declaredLength(req, limit);

  // Only keys with a model allow-list make us look at the body; the original bytes still go upstream.
  let buffered: Buffer | undefined;
  let model: string | null = provider === 'gemini' ? nativeModel(provider, upstreamPath, undefined) : null;
  facts.model = model;
  if (record.models) {
    if (provider !== 'gemini') buffered = await readBody(req, limit);
    model = nativeModel(provider, upstreamPath, buffered);
    facts.model = model;
    checkModelAllowed(record, model);
  }
  const providerKey = ctx.providerKeys.cached(provider) ?? await ctx.providerKeys.require(provider);

  const headers = forwardRequestHeaders(req.headers);
  setProviderAuth(provider, headers, providerKey);
  if (provider === 'anthropic' && headers['anthropic-version'] === undefined) headers['anthropic-version'] = ANTHROPIC_VERSION;
  // Loopback needs no compression, and an identity body lets us read usage for accounting.
  headers['accept-encoding'] = 'identity';
  const q = provider === 'gemini' ? stripKeyParam(rawQuery) : rawQuery;
  const path = q ? `${upstreamPath}?${q}` : upstreamPath;
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const stream = /[:?&]alt=sse|streamGenerateContent/.test(path) || (req.headers.accept ?? '').includes('text/event-stream');
  // logBodies (debugging only): the body is read whole to keep a copy, and that buffer goes upstream.
  const bodyLog = ctx.bodyLog;
  if (bodyLog && hasBody && !buffered) buffered = await readBody(req, limit);

  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'native', provider, model,
    method: req.method ?? 'GET', path: upstreamPath, stream, requestBytes: length ?? buffered?.length ?? 0, headers: req.headers,
  });
  facts.tracked = true;
  const capture = bodyLog?.begin(tracker, buffered);
  const abort = new AbortController();
  const onClose = () => { if (!res.writableFinished) abort.abort(); };
  res.on('close', onClose);

  let upstream;
  try {
    upstream = await ctx.upstreams.request(provider, {
      method: (req.method ?? 'GET') as 'GET',
      path,
      headers,
      body: !hasBody ? undefined : buffered ?? (length !== undefined ? req : Readable.from(limitedBody(req, limit))),
      signal: abort.signal,
    });
  } catch (err) {
    if (abort.signal.aborted) { tracker.fail(499, 'client_closed', 'client closed the connection'); return; }
    const ge = err instanceof GatewayError ? err : upstreamFailure(provider, ctx.upstreams.origins[provider], err);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }

  const contentType = String(upstream.headers['content-type'] ?? '');
  const streaming = stream || contentType.includes('text/event-stream');
  res.writeHead(upstream.statusCode, forwardResponseHeaders(upstream.headers));
  // A stream's headers go out now, as the provider sent them; any other response's headers leave
  // with its first body bytes, in one write.
  if (streaming) res.flushHeaders();
  const tap = createNativeUsageTap(provider, contentType);
  tracker.responseIsStream(streaming);
  try {
    for await (const chunk of (capture ? capture.tee(upstream.body) : upstream.body) as AsyncIterable<Buffer>) {
      tap?.push(chunk);
      tracker.wrote(chunk.length, tap ? () => tap.outputTokens() : undefined);
      if (!(await write(res, chunk))) break;
    }
  } catch (err) {
    // Mid-body failure: the status line is gone; cut the connection so the client sees it broke.
    res.destroy();
    if (tap?.complete()) { tracker.finish(upstream.statusCode, tap.usage(), tap.model() ?? model); return; }
    const ge = abort.signal.aborted ? null : upstreamFailure(provider, ctx.upstreams.origins[provider], err);
    tracker.fail(ge ? ge.status : 499, ge ? ge.code : 'client_closed', ge ? ge.message : 'client closed the connection', tap?.usage() ?? {});
    return;
  }
  if ((abort.signal.aborted || res.destroyed) && !tap?.complete()) {
    upstream.body.destroy();
    tracker.fail(499, 'client_closed', 'client closed the connection', tap?.usage() ?? {});
    return;
  }
  res.end();
  const usage = tap?.usage() ?? {};
  if (upstream.statusCode >= 400) tracker.fail(upstream.statusCode, 'upstream_error', `${provider} answered ${upstream.statusCode}`, usage);
  else tracker.finish(upstream.statusCode, usage, tap?.model() ?? model);
}
