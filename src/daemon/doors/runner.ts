// The one runner of every door at the root (Chat, Messages, Responses, Gemini): admit (proxy key,
// body, model) → route, decided once → track → the fast path, the translation through the IR, or a
// token count → finish, inside one failure handler that always finishes the request's record. What
// differs per door is a hook on its Door (door.ts), declared in the door's own file. A retry, a
// fallback or a limit hooks in here: `admit` is the one admission step, `route` the one routing
// decision, and each path makes one upstream attempt (fast-path.ts, translate.ts, count.ts) whose
// error answer comes back to `answerError` (provider-error.ts) before anything reaches the client.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolveModel } from '../../providers/models.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { provider as descriptor, upstreamProtocol } from '../../providers/registry.js';
import { targetOf } from '../../providers/target.js';
import { TranslationError } from '../../providers/types.js';
import { checkModelAllowed, extractKey } from '../access/auth.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { readBody } from '../http/http-util.js';
import { jsonObject } from '../http/json-body.js';
import { RequestTracker, type RequestFacts } from '../observe/tracker.js';
import { countThrough } from './count.js';
import type { Door, DoorCall, DoorRun, Obj, Route } from './door.js';
import { fastPath } from './fast-path.js';
import { translateThrough } from './translate.js';
import { wholeAnswerFor } from './answer-stream.js';

/** A door's request error as the client sees it: a translator's refusal is a 400 naming the field. */
export function asGatewayError(err: unknown): unknown {
  if (err instanceof TranslationError) {
    return new GatewayError(err.code === 'model_not_found' ? 'model_not_found' : 'invalid_request', err.message, err.param);
  }
  return err;
}

/** Runs one request through a door; the server's error boundary sends what it throws. */
export async function runDoor(
  ctx: DaemonContext, door: Door, req: IncomingMessage, res: ServerResponse, query: string, facts: RequestFacts, call: DoorCall = {},
): Promise<void> {
  const run = await admit(ctx, door, req, res, query, facts, call);
  try {
    await door.prepare?.(run);
    if (run.route.protocol === door.protocol && !wholeAnswerFor(run)) await fastPath(run);
    else if (call.count) await countThrough(run);
    else await translateThrough(run);
    // Every path finishes its record; one that did not is a gateway bug, and must not stay "in flight".
    if (!run.tracker.done) run.tracker.fail(500, 'internal_error', 'the request ended without an answer');
  } catch (err) {
    const ge = asGatewayError(err);
    if (ge instanceof GatewayError) run.tracker.fail(ge.status, ge.code, ge.message);
    else run.tracker.fail(500, 'internal_error', 'internal gateway error');
    throw ge;
  }
}

/**
 * Admission: the proxy key, the body, the model and its route, the provider's key; then the
 * request's record. What is refused here is reported by the server as a refusal (facts).
 * A door whose URL names the model (Gemini) and whose fast path reads nothing in the body does
 * not parse it there: the bytes go as they came, and the provider answers a body it cannot read.
 */
async function admit(
  ctx: DaemonContext, door: Door, req: IncomingMessage, res: ServerResponse, query: string, facts: RequestFacts, call: DoorCall,
): Promise<DoorRun> {
  const wire = PROTOCOL_FACTS[door.protocol];
  const key = ctx.keys.authenticate(extractKey(req, query ? new URLSearchParams(query) : null, wire.clientKeyPlacements), wire.errorShape);
  facts.key = { id: key.id, name: key.name };
  const raw = await readBody(req, ctx.settings.bodyLimitBytes);
  let body: Obj | undefined = call.model === undefined ? jsonObject(raw) : undefined;
  const asked = call.model ?? body!.model;
  if (typeof asked !== 'string' || asked === '') throw new GatewayError('invalid_request', 'model: is required', 'model');
  let resolved;
  try {
    resolved = resolveModel(asked, ctx.settings.aliases);
  } catch (e) {
    const ge = asGatewayError(e);
    throw ge instanceof GatewayError && ge.code === 'model_not_found' && door.modelNotFound ? door.modelNotFound(asked, ge) : ge;
  }
  facts.provider = resolved.provider;
  facts.model = resolved.model;
  checkModelAllowed(key, asked);
  const p = descriptor(resolved.provider);
  const protocol = upstreamProtocol(p, resolved.model, door.protocol);
  body ??= protocol === door.protocol ? {} : jsonObject(raw);
  const providerKey = ctx.providerKeys.cached(p.id) ?? await ctx.providerKeys.require(p.id);
  const route: Route = { p, model: resolved.model, protocol, target: targetOf(p, resolved.model, protocol), providerKey };

  const stream = call.stream ?? body.stream === true;
  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: key.id, keyName: key.name, mode: door.mode, provider: p.id, model: route.model,
    method: 'POST', path: call.path ?? door.path, stream, requestBytes: raw.length, headers: req.headers,
  });
  facts.tracked = true;
  const capture = ctx.bodyLog?.begin(tracker, raw);
  return { ctx, door, call, req, res, query, key, raw, body, route, stream, tracker, capture, extras: {} };
}
