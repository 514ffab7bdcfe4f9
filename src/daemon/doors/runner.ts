// The one runner of every door at the root (Chat, Messages, Responses, Gemini): admit (proxy key,
// body, model) → route, decided once → track → attempts → finish, inside one failure handler that
// always finishes the request's record. What differs per door is a hook on its Door (door.ts),
// declared in the door's own file.
//
// The route is the model's targets in order (routing/targets.ts: an alias with several targets,
// a model with fallbacks). Each attempt takes one path (the fast path, the translation through
// the IR, or a token count) and comes back `done`, or `failed` with nothing sent to the client.
// A retryable failure (routing/retry.ts) is tried again on the same target after the wait the
// provider asked for (up to the cap) or a jittered backoff, then on the next target; the circuit
// breaker (routing/breaker.ts) skips a target that keeps failing. Nothing is retried once the
// client has a byte of the answer. Every answer carries `x-gateway-route`, the attempts in order.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedModel } from '../../providers/models.js';
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
import { backoffMs, isRetryable, retryAfterMs } from '../routing/retry.js';
import { DEFAULT_ROUTING, type KeyOrder, type RoutingSettings } from '../routing/settings.js';
import { sessionOf } from '../routing/sessions.js';
import { routeTargets } from '../routing/targets.js';
import { wholeAnswerFor } from './answer-stream.js';
import { clientOf } from './clients.js';
import { countThrough } from './count.js';
import type { Attempt, Door, DoorCall, DoorRun, Obj, Route } from './door.js';
import { fastPath } from './fast-path.js';
import { attemptName, setRouteHeader, targetName } from './route-header.js';
import { translateThrough } from './translate.js';
import { isPriced, worstCase } from '../limits/estimate.js';
import { limitOf, unpriced } from '../limits/limiter.js';
import { peerOf } from '../http/peer.js';

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
  const { run, targets, session } = await admit(ctx, door, req, res, query, facts, call);
  try {
    if (run.key.limits) await reserve(run, targets);
    await attempts(run, targets, session);
    // Every path finishes its record; one that did not is a gateway bug, and must not stay "in flight".
    if (!run.tracker.done) run.tracker.fail(500, 'internal_error', 'the request ended without an answer');
  } catch (err) {
    const ge = asGatewayError(err);
    if (ge instanceof GatewayError) run.tracker.fail(ge.status, ge.code, ge.message, {}, limitOf(ge));
    else run.tracker.fail(500, 'internal_error', 'internal gateway error');
    setRouteHeader(run);
    throw ge;
  }
}

/**
 * The targets in order; on each, its keys (a pool's next healthy key takes over at once from one
 * refused or rate-limited, without using up the request's retries, which count per key), and on
 * each key its retries. The last failure goes to the client when none answers.
 */
async function attempts(run: DoorRun, targets: readonly ResolvedModel[], session: Session | undefined): Promise<void> {
  const { ctx } = run;
  const routing = ctx.settings.routing ?? DEFAULT_ROUTING;
  const fallback = run.req.headers['x-gateway-fallback'] !== 'off';
  let last: Extract<Attempt, { kind: 'failed' }> | undefined;
  for (const [i, resolved] of targets.entries()) {
    if (i > 0 && !fallback) break;
    const name = targetName(resolved);
    // A model on a provider rests after its own failures; the whole provider when it cannot be reached.
    const open = (): boolean => !ctx.breaker.allows(resolved.provider) || !ctx.breaker.allows(name);
    // The first target's route was made at admission (its errors are the request's own).
    if (i > 0) {
      if (open()) { run.attempts.push(`${name}=skipped`); continue; }
      // A key limited to some models falls back only to models it may use.
      try { checkModelAllowed(run.key, name); } catch { run.attempts.push(`${name}=not-allowed`); continue; }
      let route;
      try { route = await routeOf(ctx, run.door, resolved, session?.id); } catch (e) {
        // A fallback whose provider has no key is passed over, as the breaker passes one over.
        if (e instanceof GatewayError && e.code === 'provider_not_configured') { run.attempts.push(`${name}=no-key`); continue; }
        throw e;
      }
      if (!route) { run.attempts.push(`${name}=keys-resting`); continue; }
      run.route = route;
    } else if (targets.length > 1 && open()) { run.attempts.push(`${name}=skipped`); continue; }
    const p = run.route.p.id;
    const retries = routing.providers[p]?.retries ?? routing.retries;
    const used = new Set<string>();
    const nextKey = (): Promise<boolean> => nextPoolKey(run, used, routing);
    keys: for (;;) {
      for (let retry = 0; ; retry++) {
        run.tracker.attemptStarted(targetName(run.route), run.route.keyLabel);
        const a = await attempt(run);
        if (a.kind === 'done') {
          if (run.res.statusCode < 400) {
            ctx.breaker.succeeded(name);
            ctx.breaker.succeeded(resolved.provider);
            if (session) ctx.sessions.served(session.id, name, session.first, routing.breaker.cooldownMs, run.route.keyLabel);
          }
          return;
        }
        run.attempts.push(`${attemptName(run)}=${a.outcome}`);
        run.tracker.attemptEnded(String(a.outcome));
        last = a;
        const pool = ctx.providerKeys.isPool(p);
        // A key the provider refuses is out until it is set again; the next key serves the request.
        if (pool && (a.outcome === 401 || a.outcome === 403)) {
          ctx.providerKeys.refuse(p, run.route.keyLabel, a.outcome);
          if (await nextKey()) continue keys;
          await deliver(run, a);
          return;
        }
        if (!isRetryable(a.outcome)) { await deliver(run, a); return; }
        const asked = retryAfterMs(a.retryAfter, ctx.clock());
        // A rate-limited key rests until its retry-after; another key may serve at once.
        if (pool && a.outcome === 429) {
          ctx.providerKeys.rest(p, run.route.keyLabel, ctx.clock() + (asked ?? routing.backoff.maxMs));
          if (await nextKey()) continue keys;
        }
        ctx.breaker.failed(typeof a.outcome === 'number' ? name : resolved.provider, routing.breaker, asked);
        // A wait longer than the cap is not slept through: the next target, or the client gets it.
        // Nor is a target retried once its breaker opened.
        if (retry >= retries || (asked !== undefined && asked > routing.retryAfterCapMs) || open()) break keys;
        const wait = asked ?? backoffMs(retry, routing.backoff.baseMs, routing.backoff.maxMs);
        run.waitedMs += wait;
        if (!(await pause(run.res, wait))) {
          run.tracker.fail(499, 'client_closed', 'client closed the connection');
          return;
        }
      }
    }
  }
  if (last) { await deliver(run, last); return; }
  throw new GatewayError('upstream_unreachable', `every target of this route is resting after failures (${run.attempts.join(', ')}); try again shortly`);
}

