// A key's standing (what it used and has left of each limit) as `GET /admin/keys` sends it, and the
// words the CLI and the dashboard both show it in. Pure: the daemon's store measures, this says it.
import { formatBudget, usd, type BudgetPeriod, type KeyLimits } from './limits.js';
import type { Standing } from './store.js';

/** One count limit: its maximum, what is used now, and what is left. */
export interface CountView { max: number; used: number; left: number }

export interface StandingView {
  /** USD: `spent` settled in the period, `held` by requests in flight, `left` of `max`; `resetsAt` ISO, null for a total. */
  budget?: { max: number; period: BudgetPeriod; spent: number; held: number; left: number; resetsAt: string | null };
  /** Requests admitted in the last minute. */
  rpm?: CountView;
  /** Tokens in the last minute (settled, and held by requests in flight). */
  tpm?: CountView;
  /** Requests in flight now. */
  concurrency?: CountView;
}

/** Rounds to a hundred-millionth of a dollar so JSON shows 0.0042, not 0.004200000000000001. */
const cents = (v: number): number => Math.round(v * 1e8) / 1e8;
const count = (c: { max: number; used: number }): CountView => ({ max: c.max, used: c.used, left: Math.max(0, c.max - c.used) });

export function standingView(s: Standing): StandingView {
  const out: StandingView = {};
  if (s.budget) {
    const b = s.budget;
    out.budget = {
      max: b.max, period: b.period, spent: cents(b.spent), held: cents(b.held), left: cents(b.left),
      resetsAt: b.resetAt === undefined ? null : new Date(b.resetAt).toISOString(),
    };
  }
  if (s.rpm) out.rpm = count(s.rpm);
  if (s.tpm) out.tpm = count(s.tpm);
  if (s.concurrency) out.concurrency = count(s.concurrency);
  return out;
}

/** How a budget's current period reads after an amount: `$1.20 of $5.00 today`. */
export const PERIOD_WORDS: Record<BudgetPeriod, string> = { day: 'today', week: 'this week', month: 'this month', total: 'in total' };

/** `Nov 28 00:00 UTC`: when a period resets, on the clock of the zone the budget follows. */
export function resetText(iso: string, tz = 'UTC'): string {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: tz, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return `${f.format(new Date(iso)).replace(',', '')} ${tz}`;
}

/** `$1.20 of $5.00 today ($0.40 held by requests in flight), resets Nov 28 00:00 UTC`. */
export function budgetText(b: NonNullable<StandingView['budget']>, tz?: string): string {
  const held = b.held > 0 ? ` (${usd(b.held)} held by requests in flight)` : '';
  const reset = b.resetsAt === null ? ', never resets' : `, resets ${resetText(b.resetsAt, tz)}`;
  return `${usd(b.spent)} of ${usd(b.max)} ${PERIOD_WORDS[b.period]}${held}, ${usd(b.left)} left${reset}`;
}

/**
 * One line for a table, in describeLimits' order: `$1.20 of $5.00/day · 3 of 60 rpm · 1200 of
 * 200000 tpm · 1 of 4 at once`; a limit the standing lacks is shown as set.
 */
export function describeStanding(l: KeyLimits, s: StandingView): string {
  const parts: string[] = [];
  if (l.budget) parts.push(s.budget ? `${usd(s.budget.spent)} of ${formatBudget(l.budget)}` : formatBudget(l.budget));
  if (l.rpm !== undefined) parts.push(s.rpm ? `${s.rpm.used} of ${l.rpm} rpm` : `${l.rpm} rpm`);
  if (l.tpm !== undefined) parts.push(s.tpm ? `${s.tpm.used} of ${l.tpm} tpm` : `${l.tpm} tpm`);
  if (l.concurrency !== undefined) parts.push(s.concurrency ? `${s.concurrency.used} of ${l.concurrency} at once` : `${l.concurrency} at once`);
  return parts.join(' · ');
}
