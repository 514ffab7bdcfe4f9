// The spend of a key with a budget over its current period, for the Keys page's chart: per hour of
// a daily budget, per day of a weekly or monthly one (days of the key's own time zone), and per day
// of the last 30 for a total. Read from the usage history's hourly rollups.
import type { Database } from '../store/sqlite.js';
import { periodAt, type Budget } from '../limits/limits.js';
import { keyCostByHour, roundUsd } from '../observe/usage/queries.js';
import { floorHour, HOUR_MS } from '../observe/usage/store.js';

export interface SpendSeries { bucket: 'hour' | 'day'; times: number[]; usd: number[] }

const TOTAL_DAYS = 30;

export function budgetSpendSeries(db: Database, keyId: string, budget: Budget, tz: string | undefined, now: number): SpendSeries {
  const zone = tz ?? 'UTC';
  const bucket = budget.period === 'day' ? 'hour' : 'day';
  const span = budget.period === 'total'
    ? { start: periodAt('day', now - (TOTAL_DAYS - 1) * 86_400_000, zone).start, end: periodAt('day', now, zone).end! }
    : periodAt(budget.period, now, zone) as { start: number; end: number };
  const times: number[] = [];
  if (bucket === 'hour') for (let t = floorHour(span.start); t < span.end; t += HOUR_MS) times.push(t);
  else for (let t = span.start; t < span.end; t = periodAt('day', t, zone).end!) times.push(t);
  const usd = times.map(() => 0);
  let i = 0;
  for (const [hour, cost] of [...keyCostByHour(db, keyId, floorHour(span.start), span.end)].sort((a, b) => a[0] - b[0])) {
    while (i + 1 < times.length && times[i + 1]! <= hour) i++;
    usd[i] = roundUsd(usd[i]! + cost);
  }
  return { bucket, times, usd };
}
