// Short, fixed-width-friendly numbers for terminal tables: 1.2k, 340ms, 1.4s, 12:03:04.

/** 950 → "950", 1234 → "1.2k", 2_500_000 → "2.5M". */
export function compact(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '–';
  const a = Math.abs(n);
  if (a < 1000) return String(Math.round(n));
  if (a < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (a < 1_000_000) return `${Math.round(n / 1000)}k`;
  if (a < 10_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  return `${Math.round(n / 1_000_000)}M`;
}

/** A ratio (0 to 1) as a percentage: 0.7792 → "77.9%"; unknown → "–". */
export function percent(r: number | undefined | null): string {
  return r === undefined || r === null || !Number.isFinite(r) ? '–' : `${(r * 100).toFixed(1)}%`;
}

/** 12 → "12ms", 1234 → "1.2s", 75_000 → "1m15s". */
export function duration(ms: number | undefined | null): string {
  if (ms === undefined || ms === null || !Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const m = Math.floor(ms / 60_000);
  if (m < 60) return `${m}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** 512 → "512B", 2048 → "2.0kB". */
export function bytes(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '–';
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}kB`;
  return `${(n / 1024 / 1024).toFixed(1)}MB`;
}

/** Local wall-clock time, HH:MM:SS. */
export function clock(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((v) => String(v).padStart(2, '0')).join(':');
}

/** Cuts a string to `width` characters, marking the cut with "…". */
export function fit(text: string, width: number): string {
  if (width <= 0) return '';
  if (text.length <= width) return text;
  return width === 1 ? '…' : `${text.slice(0, width - 1)}…`;
}

/** `fit` then pad on the right (or the left for numbers) to exactly `width`. */
export function cell(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const t = fit(text, width);
  return align === 'left' ? t.padEnd(width) : t.padStart(width);
}

/** Spinner frames (braille), one per tick. */
export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
