// A key's limits as written (CLI flags, admin JSON) and the calendar periods a budget runs over.
import { describe, expect, it } from 'vitest';
import { applyLimitsPatch, describeLimits, LimitInputError, parseBudget, parseCount, parseLimitsPatch, parseTimeZone, periodAt } from '../../src/daemon/limits/limits.js';

describe('parsing', () => {
  it('reads budgets with and without a period', () => {
    expect(parseBudget('5/day')).toEqual({ usd: 5, period: 'day' });
    expect(parseBudget('$12.50/month')).toEqual({ usd: 12.5, period: 'month' });
    expect(parseBudget('0.05/WEEK')).toEqual({ usd: 0.05, period: 'week' });
    expect(parseBudget('20')).toEqual({ usd: 20, period: 'total' });
  });

  it.each(['abc', '-5/day', '0/day', '5/fortnight', '5/', '/day', '5 per day', ''])('refuses budget %j, naming the field', (text) => {
    const err = (() => { try { parseBudget(text); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(LimitInputError);
    expect((err as LimitInputError).field).toBe('budget');
    expect((err as Error).message).toMatch(/budget must be/);
  });

  it.each([['-1'], ['1.5'], ['abc'], [0], [-3], [''], [1e20]])('refuses rpm %j', (v) => {
    expect(() => parseCount('rpm', v)).toThrow(/rpm must be a whole number greater than 0/);
  });

  it('reads counts from numbers and digit strings', () => {
    expect(parseCount('tpm', '200000')).toBe(200_000);
    expect(parseCount('concurrency', 4)).toBe(4);
  });

  it('knows time zones', () => {
    expect(parseTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(() => parseTimeZone('Mars/Base')).toThrow(/IANA time zone/);
  });

  it('patches: a value sets, null removes, absent keeps', () => {
    const patch = parseLimitsPatch({ budget: '5/day', rpm: 60, concurrency: '4' });
    const limits = applyLimitsPatch(undefined, patch);
    expect(limits).toEqual({ budget: { usd: 5, period: 'day' }, rpm: 60, concurrency: 4 });
    expect(describeLimits(limits)).toBe('$5.00/day · 60 rpm · 4 at once');
    const less = applyLimitsPatch(limits, parseLimitsPatch({ rpm: null, tpm: 1000 }));
    expect(less).toEqual({ budget: { usd: 5, period: 'day' }, tpm: 1000, concurrency: 4 });
    expect(applyLimitsPatch(less, parseLimitsPatch({ budget: null, tpm: null, concurrency: false }))).toBeUndefined();
  });

  it('a bad JSON field is named', () => {
    expect(() => parseLimitsPatch({ tpm: 'lots' })).toThrow(expect.objectContaining({ field: 'tpm' }));
    expect(() => parseLimitsPatch({ budget: { usd: 5 } })).toThrow(expect.objectContaining({ field: 'budget' }));
  });
});

describe('periods', () => {
  const at = Date.parse('2026-11-27T15:30:00Z'); // a Friday

  it('follow the calendar in UTC: days at midnight, weeks from Monday, months from the 1st', () => {
    expect(periodAt('day', at)).toEqual({ start: Date.parse('2026-11-27T00:00:00Z'), end: Date.parse('2026-11-28T00:00:00Z') });
    expect(periodAt('week', at)).toEqual({ start: Date.parse('2026-11-23T00:00:00Z'), end: Date.parse('2026-11-30T00:00:00Z') });
    expect(periodAt('month', at)).toEqual({ start: Date.parse('2026-11-01T00:00:00Z'), end: Date.parse('2026-12-01T00:00:00Z') });
    expect(periodAt('total', at)).toEqual({ start: 0, end: undefined });
    expect(periodAt('month', Date.parse('2026-12-31T23:59:59Z')).end).toBe(Date.parse('2027-01-01T00:00:00Z'));
  });

  it('follow the key\'s time zone when it has one, across a change of offset', () => {
    // 00:30 in Tokyo on the 28th is still the 27th in UTC.
    expect(periodAt('day', Date.parse('2026-11-27T15:30:00Z'), 'Asia/Tokyo')).toEqual({ start: Date.parse('2026-11-27T15:00:00Z'), end: Date.parse('2026-11-28T15:00:00Z') });
    // Berlin's day of the switch to summer time has 23 hours.
    const dst = periodAt('day', Date.parse('2026-03-29T12:00:00Z'), 'Europe/Berlin');
    expect(dst).toEqual({ start: Date.parse('2026-03-28T23:00:00Z'), end: Date.parse('2026-03-29T22:00:00Z') });
    expect(periodAt('month', Date.parse('2026-11-30T23:30:00Z'), 'Europe/Berlin').start).toBe(Date.parse('2026-11-30T23:00:00Z'));
  });
});
