// Reads the attempts back out of x-gateway-route's text (the record's `route`), for the views that
// show what the gateway did: the monitor's row and details, the daemon's access log. Pure.
// The text is `provider/model[#label]=outcome` joined by `, ` (doors/route-header.ts writes it).

export interface RouteAttempt {
  provider: string;
  model: string;
  /** The pool key's label, when the provider has a pool. */
  label: string | null;
  /** The provider's HTTP status as text (`529`), or `connect-error`, `timeout`, `skipped`, `keys-resting`. */
  outcome: string;
}

export function parseRoute(text: string | null | undefined): RouteAttempt[] {
  if (!text) return [];
  const out: RouteAttempt[] = [];
  for (const part of text.split(',')) {
    const item = part.trim();
    const eq = item.lastIndexOf('=');
    if (eq <= 0) continue;
    let target = item.slice(0, eq);
    const hash = target.lastIndexOf('#');
    const label = hash > 0 ? target.slice(hash + 1) : null;
    if (hash > 0) target = target.slice(0, hash);
    const slash = target.indexOf('/');
    out.push({ provider: slash > 0 ? target.slice(0, slash) : target, model: slash > 0 ? target.slice(slash + 1) : '', label, outcome: item.slice(eq + 1) });
  }
  return out;
}

/** What a request's route amounts to: retries of one target and key, moves to another key, fallbacks. */
export interface RouteSummary {
  attempts: RouteAttempt[];
  /** Attempts that repeated the previous one's target with the same key. */
  retries: number;
  /** Attempts that moved to another key of the same target. */
  keySwitches: number;
  /** Attempts that moved to another target (a fallback; a target the breaker skipped counts too). */
  fallbacks: number;
}

export function summarizeRoute(text: string | null | undefined): RouteSummary {
  const attempts = parseRoute(text);
  let retries = 0;
  let keySwitches = 0;
  let fallbacks = 0;
  for (let i = 1; i < attempts.length; i++) {
    const a = attempts[i]!;
    const b = attempts[i - 1]!;
    if (a.provider !== b.provider || a.model !== b.model) fallbacks++;
    else if (a.label !== b.label) keySwitches++;
    else retries++;
  }
  return { attempts, retries, keySwitches, fallbacks };
}

/** Why an attempt ended, in words (an HTTP status stays a number: it is the provider's own). */
export function outcomeText(outcome: string): string {
  switch (outcome) {
    case 'connect-error': return 'could not connect';
    case 'timeout': return 'no answer in time';
    case 'skipped': return 'skipped (circuit breaker open)';
    case 'keys-resting': return 'skipped (every key resting)';
    default: break;
  }
  const s = Number(outcome);
  if (!Number.isInteger(s)) return outcome;
  if (s < 400) return `${s} served`;
  if (s === 429) return '429 rate limited';
  if (s === 529) return '529 overloaded';
  if (s === 401 || s === 403) return `${s} key refused`;
  return `${s} ${s >= 500 ? 'provider error' : 'refused'}`;
}
