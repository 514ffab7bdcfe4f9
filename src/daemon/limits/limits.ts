// A proxy key's limits as the user writes them (`--budget 5/day --rpm 60 --tpm 200000
// --concurrency 4 --tz Europe/Berlin`), parsed and shown in one place, and the calendar periods a
// budget runs over. Pure: no clock of its own, no I/O.

/** The sliding window `rpm` and `tpm` count over. */
export const WINDOW_MS = 60_000;

/** The four limits a key can have; also the value of the `x-gateway-limit` header of a refusal. */
export type LimitKind = 'budget' | 'rpm' | 'tpm' | 'concurrency';
export const LIMIT_KINDS: readonly LimitKind[] = ['budget', 'rpm', 'tpm', 'concurrency'];

/** `total` never resets; the others follow the calendar of the key's time zone (UTC by default). */
export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';
const PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'total'];

export interface Budget {
  /** US dollars. */
  usd: number;
  period: BudgetPeriod;
}

export interface KeyLimits {
  budget?: Budget;
  /** Requests admitted in any sliding minute. */
  rpm?: number;
  /** Tokens (input, cache reads included, plus output) in any sliding minute. */
  tpm?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** IANA time zone the budget's day, week and month follow; absent: UTC. */
  tz?: string;
  /**
   * Team mode: while the shared store is unreachable, refuse the key's requests (503) instead of
   * serving them on this daemon's local share of its limits (limits/team-store.ts).
   */
  failClosed?: boolean;
}

/** A change to a key's limits: a value sets it, null removes it (`--no-budget`), absent keeps it. */
export type LimitsPatch = { [K in keyof KeyLimits]?: KeyLimits[K] | null };

/** A limit value the user wrote that cannot be used; `field` names the flag or JSON field. */
export class LimitInputError extends Error {
  constructor(readonly field: keyof KeyLimits, message: string) { super(message); this.name = 'LimitInputError'; }
}

/** `5/day`, `$12.50/month`, `0.25/week`, or `20` (a total that never resets). */
export function parseBudget(text: string): Budget {
  const m = /^\s*\$?\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:\/\s*([a-z]+))?\s*$/i.exec(text);
  const period = (m?.[2]?.toLowerCase() ?? 'total') as BudgetPeriod;
  if (!m || !PERIODS.includes(period)) {
    throw new LimitInputError('budget', `budget must be an amount in USD with an optional period: 5/day, 20/week, 100/month or 50 (a total), got "${text}"`);
  }
  const usd = Number(m[1]);
  if (!(usd > 0) || !Number.isFinite(usd)) throw new LimitInputError('budget', `budget must be more than 0 USD, got "${text}"`);
  return { usd, period };
}

