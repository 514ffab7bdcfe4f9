// Through the IR: the door's protocol module parses the client's body, the provider protocol's
// builds the call; the provider's answer, stream or error comes back through its reader and the
// door's renderer. Streams are relayed chunk by chunk (relay/stream-relay.ts), never held back.
import type { RenderContext } from '../../providers/ir/protocol.js';
import { loadedProviderSide, providerSide } from '../../providers/protocols/provider-sides.js';
import { GatewayError } from '../http/errors.js';
import { sendJsonText, SSE_HEADERS } from '../http/send.js';
import { irUsageToTokens } from '../observe/events.js';
import { createIrRelay } from '../relay/ir-relay.js';
import { createRelaySink } from '../relay/stream-relay.js';
import { breakpointsFor, promptCacheKeyFor } from '../caching/marks.js';
import type { OpenStream } from '../relay/upstream-call.js';
import { sendAnswerAsStream, wholeAnswerFor } from './answer-stream.js';
import { clientOf, loadedClient } from './clients.js';
import { DONE, type Attempt, type DoorRun } from './door.js';
import { callProvider } from './provider-call.js';
import { withRoute } from './route-header.js';
import { renderedId } from '../telemetry/answer.js';

export async function translateThrough(run: DoorRun): Promise<Attempt> {
  const { ctx, door, route, res, tracker, capture } = run;
  const { p, model, protocol, target } = route;
  const client = loadedClient(door) ?? await clientOf(door);
  const upstream = loadedProviderSide(protocol) ?? await providerSide(protocol);
  const wholeAnswer = wholeAnswerFor(run);
  // The door's module reads the stream flag from the body (Gemini's URL says it: the call does).
  const ir = client.parseRequest(run.call.stream === undefined ? run.body : { ...run.body, stream: run.stream }, target);
  // What keeps the provider's prompt cache warm for this client (caching/marks.ts).
  const cacheKey = promptCacheKeyFor(run);
  if (cacheKey !== undefined) ir.promptCacheKey = cacheKey;
  const breakpoints = breakpointsFor(run);
  const call = upstream.buildRequest(wholeAnswer ? { ...ir, stream: false } : ir, breakpoints ? { ...target, cache: breakpoints } : target);
  const stream = run.stream && !wholeAnswer;
  // A model shown on another provider's door is `provider/<its id>`; on its own protocol's door
  // (a request translated only for a quirk) the provider's own id, as its fast path shows it.
  const prefix = protocol === door.protocol ? '' : `${p.id}/`;
  const rctx: RenderContext = {
    model: `${prefix}${model}`, modelPrefix: prefix, created: ctx.now(), fallbackId: door.newId(),
    includeUsage: door.includeUsage?.(run.body) === true, ...run.extras.render,
  };
  if (run.call.streamFormat) rctx.streamFormat = run.call.streamFormat;

  const openStream: OpenStream | undefined = !stream ? undefined : (done) => {
    const head = withRoute(run, 200, SSE_HEADERS);
    if (rctx.streamFormat === 'json-array') head['content-type'] = 'application/json; charset=utf-8';
    res.writeHead(200, head);
    res.flushHeaders();
    const relay = createIrRelay(upstream.createStreamReader(target), client.createStreamRenderer(rctx));
    return createRelaySink(ctx, p.id, res, tracker, relay, model, capture, done);
  };
  const answered = await callProvider(run, call, stream, openStream);
  if ('kind' in answered) return answered;
  let json: unknown;
  try { json = JSON.parse(answered.text); } catch {
    throw new GatewayError('upstream_unreachable', `${p.displayName} sent a response that is not JSON`);
  }
  const answer = upstream.readResponse(json, target);
  if (wholeAnswer) {
    sendAnswerAsStream(res, client.createStreamRenderer(rctx), answer, tracker, model, capture, withRoute(run, 200, SSE_HEADERS));
    return DONE;
  }
  const rendered = client.renderResponse(answer, answer.model ? { ...rctx, model: `${prefix}${answer.model}` } : rctx);
  const text = JSON.stringify(rendered);
  rctx.onFinal?.(rendered as Record<string, unknown>, text);
  tracker.span?.answered(answer, renderedId(rendered));
  tracker.wrote(sendJsonText(res, 200, text, withRoute(run, 200, {})));
  capture?.wrote(text);
  tracker.finish(200, irUsageToTokens(answer.usage), answer.model ?? model);
  return DONE;
}
