// Charts drawn on the server as inline SVG: stacked bars over time and horizontal bars. No script,
// no web font, no asset from anywhere; hovering a column shows its numbers (SVG <title>).
import { Html, html, raw, escapeHtml } from './html.js';
import { fmtClock, fmtDay } from './format.js';

export interface Series { name: string; cls: string; values: number[] }

const W = 1160;
const H = 200;
const M = { top: 12, right: 8, bottom: 26, left: 52 };

/**
 * Four round steps that cover `v`: step 1, 2 or 5 × 10^n. The scale reaches at least `least`: 4 by
 * default, so counts never get fractional ticks; a few cents of spend need less.
 */
export function niceScale(v: number, least = 4): { max: number; step: number } {
  const raw = Math.max(v, least) / 4;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((x) => x >= raw) ?? 10 * p;
  return { max: step * 4, step };
}

/** Which columns get a time label: clock-aligned hours (midnight shows the date), or every k-th day. */
function labelled(times: number[], bucket: 'hour' | 'day'): (i: number) => string | undefined {
  const n = times.length;
  if (bucket === 'hour') {
    const step = [1, 2, 3, 4, 6, 12, 24, 48].find((s) => n / s <= 10) ?? 72;
    return (i) => {
      const d = new Date(times[i]!);
      const h = d.getHours();
      if (step >= 24) return h === 0 && (step === 24 || Math.floor(d.getTime() / 86_400_000) % (step / 24) === 0) ? fmtDay(times[i]!) : undefined;
      return h % step === 0 ? (h === 0 ? fmtDay(times[i]!) : fmtClock(times[i]!)) : undefined;
    };
  }
  const step = [1, 2, 3, 7, 14, 30, 61].find((s) => n / s <= 10) ?? 91;
  return (i) => ((n - 1 - i) % step === 0 ? fmtDay(times[i]!) : undefined);
}

export interface TimeChartOptions {
  id: string;
  times: number[];
  bucket: 'hour' | 'day';
  series: Series[];
  format: (v: number) => string;
  /** One line per column for the hover tooltip. */
  describe: (i: number) => string;
  /** The least the scale reaches (default 4, for counts). */
  least?: number;
}

export function timeChart(o: TimeChartOptions): Html {
  const n = o.times.length;
  const totals = o.times.map((_, i) => o.series.reduce((s, se) => s + (se.values[i] ?? 0), 0));
  const { max, step } = niceScale(Math.max(0, ...totals), o.least);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const slot = pw / Math.max(n, 1);
  const bw = Math.max(1, Math.min(slot * 0.72, 28));
  const y = (v: number) => M.top + ph - (v / max) * ph;
  const parts: string[] = [];
  for (let k = 0; k <= 4; k++) {
    const v = step * k;
    const yy = y(v).toFixed(1);
    parts.push(`<line class="gridline" x1="${M.left}" x2="${W - M.right}" y1="${yy}" y2="${yy}"/>`);
    parts.push(`<text class="ylab" x="${M.left - 8}" y="${yy}" dy="0.32em" text-anchor="end">${escapeHtml(o.format(v))}</text>`);
  }
  const label = labelled(o.times, o.bucket);
  for (let i = 0; i < n; i++) {
    const x0 = M.left + i * slot;
    const bx = x0 + (slot - bw) / 2;
    let acc = 0;
    for (const se of o.series) {
      const v = se.values[i] ?? 0;
      if (v <= 0) continue;
      const top = y(acc + v);
      const h = Math.max(y(acc) - top, 1);
      parts.push(`<rect class="bar ${se.cls}" x="${bx.toFixed(1)}" y="${top.toFixed(1)}" width="${bw.toFixed(1)}" height="${h.toFixed(1)}" rx="${Math.min(2, bw / 4).toFixed(1)}"/>`);
      acc += v;
    }
    parts.push(`<rect class="hit" x="${x0.toFixed(1)}" y="${M.top}" width="${slot.toFixed(1)}" height="${ph}"><title>${escapeHtml(o.describe(i))}</title></rect>`);
    const text = label(i);
    if (text !== undefined) {
      parts.push(`<line class="tick" x1="${(x0 + slot / 2).toFixed(1)}" x2="${(x0 + slot / 2).toFixed(1)}" y1="${M.top + ph}" y2="${M.top + ph + 4}"/>`);
      parts.push(`<text class="xlab" x="${(x0 + slot / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${escapeHtml(text)}</text>`);
    }
  }
  const total = totals.reduce((a, b) => a + b, 0);
  return html`<svg class="chart" id="${o.id}" data-total="${total}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${o.id}">${raw(parts.join(''))}</svg>`;
}

/** A thin horizontal bar for a table cell: `value` of `max`. */
export function meter(value: number, max: number, cls = 's0'): Html {
  const w = max > 0 ? Math.max((value / max) * 100, value > 0 ? 1.5 : 0) : 0;
  return html`<svg class="meter" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true"><rect class="track" width="100" height="6" rx="3"/><rect class="bar ${cls}" width="${w.toFixed(2)}" height="6" rx="3"/></svg>`;
}

export function legend(items: Array<{ name: string; cls: string }>): Html {
  return html`<div class="legend">${items.map((i) => html`<span><i class="swatch ${i.cls}"></i>${i.name}</span>`)}</div>`;
}
