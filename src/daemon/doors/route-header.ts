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

/** Sets `x-gateway-route` (before the answer's headers go): the failed attempts, then this one's status. */
export function setRouteHeader(run: DoorRun, status?: number): void {
  if (run.res.headersSent) return;
  const all = status === undefined ? run.attempts : [...run.attempts, `${attemptName(run)}=${status}`];
  if (all.length === 0) return;
  const route = all.join(', ');
  run.res.setHeader('x-gateway-route', route);
  // The record says it too (the monitor, the usage history), and which target served when it moved.
  const moved = run.route.p.id !== run.tracker.startedProvider || run.route.model !== run.tracker.startedModel;
  const label = run.route.keyLabel !== '' && run.ctx.providerKeys.isPool(run.route.p.id) ? run.route.keyLabel : undefined;
  run.tracker.routed(moved ? { provider: run.route.p.id, model: run.route.model } : undefined, route, run.waitedMs, label);
}