/**
 * A key with limits reserves the request's worst case over the targets it may be served by, before
 * anything goes upstream; its record's end settles it. A key with a budget may only use priced
 * models: the first target unpriced is refused, a fallback unpriced is passed over.
 */
async function reserve(run: DoorRun, targets: ResolvedModel[]): Promise<void> {
  const { ctx, key } = run;
  const limits = key.limits!;
  const prices = ctx.limits.prices();
  if (limits.budget && !run.call.count) {
    if (!isPriced(targets[0]!, prices)) throw unpriced(key.name, targetName(targets[0]!));
    for (let i = targets.length - 1; i > 0; i--) {
      if (!isPriced(targets[i]!, prices)) run.attempts.push(`${targetName(targets.splice(i, 1)[0]!)}=unpriced`);
    }
  }
  // A token count costs nothing: it holds a place in the minute and in flight, and settles at 0.
  const held = run.call.count || !run.door.heldInput ? 0 : await run.door.heldInput(run);
  const worst = run.call.count ? { input: 0, output: 0, usd: 0 } : worstCase(targets, run.door.protocol, run.clientBody, run.clientRaw.length + held, prices, ctx.clock());
  const hold = await ctx.limits.reserve(key, limits, run.tracker.id, { input: worst.input, output: worst.output, usd: worst.usd ?? 0 }, run.call.count === true);
  run.tracker.onEnd(hold.settle);
}

/** The pool's next healthy key this request has not used, onto the route; false when none is left. */
async function nextPoolKey(run: DoorRun, used: Set<string>, routing: RoutingSettings): Promise<boolean> {
  const p = run.route.p.id;
  used.add(run.route.keyLabel);
  const k = await run.ctx.providerKeys.pick(p, { exclude: used, ...keyOrder(routing, p) });
  if (!k) return false;
  run.route = { ...run.route, providerKey: k.value, keyLabel: k.label };
  return true;
}

const keyOrder = (routing: RoutingSettings, p: string): { order?: KeyOrder } => {
  const order = routing.providers[p]?.keyOrder;
  return order === undefined ? {} : { order };
};

async function deliver(run: DoorRun, a: Extract<Attempt, { kind: 'failed' }>): Promise<void> {
  setRouteHeader(run);
  await a.deliver();
}

/** One attempt on the run's current route: the door's prepare hook, then its path (no extra await when there is no hook). */
function attempt(run: DoorRun): Promise<Attempt> {
  run.raw = run.clientRaw;
  run.body = run.clientBody;
  run.extras = {};
  const prepare = run.door.prepare;
  return prepare ? prepare(run).then(() => path(run)) : path(run);
}

function path(run: DoorRun): Promise<Attempt> {
  if (run.route.protocol === run.door.protocol && !wholeAnswerFor(run)) return fastPath(run);
  if (run.call.count) return countThrough(run);
  return translateThrough(run);
}

/** Waits `ms`; false when the client went away meanwhile. */
function pause(res: ServerResponse, ms: number): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => { clearTimeout(t); res.off('close', gone); resolve(ok); };
    const gone = () => done(false);
    const t = setTimeout(() => done(true), ms);
    res.on('close', gone);
  });
}

