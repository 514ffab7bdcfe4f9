// The circuit breaker: a target (a model on one provider, or the whole provider when it cannot be
// reached at all) that failed retryably `failures` times within `windowMs` is skipped for a
// cool-down (at least the retry-after it gave), then let through for one request to try again.
// Kept for the daemon's life, so one overloaded provider does not cost every later turn the
// whole chain. A request's own retries count as its failures too, so the default threshold (5 in
// 30 s) is above what one request with 2 retries can reach alone.

export interface BreakerSettings { readonly failures: number; readonly windowMs: number; readonly cooldownMs: number }

/** Failure times, oldest first, from `head` on (a queue: a busy failing target must not cost a scan per failure). */
interface State { failures: number[]; head: number; openUntil: number; probing: boolean }

export class Breaker {
  private readonly states = new Map<string, State>();
  /** Told each time a breaker opens (telemetry counts them); `key` is the target or provider it rests. */
  onOpen: ((key: string) => void) | undefined;
  constructor(private readonly clock: () => number) {}

  /** Whether an attempt on `key` may go now; a cooled-down open breaker lets exactly one through. */
  allows(key: string): boolean {
    const s = this.states.get(key);
    if (!s || s.openUntil === 0) return true;
    if (this.clock() < s.openUntil || s.probing) return false;
    s.probing = true;
    return true;
  }

  /** A retryable failure of `key`; `waitMs`: how long the provider asked us to stay away. */
  failed(key: string, settings: BreakerSettings, waitMs = 0): void {
    const now = this.clock();
    let s = this.states.get(key);
    if (!s) { s = { failures: [], head: 0, openUntil: 0, probing: false }; this.states.set(key, s); }
    s.failures.push(now);
    // Only the failures inside the window count, and never more than the threshold needs.
    while (s.head < s.failures.length && (now - s.failures[s.head]! >= settings.windowMs || s.failures.length - s.head > settings.failures)) s.head++;
    if (s.head > 1024 && s.head * 2 > s.failures.length) { s.failures = s.failures.slice(s.head); s.head = 0; }
    if (s.probing || s.failures.length - s.head >= settings.failures) {
      s.openUntil = now + Math.max(settings.cooldownMs, waitMs);
      s.probing = false;
      s.failures = [];
      s.head = 0;
      this.onOpen?.(key);
    }
  }

  succeeded(key: string): void {
    this.states.delete(key);
  }

  /** The breakers open now, and until when (status, doctor, the dashboard). */
  open(): Array<{ key: string; until: number }> {
    const now = this.clock();
    return [...this.states].filter(([, s]) => s.openUntil > now).map(([key, s]) => ({ key, until: s.openUntil }));
  }
}
