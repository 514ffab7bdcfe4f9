// POST /v1/chat/completions: parse and validate the OpenAI-format request, route it by model,
// translate it for the provider, and translate the answer back — streams event by event.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolveModel } from '../providers/models.js';
import { fromOpenAIError } from '../providers/openai/errors.js';
import { toOpenAIRequest } from '../providers/openai/request.js';
import { createOpenAIStreamFilter } from '../providers/openai/stream.js';
import { translatorFor } from '../providers/index.js';
import { provider as descriptor } from '../providers/registry.js';
import { TranslationError, type ChatCompletionRequest, type OpenAIUsage, type TranslateContext } from '../providers/types.js';
import { validateChatRequest } from '../providers/validate.js';
import { checkModelAllowed, extractKey, UNIFIED_KEY_PLACEMENTS } from './auth.js';
import type { BodyCapture } from './body-log.js';
import type { DaemonContext } from './context.js';
import { GatewayError } from './errors.js';
import { readBody } from './http-util.js';
import { RequestTracker, type RequestFacts } from './tracker.js';
import { gatewayCallHeaders } from './upstream.js';
import { callUpstream, type CallOutcome, type OpenStream } from './unified-call.js';
import { createOpenAIRelay, createRelaySink, createTranslatedRelay, usageToTokens } from './unified-stream.js';

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}, capture?: BodyCapture): number {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
  capture?.wrote(text);
  return text.length;
}

/** A translated answer names its model `provider/id`; accounting wants the provider's own id. */
function servedModel(provider: string, model: string): string {
  return model.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
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
  const providerKey = ctx.providerKeys.cached(route.provider) ?? await ctx.providerKeys.require(route.provider);
  const stream = body.stream === true;

  const tctx: TranslateContext = {
    model: route.model,
    created: ctx.now(),
    fallbackId: `chatcmpl-${randomBytes(12).toString('hex')}`,
    includeUsage: stream && body.stream_options?.include_usage === true,
  };
  const translator = await translatorFor(descriptor(route.provider).protocol);
  let call;
  let clientWantsUsage = tctx.includeUsage;
  try {
    if (translator) call = translator.toRequest(body, tctx);
    else { const c = toOpenAIRequest(body, route.model); call = c; clientWantsUsage = c.clientWantsUsage; }
  } catch (e) { throw asGatewayError(e); }

  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'unified', provider: route.provider, model: route.model,
    method: 'POST', path: '/v1/chat/completions', stream, requestBytes: raw.length, headers: req.headers,
  });
  facts.tracked = true;
  const capture = ctx.bodyLog?.begin(tracker, raw);
  // A 2xx stream goes to the relay from undici's callbacks as soon as its headers arrive.
  const openStream: OpenStream | undefined = !stream ? undefined : (done) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    const relay = translator
      ? createTranslatedRelay(translator.createStreamTranslator(tctx))
      : createOpenAIRelay(createOpenAIStreamFilter(clientWantsUsage));
    return createRelaySink(ctx, route.provider, res, tracker, relay, route.model, capture, done);
  };

  let upstream: CallOutcome;
  try {
    upstream = await callUpstream(ctx.upstreams.dispatcher(route.provider), {
      method: 'POST', path: call.path, body: JSON.stringify(call.body),
      headers: gatewayCallHeaders(route.provider, providerKey, { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...call.headers }),
    }, res, openStream);
  } catch (err) {
    const ge = err instanceof GatewayError ? err : ctx.upstreams.failure(route.provider, err);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }
  if (upstream.kind === 'client_closed') { tracker.fail(499, 'client_closed', 'client closed the connection'); return; }
  if (upstream.kind === 'streamed') return;
  if (upstream.kind === 'cut') {
    const ge = ctx.upstreams.failure(route.provider, upstream.err, 'response');
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }

  const { status, text } = upstream;
  if (status >= 400) {
    const mapped = translator ? translator.fromError(status, text) : fromOpenAIError(status, text);
    const extra: Record<string, string> = {};
    const retryAfter = upstream.headers['retry-after'];
    if (typeof retryAfter === 'string') extra['retry-after'] = retryAfter;
    sendJson(res, mapped.status, mapped.body, extra, capture);
    tracker.fail(mapped.status, mapped.body.error.code ?? mapped.body.error.type, mapped.body.error.message);
    return;
  }

  let json: unknown;
  try { json = JSON.parse(text); } catch {
    const ge = new GatewayError('upstream_unreachable', `${route.provider} sent a response that is not JSON`);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }
  if (translator) {
    const out = translator.fromResponse(json, tctx);
    tracker.wrote(sendJson(res, 200, out, {}, capture));
    tracker.finish(200, usageToTokens(out.usage), servedModel(route.provider, out.model));
  } else {
    // OpenAI: the answer is already in the unified format; send its bytes unchanged.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
    capture?.wrote(text);
    tracker.wrote(text.length);
    const j = json as { usage?: OpenAIUsage; model?: string };
    tracker.finish(200, usageToTokens(j.usage), j.model ?? null);
  }
}
