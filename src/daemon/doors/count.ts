// A door's token count (Anthropic's count_tokens, Gemini's countTokens) for a model of another
// protocol: the provider's own count where it has one (Gemini's countTokens), else the documented
// estimate of estimate-tokens.ts, marked `x-gateway-token-count: estimate`; answered in the door's
// shape (its module's countTokens). A model of the door's own protocol takes the fast path instead.
import { estimateInputTokens } from '../../providers/ir/estimate-tokens.js';
import { providerSide } from '../../providers/protocols/provider-sides.js';
import { GatewayError } from '../http/errors.js';
import { sendJson } from '../http/send.js';
import { clientOf } from './clients.js';
import { DONE, type Attempt, type DoorRun } from './door.js';
import { callProvider } from './provider-call.js';
import { withRoute } from './route-header.js';

export async function countThrough(run: DoorRun): Promise<Attempt> {
  const { door, route, res, tracker, capture } = run;
  const { target } = route;
  const counting = (await clientOf(door)).countTokens;
  if (!counting) throw new GatewayError('not_found', `${door.path} has no token count`);
  const ir = counting.parseRequest(run.body, target);
  const counter = (await providerSide(route.protocol)).countTokens;
  let tokens: number | undefined;
  if (counter) {
    const call = counter.build(ir, target);
    const answered = await callProvider(run, call, false);
    if ('kind' in answered) return answered;
    try { tokens = counter.read(JSON.parse(answered.text)); } catch { tokens = undefined; }
  }
  const estimate = tokens === undefined;
  const text = sendJson(res, 200, counting.render(tokens ?? estimateInputTokens(ir)), withRoute(run, 200, estimate ? { 'x-gateway-token-count': 'estimate' } : {}));
  capture?.wrote(text);
  tracker.wrote(text.length);
  tracker.finish(200, {}, route.model);
  return DONE;
}
