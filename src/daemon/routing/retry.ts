// What a failed attempt means for the next one, as pure decisions: whether it may be tried again
// (429, 5xx, Anthropic's 529, a connect error, a timeout before the response's headers; never
// another 4xx, which fails the same everywhere), how long the provider asked us to wait
// (`retry-after` in seconds or as an HTTP date, Gemini's RetryInfo), and the backoff when it did
// not say (exponential, full jitter).

/** How an attempt ended before anything reached the client: the provider's status, or no answer at all. */
export type FailedOutcome = number | 'connect-error' | 'timeout';

export function isRetryable(outcome: FailedOutcome): boolean {
  if (typeof outcome !== 'number') return true;
  return outcome === 429 || outcome >= 500;
}

/** `retry-after` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Full jitter: a uniform wait in [0, min(max, base·2^attempt)) (`attempt` 0 for the first retry). */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** attempt));
}