/** A target as the paths use it: its descriptor, protocol for this door, Target, provider key. */
/**
 * A target as the paths use it: its descriptor, protocol for this door, Target, and a provider
 * key: a session's own key while it is healthy, so the provider's cache stays warm; else the
 * pool's next. Undefined when every key of its pool is resting or refused, unless `anyKey`: then
 * the one a provider with a single key would use serves (its own answer, or the route's next
 * target, then decides).
 */
async function routeOf(ctx: DaemonContext, door: Door, resolved: ResolvedModel, session?: string, anyKey = false): Promise<Route | undefined> {
  const p = descriptor(resolved.provider);
  const protocol = upstreamProtocol(p, resolved.model, door.protocol);
  const { order } = keyOrder(ctx.settings.routing ?? DEFAULT_ROUTING, p.id);
  let key;
  if (ctx.providerKeys.isPool(p.id)) {
    const held = session === undefined ? undefined : ctx.sessions.key(session, `${p.id}/${resolved.model}`);
    key = (held === undefined ? undefined : ctx.providerKeys.healthy(p.id, held)) ?? await ctx.providerKeys.pick(p.id, order === undefined ? {} : { order });
    if (!key && anyKey) key = await ctx.providerKeys.serve(p.id, order);
    if (!key) return undefined;
  } else {
    key = { label: '', value: ctx.providerKeys.cached(p.id) ?? await ctx.providerKeys.require(p.id) };
  }
  return { p, model: resolved.model, protocol, target: targetOf(p, resolved.model, protocol), providerKey: key.value, keyLabel: key.label };
}

/**
 * Admission: the proxy key, the body, the model and its route, the provider's key; then the
 * request's record. What is refused here is reported by the server as a refusal (facts).
 * A door whose URL names the model (Gemini) and whose fast path reads nothing in the body does
 * not parse it there: the bytes go as they came, and the provider answers a body it cannot read.
 */
async function admit(
  ctx: DaemonContext, door: Door, req: IncomingMessage, res: ServerResponse, query: string, facts: RequestFacts, call: DoorCall,
): Promise<{ run: DoorRun; targets: ResolvedModel[]; session: Session | undefined }> {
  const wire = PROTOCOL_FACTS[door.protocol];
  const key = ctx.keys.authenticate(extractKey(req, query ? new URLSearchParams(query) : null, wire.clientKeyPlacements), wire.errorShape);
  facts.key = { id: key.id, name: key.name };
  const raw = await readBody(req, ctx.settings.bodyLimitBytes);
  let body: Obj | undefined = call.model === undefined ? jsonObject(raw) : undefined;
  const asked = call.model ?? body!.model;
  if (typeof asked !== 'string' || asked === '') throw new GatewayError('invalid_request', 'model: is required', 'model');
  let targets: ResolvedModel[];
  try {
    targets = routeTargets(asked, ctx.settings.aliases, ctx.settings.routing ?? DEFAULT_ROUTING);
  } catch (e) {
    const ge = asGatewayError(e);
    throw ge instanceof GatewayError && ge.code === 'model_not_found' && door.modelNotFound ? door.modelNotFound(asked, ge) : ge;
  }
  // A session held on a fallback starts there (routing/sessions.ts); the route's order otherwise.
  // Every request's session is recorded (usage by session); only a route with a choice follows it.
  const named = sessionOf(req.headers, body ?? {});
  const sessionId = targets.length > 1 || ctx.providerKeys.isPool(targets[0]!.provider) ? named : undefined;
  const session = sessionId === undefined ? undefined : { id: sessionId, first: targetName(targets[0]!) };
  const held = sessionId === undefined ? undefined : ctx.sessions.preferred(sessionId);
  const at = held === undefined ? -1 : targets.findIndex((t) => targetName(t) === held);
  if (at > 0) targets.unshift(...targets.splice(at, 1));
  const first = targets[0]!;
  facts.provider = first.provider;
  facts.model = first.model;
  checkModelAllowed(key, asked);
  const route = (await routeOf(ctx, door, first, sessionId, true))!;
  // A body the fast path does not read is parsed only when some target is not of the door's
  // protocol, or its key's limits need its output cap.
  body ??= targets.length === 1 && route.protocol === door.protocol && !key.limits ? {} : jsonObject(raw);

  const stream = call.stream ?? body.stream === true;
  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: key.id, keyName: key.name, mode: door.mode, provider: route.p.id, model: route.model,
    method: 'POST', path: call.path ?? door.path, stream, requestBytes: raw.length, headers: req.headers, session: named, asked, client: peerOf(req).client,
  }, ctx.startSpan);
  facts.tracked = true;
  const logged = ctx.bodyLog?.begin(tracker, raw);
  const capture = tracker.span ? tracker.span.reads({ protocol: door.protocol, request: raw, target: () => run.route.target, client: () => clientOf(door) }, logged) : logged;
  const run: DoorRun = {
    ctx, door, call, req, res, query, key, clientRaw: raw, clientBody: body, raw, body, route, attempts: [], waitedMs: 0, stream, tracker, capture, extras: {},
  };
  return { run, targets, session };
}

/** A request's session (routing/sessions.ts) and its route's own first target. */
interface Session { readonly id: string; readonly first: string }
