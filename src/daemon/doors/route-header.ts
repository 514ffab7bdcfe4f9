// `x-gateway-route` on every answer of the root's doors: the attempts in order, each
// `provider/model=outcome` (the provider's own status, `connect-error`, `timeout`, `skipped`…).
import type { ResolvedModel } from '../../providers/models.js';
import type { DoorRun, Route } from './door.js';

/** The route header's name for a target: `provider/model`. */
export const targetName = (r: ResolvedModel | Route): string => ('p' in r ? `${r.p.id}/${r.model}` : `${r.provider}/${r.model}`);

/** A target as x-gateway-route shows it: `provider/model`, with `#label` for a key of a pool (never the key). */
export function attemptName(run: DoorRun): string {
  return run.route.keyLabel !== '' && run.ctx.providerKeys.isPool(run.route.p.id) ? `${targetName(run.route)}#${run.route.keyLabel}` : targetName(run.route);
}

/**
 * `x-gateway-route` for the answer about to go: the failed attempts, then this one's status (none
 * for a failure being delivered). Also tells the request's record. Undefined when there is nothing
 * to say (a request refused before any attempt).
 */
export function routeHeader(run: DoorRun, status?: number): string | undefined {
  const attempts = run.attempts;
  const now = status === undefined ? undefined : `${attemptName(run)}=${status}`;
  const route = now === undefined ? attempts.join(', ') : attempts.length === 0 ? now : `${attempts.join(', ')}, ${now}`;
  if (route === '') return undefined;
  // The record says it too (the monitor, the usage history), and which target served when it moved.
  const { p, model, keyLabel } = run.route;
  const moved = p.id !== run.tracker.startedProvider || model !== run.tracker.startedModel;
  const label = keyLabel !== '' && run.ctx.providerKeys.isPool(p.id) ? keyLabel : undefined;
  run.tracker.routed(moved ? { provider: p.id, model } : undefined, route, run.waitedMs, label);
  return route;
}

/** Puts the route on headers being written (cheaper than setHeader, which writeHead then merges). */
export function withRoute(run: DoorRun, status: number, headers: Readonly<Record<string, string>>): Record<string, string> {
  const route = routeHeader(run, status);
  return route === undefined ? { ...headers } : { ...headers, [ROUTE_HEADER]: route };
}

/** Sets the route on the response whose headers are not written yet (a failure being delivered). */
export function setRouteHeader(run: DoorRun): void {
  if (run.res.headersSent) return;
  const route = routeHeader(run);
  if (route !== undefined) run.res.setHeader(ROUTE_HEADER, route);
}

export const ROUTE_HEADER = 'x-gateway-route';