/** A positive whole number of requests or tokens. */
export function parseCount(field: 'rpm' | 'tpm' | 'concurrency', value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new LimitInputError(field, `${field} must be a whole number greater than 0, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** An IANA time zone name Node knows (`Europe/Berlin`, `UTC`). */
export function parseTimeZone(value: unknown): string {
  if (typeof value === 'string' && value.trim() !== '') {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: value.trim() }).resolvedOptions().timeZone;
    } catch { /* reported below */ }
  }
  throw new LimitInputError('tz', `tz must be an IANA time zone such as UTC or Europe/Berlin, got ${JSON.stringify(value)}`);
}

/**
 * Reads limits from JSON fields named like the CLI flags (`budget: "5/day"`, `rpm`, `tpm`,
 * `concurrency`, `tz`, `failClosed: true`); null (or `false`) removes a limit. Throws LimitInputError naming the field.
 */
export function parseLimitsPatch(input: Record<string, unknown>): LimitsPatch {
  const patch: LimitsPatch = {};
  const off = (v: unknown) => v === null || v === false;
  if (input.budget !== undefined) {
    const v = input.budget;
    if (off(v)) patch.budget = null;
    else if (typeof v === 'string' || typeof v === 'number') patch.budget = parseBudget(String(v));
    else throw new LimitInputError('budget', `budget must be a string such as "5/day", got ${JSON.stringify(v)}`);
  }
  for (const field of ['rpm', 'tpm', 'concurrency'] as const) {
    const v = input[field];
    if (v !== undefined) patch[field] = off(v) ? null : parseCount(field, v);
  }
  if (input.tz !== undefined) patch.tz = off(input.tz) ? null : parseTimeZone(input.tz);
  if (input.failClosed !== undefined) {
    const v = input.failClosed;
    if (v === true) patch.failClosed = true;
    else if (off(v)) patch.failClosed = null;
    else throw new LimitInputError('failClosed', `failClosed must be true or false, got ${JSON.stringify(v)}`);
  }
  return patch;
}

/** The limits after a patch; undefined when none is left. */
export function applyLimitsPatch(limits: KeyLimits | undefined, patch: LimitsPatch): KeyLimits | undefined {
  const next: Record<string, unknown> = { ...limits };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  const out = next as KeyLimits;
  if (out.tz !== undefined && out.budget === undefined) delete out.tz; // a zone only shapes a budget's periods
  return hasLimits(out) ? out : undefined;
}

export function hasLimits(l: KeyLimits | undefined): l is KeyLimits {
  return l !== undefined && (l.budget !== undefined || l.rpm !== undefined || l.tpm !== undefined || l.concurrency !== undefined);
}

/** `$5.00/day`, `$50.00 total`, `$0.05/week`: the amount as the user wrote it, at least to the cent. */
export function formatBudget(b: Budget): string {
  const cents = b.usd.toFixed(2);
  const amount = `$${Number(cents) === b.usd ? cents : String(b.usd)}`;
  return b.period === 'total' ? `${amount} total` : `${amount}/${b.period}`;
}

/** Dollars with cents, and four digits below a dollar, so a small budget's spend is not rounded up to it. */
export function usd(n: number): string {
  return n !== 0 && Math.abs(n) < 1 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

/** One line for a table: `$5.00/day · 60 rpm · 200000 tpm · 4 at once`; `none` without limits. */
export function describeLimits(l: KeyLimits | undefined): string {
  if (!hasLimits(l)) return 'none';
  const parts: string[] = [];
  if (l.budget) parts.push(formatBudget(l.budget) + (l.tz && l.budget.period !== 'total' ? ` (${l.tz})` : ''));
  if (l.rpm !== undefined) parts.push(`${l.rpm} rpm`);
  if (l.tpm !== undefined) parts.push(`${l.tpm} tpm`);
  if (l.concurrency !== undefined) parts.push(`${l.concurrency} at once`);
  if (l.failClosed) parts.push('fail-closed');
  return parts.join(' · ');
}

/** A limits object read back from keys.json, kept only where each field is well-formed. */
export function readStoredLimits(v: unknown): KeyLimits | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const out: KeyLimits = {};
  const b = o.budget as Record<string, unknown> | undefined;
  if (b && typeof b.usd === 'number' && b.usd > 0 && PERIODS.includes(b.period as BudgetPeriod)) out.budget = { usd: b.usd, period: b.period as BudgetPeriod };
  for (const f of ['rpm', 'tpm', 'concurrency'] as const) {
    if (Number.isSafeInteger(o[f]) && (o[f] as number) > 0) out[f] = o[f] as number;
  }
  if (typeof o.tz === 'string') out.tz = o.tz;
  if (o.failClosed === true) out.failClosed = true;
  return hasLimits(out) ? out : undefined;
}

// ---- periods ---------------------------------------------------------------------------------

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** Milliseconds to add to UTC to get the wall-clock time in `tz` at `at`. */
function zoneOffset(tz: string, at: number): number {
  let f = zoneFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    zoneFormats.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(at)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - (at - (at % 1000));
}

/** The instant the wall-clock time `wall` (as if UTC) happens in `tz`. */
function fromWall(tz: string, wall: number): number {
  let guess = wall - zoneOffset(tz, wall);
  guess = wall - zoneOffset(tz, guess); // once more, across a change of offset
  return guess;
}

/**
 * The budget period containing `at`: [start, end) in ms since the epoch. Days start at midnight,
 * weeks on Monday (ISO 8601), months on the 1st, in `tz` (UTC when absent). A total has no end.
 */
export function periodAt(period: BudgetPeriod, at: number, tz = 'UTC'): { start: number; end: number | undefined } {
  if (period === 'total') return { start: 0, end: undefined };
  const offset = tz === 'UTC' ? 0 : zoneOffset(tz, at);
  const wall = new Date(at + offset);
  const [y, m, d] = [wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate()];
  let startWall: number;
  let endWall: number;
  if (period === 'day') {
    startWall = Date.UTC(y, m, d);
    endWall = Date.UTC(y, m, d + 1);
  } else if (period === 'week') {
    const sinceMonday = (wall.getUTCDay() + 6) % 7;
    startWall = Date.UTC(y, m, d - sinceMonday);
    endWall = Date.UTC(y, m, d - sinceMonday + 7);
  } else {
    startWall = Date.UTC(y, m, 1);
    endWall = Date.UTC(y, m + 1, 1);
  }
  if (tz === 'UTC') return { start: startWall, end: endWall };
  return { start: fromWall(tz, startWall), end: fromWall(tz, endWall) };
}
