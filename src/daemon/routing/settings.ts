// The `routing` section of config.json as the daemon uses it: retries, the retry-after cap,
// per-provider overrides, the circuit breaker's thresholds, and routes (an alias with several
// targets, a model with fallbacks). Durations are milliseconds here; config.json says seconds.
import { providerNames, splitProviderPrefix } from '../../providers/registry.js';
import { resolveModel } from '../../providers/models.js';

export type KeyOrder = 'round-robin' | 'priority';

export interface RoutingSettings {
  /** Retries of one target (per provider key) after its first attempt; default 2. */
  readonly retries: number;
  /** The longest `retry-after` (or Gemini RetryInfo) waited for; a longer one moves on. Default 30 s. */
  readonly retryAfterCapMs: number;
  /** Exponential backoff with full jitter when the provider says no wait: base and ceiling. */
  readonly backoff: { readonly baseMs: number; readonly maxMs: number };
  /** Per provider id: its own retry count, and how its key pool is used. */
  readonly providers: Readonly<Record<string, { readonly retries?: number; readonly keyOrder?: KeyOrder }>>;
  /** A target that failed retryably `failures` times within `windowMs` is skipped for `cooldownMs` (at least its retry-after). */
  readonly breaker: { readonly failures: number; readonly windowMs: number; readonly cooldownMs: number };
  /**
   * Name a client sends → the targets tried in order (`provider/model`). An alias with several
   * targets is its whole list; a model given fallbacks is listed with itself first.
   */
  readonly routes: Readonly<Record<string, readonly string[]>>;
}

export const DEFAULT_ROUTING: RoutingSettings = {
  retries: 2,
  retryAfterCapMs: 30_000,
  backoff: { baseMs: 200, maxMs: 4_000 },
  providers: {},
  breaker: { failures: 5, windowMs: 30_000, cooldownMs: 30_000 },
  routes: {},
};

/** What parseRouting reads: config.json's `aliases` and `routing`, as written. */
export interface RoutingSource { readonly aliases?: unknown; readonly routing?: unknown }

/**
 * `problems`: what keeps the settings from being used (the daemon keeps its last good ones);
 * `ignored`: fields that are no setting, left out of settings used all the same (each said in
 * the log and by doctor: a typo is otherwise a setting silently not in force).
 */
export interface ParsedRouting { readonly settings: RoutingSettings; readonly problems: string[]; readonly ignored: string[] }

const KEY_ORDERS: readonly KeyOrder[] = ['round-robin', 'priority'];
// The fields of each object in the section; any other is ignored, and said to be.
const ROUTING_FIELDS = ['retries', 'retryAfterCapSeconds', 'backoff', 'providers', 'breaker', 'fallbacks'];
const BACKOFF_FIELDS = ['baseMs', 'maxMs'];
const BREAKER_FIELDS = ['failures', 'windowSeconds', 'cooldownSeconds'];
/** The settings of one `routing.providers` entry (team mode refuses any other field: see shared-config.ts docProblems). */
export const PROVIDER_ROUTING_FIELDS: readonly string[] = ['retries', 'keyOrder'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `provider/model` (the provider id or alias as written, any case) → the provider part, lowercased; undefined for a bare name. */
function providerOf(target: string): string | undefined {
  const slash = target.indexOf('/');
  return slash > 0 ? target.slice(0, slash).toLowerCase() : undefined;
}

/** One route target's problem, or undefined: it must be `provider/model` with a provider that exists. */
function targetProblem(field: string, target: unknown, providers: readonly string[]): string | undefined {
  if (typeof target !== 'string' || !/^\S+$/.test(target)) return `${field} must be a "provider/model" string, not ${JSON.stringify(target)}`;
  const p = providerOf(target);
  if (p === undefined || target.length === target.indexOf('/') + 1) return `${field} "${target}" is not provider/model (e.g. openai/gpt-5.4)`;
  if (!providers.includes(p)) return `${field} "${target}" names an unknown provider "${p}" (known: ${providers.join(', ')})`;
  return undefined;
}

/** Targets as written: a string is one target, a list is tried in order. Problems are pushed. */
function targetList(field: string, v: unknown, providers: readonly string[], problems: string[]): string[] | undefined {
  const list = typeof v === 'string' ? [v] : Array.isArray(v) ? v : undefined;
  if (!list || list.length === 0) { problems.push(`${field} must be "provider/model" or a non-empty list of them`); return undefined; }
  let ok = true;
  list.forEach((t, i) => {
    const p = targetProblem(Array.isArray(v) ? `${field}[${i}]` : field, t, providers);
    if (p) { problems.push(p); ok = false; }
  });
  const seen = new Set<string>();
  for (const t of list as string[]) {
    if (typeof t !== 'string') continue;
    if (seen.has(t.toLowerCase())) { problems.push(`${field} lists "${t}" twice`); ok = false; }
    seen.add(t.toLowerCase());
  }
  return ok ? (list as string[]) : undefined;
}

/** A whole number ≥ min at `field`, the default when absent; a problem otherwise. */
function count(field: string, v: unknown, fallback: number, min: number, problems: string[]): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number' && Number.isInteger(v) && v >= min) return v;
  problems.push(`${field} must be a whole number ${min === 0 ? '≥ 0' : `≥ ${min}`}, not ${JSON.stringify(v)}`);
  return fallback;
}

