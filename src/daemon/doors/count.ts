// A door's token count (Anthropic's count_tokens, Gemini's countTokens) for a model of another
// protocol: the provider's own count where it has one (Gemini's countTokens), else the documented
// estimate of estimate-tokens.ts, marked `x-gateway-token-count: estimate`; answered in the door's
// shape (its module's countTokens). A model of the door's own protocol takes the fast path instead.
import { estimateInputTokens } from '../../providers/ir/estimate-tokens.js';
import { providerSide } from '../../providers/protocols/provider-sides.js';
import { upstreamPath } from '../../providers/registry.js';
import { GatewayError } from '../http/errors.js';
import { sendJson } from '../http/send.js';
import { callUpstream, type CallOutcome } from '../relay/upstream-call.js';
import { gatewayCallHeaders } from '../relay/upstream.js';
import { clientOf } from './clients.js';
import { DONE, type Attempt, type DoorRun } from './door.js';
import { failedAnswer, failedTransport } from './provider-error.js';
import { withRoute } from './route-header.js';

export async function countThrough(run: DoorRun): Promise<Attempt> {
  const { ctx, door, route, res, tracker, capture } = run;
  const { p, target } = route;
  const counting = (await clientOf(door)).countTokens;
  if (!counting) throw new GatewayError('not_found', `${door.path} has no token count`);
  const ir = counting.parseRequest(run.body, target);
  const counter = (await providerSide(route.protocol)).countTokens;
  let tokens: number | undefined;
  if (counter) {
    const call = counter.build(ir, target);
    let outcome: CallOutcome;
    try {
      outcome = await callUpstream(ctx.upstreams.dispatcher(p.id), {
        method: 'POST', path: upstreamPath(p, call.path), body: JSON.stringify(call.body),
        headers: gatewayCallHeaders(p.id, route.providerKey, { 'content-type': 'application/json', accept: 'application/json' }),
      }, res, undefined);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      return failedTransport(run, err);
    }
    if (outcome.kind === 'client_closed') { tracker.fail(499, 'client_closed', 'client closed the connection'); return DONE; }
    if (outcome.kind !== 'answer') throw ctx.upstreams.failure(p.id, outcome.kind === 'cut' ? outcome.err : new Error('no answer'), 'response');
    if (outcome.status >= 400) return failedAnswer(run, route.protocol, { status: outcome.status, headers: outcome.headers, body: Buffer.from(outcome.text, 'utf8') });
    try { tokens = counter.read(JSON.parse(outcome.text)); } catch { tokens = undefined; }
  }
  const estimate = tokens === undefined;
  const text = sendJson(res, 200, counting.render(tokens ?? estimateInputTokens(ir)), withRoute(run, 200, estimate ? { 'x-gateway-token-count': 'estimate' } : {}));
  capture?.wrote(text);
  tracker.wrote(text.length);
  tracker.finish(200, {}, route.model);
  return DONE;
}
