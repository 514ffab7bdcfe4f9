// The Chat door's same-protocol path (POST /v1/chat/completions for a provider that speaks OpenAI
// Chat): the request goes on as it came, only the model changed (and what the provider's quirk
// profile fixes: apply-quirks.ts, the same function the translated path uses), and the answer
// comes back as it came. The pipeline (pipeline.ts) does everything before and around it.
import type { ServerResponse } from 'node:http';
import { fromOpenAIError } from '../../providers/openai/errors.js';
import { toOpenAIRequest } from '../../providers/openai/request.js';
import { createOpenAIStreamFilter } from '../../providers/openai/stream.js';
import { applyChatQuirks } from '../../providers/protocols/openai-chat/provider/apply-quirks.js';
import { quirksOf } from '../../providers/quirks.js';
import { targetOf } from '../../providers/target.js';
import { provider as descriptor, upstreamPath } from '../../providers/registry.js';
import { TranslationError, type ChatCompletionRequest, type OpenAIUsage } from '../../providers/types.js';
import { sendAnswerAsStream, streamsFromWholeAnswer } from './answer-stream.js';
import type { BodyCapture } from '../observe/body-log.js';
import { GatewayError } from '../http/errors.js';
import { newIdSuffix, type SameProtocol } from './pipeline.js';
import { gatewayCallHeaders } from '../relay/upstream.js';
import { callUpstream, type CallOutcome, type OpenStream } from '../relay/upstream-call.js';
import { createOpenAIRelay, createRelaySink, usageToTokens } from '../relay/stream-relay.js';

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}, capture?: BodyCapture): number {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
  capture?.wrote(text);
  return text.length;
}

/**
 * A provider that speaks OpenAI Chat itself: the request goes on with only the routing prefix
 * removed, and the answer comes back as it came. The one addition: a stream always asks for usage
 * (for accounting), and the client sees the usage chunk only if it asked for it.
 */
export const chatSameProtocol: SameProtocol = async (ctx, provider, providerKey, res, raw, model, tracker, capture) => {
  const body = raw as ChatCompletionRequest; // validated by the door
  const p = descriptor(provider);
  const quirks = quirksOf(p);
  const call = toOpenAIRequest(body, model);
  // A server whose streams lose tool calls is asked without streaming; the answer is streamed here.
  const wholeAnswer = streamsFromWholeAnswer(quirks, body.stream === true, Array.isArray(body.tools) && body.tools.length > 0);
  if (wholeAnswer) { call.body = { ...call.body, stream: false }; delete call.body.stream_options; }
  try {
    call.body = applyChatQuirks(call.body, quirks, model, p.displayName);
  } catch (e) {
    if (!(e instanceof TranslationError)) throw e;
    const ge = new GatewayError('invalid_request', e.message, e.param);
    tracker.fail(ge.status, ge.code, ge.message);
    throw ge;
  }
  const stream = call.body.stream === true;
  const openStream: OpenStream | undefined = !stream ? undefined : (done) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    return createRelaySink(ctx, provider, res, tracker, createOpenAIRelay(createOpenAIStreamFilter(call.clientWantsUsage)), model, capture, done);
  };

  let upstream: CallOutcome;
  try {
    upstream = await callUpstream(ctx.upstreams.dispatcher(provider), {
      method: 'POST', path: upstreamPath(p, call.path), body: JSON.stringify(call.body),
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
    const mapped = fromOpenAIError(status, text, p);
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
  if (wholeAnswer) {
    const [{ readChatResponse }, { createChatStreamRenderer }] = await Promise.all([
      import('../../providers/protocols/openai-chat/provider/read-response.js'), import('../../providers/protocols/openai-chat/client/render-stream.js'),
    ]);
    const answer = readChatResponse(json, targetOf(p, model));
    // As the provider said it (this door shows a same-protocol provider's own model id).
    const renderer = createChatStreamRenderer({ model, modelPrefix: '', created: ctx.now(), fallbackId: `chatcmpl-${newIdSuffix()}`, includeUsage: call.clientWantsUsage });
    sendAnswerAsStream(res, renderer, answer, tracker, model, capture);
    return;
  }
  // The answer is already in the door's format; its bytes go back unchanged.
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  capture?.wrote(text);
  tracker.wrote(text.length);
  tracker.finish(200, usageToTokens(json.usage), json.model ?? null);
};