/** A non-negative finite number at `field` (seconds or ms as the field says), converted by `scale`. */
function duration(field: string, v: unknown, fallback: number, scale: number, problems: string[]): number {
  if (v === undefined) return fallback;
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.round(v * scale);
  problems.push(`${field} must be a number ≥ 0, not ${JSON.stringify(v)}`);
  return fallback;
}

function section(field: string, v: unknown, problems: string[]): Record<string, unknown> {
  if (v === undefined) return {};
  if (isObject(v)) return v;
  problems.push(`${field} must be an object`);
  return {};
}

/** Each field of `o` (the object at `field`) that is not one of `fields`, said in `ignored`. */
function otherFields(field: string, o: Record<string, unknown>, fields: readonly string[], ignored: string[]): void {
  for (const k of Object.keys(o)) if (!fields.includes(k)) ignored.push(`${field}.${k} is not a setting (known: ${fields.join(', ')})`);
}

/**
 * A cycle through an alias: from alias `start`, following alias targets and fallbacks, back to
 * `start`. Targets are `provider/model`, so only a hand-written alias whose name has a slash (and so
 * shadows a real model) can be reached again; the walk is over names exactly as written.
 */
function aliasLoop(start: string, next: (name: string) => readonly string[]): string[] | undefined {
  const seen = new Set<string>();
  const walk = (name: string, path: string[]): string[] | undefined => {
    for (const n of next(name)) {
      if (n === start) return [...path, n];
      if (seen.has(n)) continue;
      seen.add(n);
      const found = walk(n, [...path, n]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

/** The provider and model a name resolves to without aliases, to tell a fallback to itself; undefined when it names none. */
function canonical(name: string, aliases: Record<string, string>): string | undefined {
  try {
    const r = resolveModel(name, aliases);
    return `${r.provider}/${r.model}`;
  } catch {
    return undefined;
  }
}

/**
 * config.json's `routing` section (and its `aliases`, whose lists are routes) → the settings the
 * daemon routes by, and every problem found, each naming its field. Seconds become milliseconds;
 * anything absent takes DEFAULT_ROUTING's value. The caller decides what a problem costs: the
 * daemon keeps its last good settings, the CLI refuses the edit.
 */
export function parseRouting(config: RoutingSource, providers: readonly string[] = providerNames()): ParsedRouting {
  const problems: string[] = [];
  const ignored: string[] = [];
  const known = providers.map((p) => p.toLowerCase());

  // Aliases: a string is one target (as before routing existed), a list is a route.
  const aliasLists = new Map<string, string[]>();
  const aliasIsList = new Set<string>();
  const rawAliases = section('aliases', config.aliases, problems);
  for (const [name, v] of Object.entries(rawAliases)) {
    const list = targetList(`aliases.${name}`, v, known, problems);
    if (!list) continue;
    aliasLists.set(name, list);
    if (Array.isArray(v)) aliasIsList.add(name);
  }
  const firstTargets = Object.fromEntries([...aliasLists].map(([n, l]) => [n, l[0]!]));

  const r = section('routing', config.routing, problems);
  otherFields('routing', r, ROUTING_FIELDS, ignored);
  const d = DEFAULT_ROUTING;
  const retries = count('routing.retries', r.retries, d.retries, 0, problems);
  const retryAfterCapMs = duration('routing.retryAfterCapSeconds', r.retryAfterCapSeconds, d.retryAfterCapMs, 1000, problems);
  const b = section('routing.backoff', r.backoff, problems);
  otherFields('routing.backoff', b, BACKOFF_FIELDS, ignored);
  const backoff = {
    baseMs: duration('routing.backoff.baseMs', b.baseMs, d.backoff.baseMs, 1, problems),
    maxMs: duration('routing.backoff.maxMs', b.maxMs, d.backoff.maxMs, 1, problems),
  };
  if (backoff.baseMs > backoff.maxMs) problems.push(`routing.backoff.baseMs (${backoff.baseMs}) is above routing.backoff.maxMs (${backoff.maxMs})`);

  const perProvider: Record<string, { retries?: number; keyOrder?: KeyOrder }> = {};
  for (const [id, v] of Object.entries(section('routing.providers', r.providers, problems))) {
    const field = `routing.providers.${id}`;
    if (!known.includes(id.toLowerCase())) { problems.push(`${field}: unknown provider "${id}" (known: ${known.join(', ')})`); continue; }
    const o = section(field, v, problems);
    otherFields(field, o, PROVIDER_ROUTING_FIELDS, ignored);
    const entry: { retries?: number; keyOrder?: KeyOrder } = {};
    if (o.retries !== undefined) entry.retries = count(`${field}.retries`, o.retries, d.retries, 0, problems);
    if (o.keyOrder !== undefined) {
      if (KEY_ORDERS.includes(o.keyOrder as KeyOrder)) entry.keyOrder = o.keyOrder as KeyOrder;
      else problems.push(`${field}.keyOrder must be ${KEY_ORDERS.map((k) => `"${k}"`).join(' or ')}, not ${JSON.stringify(o.keyOrder)}`);
    }
    // Keyed by the provider's id, so `google` and `gemini` are one entry.
    perProvider[splitProviderPrefix(`${id}/-`)?.provider.id ?? id.toLowerCase()] = entry;
  }

  const k = section('routing.breaker', r.breaker, problems);
  otherFields('routing.breaker', k, BREAKER_FIELDS, ignored);
  const breaker = {
    failures: count('routing.breaker.failures', k.failures, d.breaker.failures, 1, problems),
    windowMs: duration('routing.breaker.windowSeconds', k.windowSeconds, d.breaker.windowMs, 1000, problems),
    cooldownMs: duration('routing.breaker.cooldownSeconds', k.cooldownSeconds, d.breaker.cooldownMs, 1000, problems),
  };

  // Routes: every list alias is its own; a model with fallbacks is its own target, then them.
  const routes: Record<string, string[]> = {};
  for (const name of aliasIsList) routes[name] = aliasLists.get(name)!;
  const fallbacks = new Map<string, string[]>();
  for (const [model, v] of Object.entries(section('routing.fallbacks', r.fallbacks, problems))) {
    const field = `routing.fallbacks.${model}`;
    if (!/^\S+$/.test(model)) { problems.push(`${field}: a model name has no spaces`); continue; }
    const isAlias = aliasLists.has(model);
    const prefix = providerOf(model);
    if (!isAlias && prefix !== undefined && !known.includes(prefix)) { problems.push(`${field}: "${model}" names an unknown provider "${prefix}" (known: ${known.join(', ')})`); continue; }
    if (!Array.isArray(v)) { problems.push(`${field} must be a non-empty list of "provider/model" targets`); continue; }
    const list = targetList(field, v, known, problems);
    if (!list) continue;
    const own = isAlias ? (aliasIsList.has(model) ? aliasLists.get(model)! : [firstTargets[model]!]) : [model];
    const self = canonical(model, firstTargets);
    const itself = list.find((t) => self !== undefined && canonical(t, {}) === self);
    if (itself !== undefined) { problems.push(`${field} falls back to "${itself}", which is ${model} itself`); continue; }
    fallbacks.set(model, list);
    routes[model] = [...new Set([...own, ...list])];
  }

  // An alias must not come back to itself through the names its targets (and their fallbacks) give.
  const next = (name: string): readonly string[] => [...(aliasLists.get(name) ?? []), ...(fallbacks.get(name) ?? [])];
  const reported = new Set<string>();
  for (const name of aliasLists.keys()) {
    const loop = aliasLoop(name, next);
    if (!loop) continue;
    const key = [...new Set(loop)].sort().join('\n');
    if (reported.has(key)) continue;
    reported.add(key);
    problems.push(`aliases.${name} loops back to itself: ${loop.join(' → ')}`);
  }

  return {
    settings: { retries, retryAfterCapMs, backoff, providers: perProvider, breaker, routes },
    problems,
    ignored,
  };
}
