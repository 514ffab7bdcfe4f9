// POST /v1/chat/completions: validate the OpenAI-format request and route it by model. A model of a
// provider that speaks OpenAI Chat gets the request as it came (only the model changed); any other
// goes through the hub's pipeline with the Chat door's protocol module (pipeline.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolveModel } from '../providers/models.js';
import { fromOpenAIError } from '../providers/openai/errors.js';
import { toOpenAIRequest } from '../providers/openai/request.js';
import { createOpenAIStreamFilter } from '../providers/openai/stream.js';
import { provider as descriptor } from '../providers/registry.js';
import { TranslationError, type ChatCompletionRequest, type OpenAIUsage } from '../providers/types.js';
import { validateChatRequest } from '../providers/validate.js';
import { checkModelAllowed, extractKey, UNIFIED_KEY_PLACEMENTS } from './auth.js';
import type { BodyCapture } from './body-log.js';
import type { DaemonContext } from './context.js';
import { GatewayError } from './errors.js';
import { readBody } from './http-util.js';
import { RequestTracker, type RequestFacts } from './tracker.js';
import { gatewayCallHeaders } from './upstream.js';
import { callUpstream, type CallOutcome, type OpenStream } from './unified-call.js';
import { createOpenAIRelay, createRelaySink, usageToTokens } from './unified-stream.js';
import { CHAT_DOOR, translateThrough } from './pipeline.js';

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}, capture?: BodyCapture): number {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
  capture?.wrote(text);
  return text.length;
}

function asGatewayError(err: unknown): unknown {
  if (err instanceof TranslationError) {
    return new GatewayError(err.code === 'model_not_found' ? 'model_not_found' : 'invalid_request', err.message, err.param);
  }
  return err;
}

export async function handleUnified(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, facts: RequestFacts): Promise<void> {
  const record = ctx.keys.authenticate(extractKey(req, null, UNIFIED_KEY_PLACEMENTS), 'openai');
  facts.key = { id: record.id, name: record.name };
  const raw = await readBody(req, ctx.settings.bodyLimitBytes);
  let parsed: unknown;
  try { parsed = JSON.parse(raw.toString('utf8')); } catch (e) {
    throw new GatewayError('invalid_request', `request body is not valid JSON: ${(e as Error).message}`, 'body');
  }
  let body: ChatCompletionRequest;
  let route;
  try {
    body = validateChatRequest(parsed);
    route = resolveModel(body.model, ctx.settings.aliases);
  } catch (e) { throw asGatewayError(e); }
  facts.provider = route.provider;
  facts.model = route.model;
  checkModelAllowed(record, body.model);
  const p = descriptor(route.provider);
  const providerKey = ctx.providerKeys.cached(p.id) ?? await ctx.providerKeys.require(p.id);
  const stream = body.stream === true;
  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'unified', provider: p.id, model: route.model,
    method: 'POST', path: CHAT_DOOR.path, stream, requestBytes: raw.length, headers: req.headers,
  });
  facts.tracked = true;
  const capture = ctx.bodyLog?.begin(tracker, raw);
  // Every other protocol: through the hub (the Chat door's module, the provider's module).
  if (p.protocol !== CHAT_DOOR.protocol) {
    const includeUsage = stream && body.stream_options?.include_usage === true;
    await translateThrough(ctx, CHAT_DOOR, p, providerKey, res, body as Record<string, unknown>, route.model, tracker, capture, { includeUsage });
    return;
  }
  await sameProtocol(ctx, p.id, providerKey, res, body, route.model, tracker, capture);
}

/**
 * A provider that speaks OpenAI Chat itself: the request goes on with only the routing prefix
 * removed, and the answer comes back as it came. The one addition: a stream always asks for usage
 * (for accounting), and the client sees the usage chunk only if it asked for it.
 */
async function sameProtocol(
  ctx: DaemonContext, provider: string, providerKey: string, res: ServerResponse, body: ChatCompletionRequest,
  model: string, tracker: RequestTracker, capture: BodyCapture | undefined,
): Promise<void> {
  const stream = body.stream === true;
  const call = toOpenAIRequest(body, model);
  const openStream: OpenStream | undefined = !stream ? undefined : (done) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    return createRelaySink(ctx, provider, res, tracker, createOpenAIRelay(createOpenAIStreamFilter(call.clientWantsUsage)), model, capture, done);
  };

  let upstream: CallOutcome;
  try {
    upstream = await callUpstream(ctx.upstreams.dispatcher(provider), {
      method: 'POST', path: call.path, body: JSON.stringify(call.body),
      headers: gatewayCallHeaders(provider, providerKey, { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' }),
    }, res, openStream);
  } catch (err) {
    const ge = err instanceof GatewayError ? err : ctx.upstreams.failure(provider, err);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }
  if (upstream.kind === 'client_closed') { tracker.fail(499, 'client_closed', 'client closed the connection'); return; }
  if (upstream.kind === 'streamed') return;
  if (upstream.kind === 'cut') {
    const ge = ctx.upstreams.failure(provider, upstream.err, 'response');
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }

  const { status, text } = upstream;
  if (status >= 400) {
    const mapped = fromOpenAIError(status, text);
    const extra: Record<string, string> = {};
    const retryAfter = upstream.headers['retry-after'];
    if (typeof retryAfter === 'string') extra['retry-after'] = retryAfter;
    sendJson(res, mapped.status, mapped.body, extra, capture);
    tracker.fail(mapped.status, mapped.body.error.code ?? mapped.body.error.type, mapped.body.error.message);
    return;
  }
  let json: { usage?: OpenAIUsage; model?: string };
  try { json = JSON.parse(text) as typeof json; } catch {
    const ge = new GatewayError('upstream_unreachable', `${provider} sent a response that is not JSON`);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }
  // The answer is already in the door's format; its bytes go back unchanged.
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  capture?.wrote(text);
  tracker.wrote(text.length);
  tracker.finish(200, usageToTokens(json.usage), json.model ?? null);
}
