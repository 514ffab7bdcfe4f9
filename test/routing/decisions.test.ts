// The routing engine's pure decisions: what may be retried, how long a provider asked to wait,
// the backoff's bounds, and the circuit breaker's window, cool-down and single probe (clock injected).
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../src/daemon/routing/breaker.js';
import { backoffMs, isRetryable, retryAfterMs } from '../../src/daemon/routing/retry.js';

describe('retry decisions', () => {
  it('retries 429, 5xx, 529 and transport failures; never another 4xx', () => {
    for (const o of [429, 500, 502, 503, 504, 529, 'connect-error', 'timeout'] as const) expect(isRetryable(o)).toBe(true);
    for (const o of [400, 401, 403, 404, 409, 413, 422]) expect(isRetryable(o)).toBe(false);
  });

  it('reads retry-after as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-27T10:00:00Z');
    expect(retryAfterMs('2', now)).toBe(2000);
    expect(retryAfterMs('0.5', now)).toBe(500);
    expect(retryAfterMs('Fri, 27 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Fri, 27 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('backs off with full jitter under an exponential ceiling', () => {
    expect(backoffMs(0, 200, 4000, () => 0.999)).toBe(199);
    expect(backoffMs(3, 200, 4000, () => 0.999)).toBe(1598);
    expect(backoffMs(10, 200, 4000, () => 0.999)).toBe(3996);
    expect(backoffMs(2, 200, 4000, () => 0)).toBe(0);
  });
});

describe('the circuit breaker', () => {
  const settings = { failures: 3, windowMs: 10_000, cooldownMs: 5_000 };

  it('opens after N failures within the window, rests for the cool-down, then lets one request probe', () => {
    let now = 0;
    const b = new Breaker(() => now);
    b.failed('a', settings); now += 1000; b.failed('a', settings);
    expect(b.allows('a')).toBe(true);
    now += 1000; b.failed('a', settings);
    expect(b.allows('a')).toBe(false);
    expect(b.open()).toEqual([{ key: 'a', until: 7000 }]);
    now = 7000;
    expect(b.allows('a')).toBe(true); // the probe
    expect(b.allows('a')).toBe(false); // only one
    b.failed('a', settings); // the probe failed: open again at once
    expect(b.allows('a')).toBe(false);
    now = 12_000;
    expect(b.allows('a')).toBe(true);
    b.succeeded('a');
    expect(b.allows('a')).toBe(true);
    expect(b.open()).toEqual([]);
  });

  it('failures spread wider than the window never open it; a long retry-after lengthens the rest', () => {
    let now = 0;
    const b = new Breaker(() => now);
    for (let i = 0; i < 10; i++) { b.failed('a', settings); now += 6000; }
    expect(b.allows('a')).toBe(true);
    for (let i = 0; i < 3; i++) b.failed('b', settings, 60_000);
    expect(b.open()).toEqual([{ key: 'b', until: now + 60_000 }]);
  });

  it('a target that fails all the time under a threshold it never reaches keeps a bounded queue', () => {
    let now = 0;
    const b = new Breaker(() => now);
    const huge = { failures: 1e9, windowMs: 1000, cooldownMs: 1000 };
    for (let i = 0; i < 200_000; i++) { b.failed('a', huge); now += 1; }
    const state = (b as unknown as { states: Map<string, { failures: number[]; head: number }> }).states.get('a')!;
    expect(state.failures.length - state.head).toBeLessThanOrEqual(1000);
    expect(state.failures.length).toBeLessThan(5000);
  });
});
