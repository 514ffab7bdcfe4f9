// How numbers, money, durations and times read on the dashboard (the script has the same rules).
import { findProvider } from '../../providers/registry.js';

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** 950, 12.3k, 4.56M, 1.2B. */
export function fmtCompact(n: number): string {
  const a = Math.abs(n);
  if (a < 1_000) return String(Math.round(n));
  if (a < 1_000_000) return `${trim(n / 1_000)}k`;
  if (a < 1_000_000_000) return `${trim(n / 1_000_000)}M`;
  return `${trim(n / 1_000_000_000)}B`;
}

function trim(v: number): string {
  return (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)).replace(/\.?0+$/, '');
}

/** $12.34, $0.0042, $0.000012; null → "unknown". */
export function fmtUsd(v: number | null): string {
  if (v === null) return 'unknown';
  if (v === 0) return '$0.00';
  const a = Math.abs(v);
  if (a >= 100) return `$${v.toFixed(0)}`;
  if (a >= 1) return `$${v.toFixed(2)}`;
  if (a >= 0.01) return `$${v.toFixed(3)}`;
  return `$${v.toPrecision(2)}`;
}

/** A ratio (0 to 1) as a percentage: 77.9%; null → "–". */
export function fmtPct(r: number | null): string {
  return r === null || !Number.isFinite(r) ? '–' : `${(r * 100).toFixed(1)}%`;
}

export function fmtMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  if (ms < 1) return '<1 ms';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1_000)}s`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

export function fmtDay(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getMonth()]} ${d.getDate()}`;
}

export function fmtClock(ms: number, seconds = false): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
}

export function fmtDateTime(ms: number): string {
  return `${fmtDay(ms)}, ${fmtClock(ms, true)}`;
}

export function fmtAgo(ms: number | null | undefined, now = Date.now()): string {
  if (ms === null || ms === undefined) return 'never';
  const s = Math.max(0, Math.round((now - ms) / 1_000));
  if (s < 45) return 'just now';
  if (s < 3_600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3_600)} h ago`;
  if (s < 30 * 86_400) return `${Math.round(s / 86_400)} d ago`;
  return fmtDay(ms);
}

export function fmtUptime(ms: number): string {
  const s = Math.floor(ms / 1_000);
  const d = Math.floor(s / 86_400), h = Math.floor((s % 86_400) / 3_600), m = Math.floor((s % 3_600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m`;
  return `${s}s`;
}

/** A provider's display name from the registry; an id it does not know (old usage rows) as it is. */
export function providerName(id: string): string {
  return findProvider(id)?.displayName ?? id;
}
