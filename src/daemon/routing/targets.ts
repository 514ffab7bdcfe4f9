// The targets a request is tried on, in order: the route a client's model name has (an alias with
// several targets, or a model given fallbacks, looked up by the name as sent, then as
// `provider/model`, then by the bare model id), else the one target its name resolves to.
import { resolveModel, type ResolvedModel } from '../../providers/models.js';
import type { RoutingSettings } from './settings.js';

export function routeTargets(asked: string, aliases: Record<string, string>, routing: RoutingSettings): ResolvedModel[] {
  const routes = routing.routes;
  let named = Object.hasOwn(routes, asked) ? routes[asked] : undefined;
  let first: ResolvedModel | undefined;
  if (!named) {
    first = resolveModel(asked, aliases);
    const full = `${first.provider}/${first.model}`;
    named = Object.hasOwn(routes, full) ? routes[full] : Object.hasOwn(routes, first.model) ? routes[first.model] : undefined;
    if (!named) return [first];
  }
  const out: ResolvedModel[] = [];
  for (const t of named) {
    const r = t === asked && first ? first : resolveModel(t, aliases);
    if (!out.some((o) => o.provider === r.provider && o.model === r.model)) out.push(r);
  }
  return out;
}
