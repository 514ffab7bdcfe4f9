// One call the gateway itself makes to the route's provider (a translated request, a token
// count): the provider's 2xx answer text for the caller to read, or the attempt it ended as
// (client gone, a stream already relayed, a transport failure or an error answer for the runner).
import type { UpstreamCall } from '../../providers/types.js';
import { upstreamPath } from '../../providers/registry.js';
import { GatewayError } from '../http/errors.js';
import { callUpstream, type CallOutcome, type OpenStream } from '../relay/upstream-call.js';
import { gatewayCallHeaders } from '../relay/upstream.js';
import { DONE, type Attempt, type DoorRun } from './door.js';
import { failedAnswer, failedTransport } from './provider-error.js';

export async function callProvider(run: DoorRun, call: UpstreamCall, stream: boolean, openStream?: OpenStream): Promise<Attempt | { text: string }> {
  const { ctx, route, res, tracker } = run;
  const { p } = route;
  let outcome: CallOutcome;
  const headers = gatewayCallHeaders(p.id, route.providerKey, { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...call.headers });
  const traceparent = tracker.traceparent();
  if (traceparent) {
    headers.traceparent = traceparent;
    // The caller's vendor entries travel with its trace, as the native doors pass them on.
    const tracestate = run.req.headers.tracestate;
    if (typeof tracestate === 'string' && tracestate !== '') headers.tracestate = tracestate;
  }
  try {
    outcome = await callUpstream(ctx.upstreams.dispatcher(p.id), {
      method: 'POST', path: upstreamPath(p, call.path), body: JSON.stringify(call.body), headers,
    }, res, openStream);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    return failedTransport(run, err);
  }
  if (outcome.kind === 'client_closed') { tracker.fail(499, 'client_closed', 'client closed the connection'); return DONE; }
  if (outcome.kind === 'streamed') return DONE;
  if (outcome.kind === 'cut') throw ctx.upstreams.failure(p.id, outcome.err, 'response');
  if (outcome.status >= 400) return failedAnswer(run, route.protocol, { status: outcome.status, headers: outcome.headers, body: Buffer.from(outcome.text, 'utf8') });
  return { text: outcome.text };
}
