// The Prometheus exposition of the store: the text format (0.0.4) by default, OpenMetrics 1.0 when
// the scraper asks for it (Prometheus does, first). A series whose attribute value is '' simply
// has no such label. Rendered only when scraped.
import type { Family, Series } from './store.js';

export const TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
export const OPENMETRICS_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** OpenMetrics when the Accept header asks for it. */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('application/openmetrics-text');
}

const escapeValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const promLabel = (attribute: string): string => attribute.replace(/[^A-Za-z0-9_]/g, '_');
const num = (n: number): string => (n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : Number.isNaN(n) ? 'NaN' : String(n));

/** `{a="x",b="y"}` from a series' values, with `extra` (a bucket's `le`) last; '' when there is no label. */
function labels(names: readonly string[], values: readonly string[], extra?: string): string {
  let out = '';
  for (let i = 0; i < names.length; i++) {
    if (values[i] === '' || values[i] === undefined) continue;
    out += `${out ? ',' : ''}${names[i]}="${escapeValue(values[i]!)}"`;
  }
  if (extra) out += `${out ? ',' : ''}${extra}`;
  return out ? `{${out}}` : '';
}

function renderFamily(f: Family, open: boolean, lines: string[]): void {
  const d = f.def;
  const names = d.labels.map(promLabel);
  const sample = d.kind === 'counter' ? `${d.prom}_total` : d.prom;
  // The text format names a counter's family by its sample; OpenMetrics by the name without `_total`.
  const family = d.kind === 'counter' && !open ? sample : d.prom;
  lines.push(`# HELP ${family} ${escapeHelp(d.help)}`, `# TYPE ${family} ${d.kind}`);
  for (const s of f.series.values()) {
    if (d.kind !== 'histogram') { lines.push(`${sample}${labels(names, s.values)} ${num(s.sum)}`); continue; }
    histogram(d.prom, d.buckets!, names, s, lines);
  }
}

function histogram(name: string, bounds: readonly number[], names: readonly string[], s: Series, lines: string[]): void {
  let acc = 0;
  for (let i = 0; i <= bounds.length; i++) {
    acc += s.buckets![i]!;
    lines.push(`${name}_bucket${labels(names, s.values, `le="${i < bounds.length ? num(bounds[i]!) : '+Inf'}"`)} ${acc}`);
  }
  const l = labels(names, s.values);
  lines.push(`${name}_sum${l} ${num(s.sum)}`, `${name}_count${l} ${s.count}`);
}

export function render(families: readonly Family[], openMetrics: boolean): string {
  const lines: string[] = [];
  for (const f of families) renderFamily(f, openMetrics, lines);
  if (openMetrics) lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}
