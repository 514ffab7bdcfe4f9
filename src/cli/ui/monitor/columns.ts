// The monitor's table columns and how each row reads, as plain strings (pure): the layout drops
// or narrows columns as the terminal narrows, and the provider/model column takes what is left.
import type { RequestMode } from '../../../daemon/observe/events.js';
import { summarizeRoute } from '../../../daemon/observe/route-text.js';
import { familyOf } from '../../../providers/models.js';
import { bytes, cell, clock, compact, duration, fit, SPINNER } from '../common/format.js';
import type { Row } from './rows.js';

/** Three letters per door, as the table shows it. */
const MODE_LABELS: Record<RequestMode, string> = { unified: 'uni', native: 'nat', messages: 'msg', responses: 'rsp', gemini: 'gem' };

export type ColumnId = 'seq' | 'time' | 'key' | 'mode' | 'model' | 'path' | 'status' | 'ttfb' | 'dur' | 'tokens' | 'tps';

export interface Column { id: ColumnId; title: string; width: number; align: 'left' | 'right' }

export interface Layout { width: number; columns: Column[] }

const MIN_MODEL = 12;
const MAX_MODEL = 44;

/** Columns for a terminal `width` wide; lines stay at most width - 1 so no terminal wraps them. */
export function layoutFor(width: number): Layout {
  const usable = Math.max(40, width - 1);
  const cols: Column[] = [];
  if (width >= 100) cols.push({ id: 'seq', title: '#', width: 5, align: 'right' });
  cols.push({ id: 'time', title: 'TIME', width: 8, align: 'left' });
  cols.push({ id: 'key', title: 'KEY', width: width >= 100 ? 12 : usable >= 72 ? 8 : 6, align: 'left' });
  if (usable >= 64) cols.push({ id: 'mode', title: 'MODE', width: 4, align: 'left' });
  cols.push({ id: 'model', title: 'PROVIDER/MODEL', width: MIN_MODEL, align: 'left' });
  cols.push({ id: 'status', title: 'ST', width: 3, align: 'right' });
  cols.push({ id: 'ttfb', title: 'TTFB', width: 6, align: 'right' });
  cols.push({ id: 'dur', title: 'DUR', width: 6, align: 'right' });
  cols.push({ id: 'tokens', title: 'TOK IN/OUT', width: 11, align: 'right' });
  if (usable >= 72) cols.push({ id: 'tps', title: 'TOK/S', width: 5, align: 'right' });
  const fixed = cols.reduce((n, c) => n + c.width, 0) + (cols.length - 1);
  const model = cols.find((c) => c.id === 'model')!;
  let spare = usable - fixed;
  const grow = Math.min(spare, MAX_MODEL - MIN_MODEL);
  model.width += Math.max(0, grow);
  spare -= Math.max(0, grow);
  if (spare >= 18) cols.splice(cols.indexOf(model) + 1, 0, { id: 'path', title: 'PATH', width: Math.min(32, spare - 1), align: 'left' });
  return { width: usable, columns: cols };
}

export function headerLine(layout: Layout): string {
  return layout.columns.map((c) => cell(c.title, c.width, c.align)).join(' ');
}

/** Why the gateway refused a request, in a few words (the line under the row has the full message). */
const REFUSALS: Record<string, string> = {
  missing_api_key: 'no key', invalid_api_key: 'unknown key', key_revoked: 'revoked key', key_expired: 'expired key',
  model_not_allowed: 'model not allowed', model_not_found: 'unknown model', invalid_request: 'bad request',
  request_too_large: 'too large', method_not_allowed: 'wrong method', provider_not_configured: 'no provider key',
  shutting_down: 'shutting down',
};

export function refusalText(code: string): string {
  return `refused: ${REFUSALS[code] ?? code.replace(/_/g, ' ')}`;
}

/** Where a request came in, as far as it is known: provider/model, the provider's door, or the unified one. */
function doorText(row: Row): string {
  if (row.provider && row.model) return `${row.provider}/${row.model}`;
  return row.provider ?? row.mode ?? '';
}

/** provider/model, or the model alone (`short`) when its name already says the provider. */
function targetText(provider: string | null, model: string, short: boolean): string {
  const bare = provider && model.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
  if (!provider) return bare;
  return short && familyOf(bare) === provider ? bare : `${provider}/${bare}`;
}

/**
 * What the gateway did on the way, as short marks after the model: `↻2` two retries of one target
 * and key, `⇄1` one move to another key of the pool, `→ openai/gpt-5.4` the fallback that served.
 */
export function routeMarks(row: Row, short = false): { marks: string; served: string } {
  const r = summarizeRoute(row.route);
  const marks = [r.retries > 0 ? `↻${r.retries}` : '', r.keySwitches > 0 ? `⇄${r.keySwitches}` : ''].filter(Boolean).join(' ');
  return { marks, served: row.served ? `→ ${targetText(row.served.provider, row.served.model, short)}` : '' };
}

/** provider/model and the route's marks; when that does not fit, the model alone if its name already says the provider. */
function modelText(row: Row, width: number): string {
  if (row.limit) {
    // The key's own limit refused it: which one first, then where it was going.
    const door = row.model ? targetText(row.provider, row.model, true) : doorText(row);
    return `limit:${row.limit}${door ? ` · ${door}` : ''}`;
  }
  if (row.refused) {
    // The reason first: it is what the row is about, and it survives a narrow column.
    const door = doorText(row);
    return `${refusalText(row.error?.code ?? '')}${door ? ` · ${door}` : ''}`;
  }
  if (row.mode === null && row.model === null) return '(started before the monitor)';
  if (row.model === null) return `${row.provider ?? '?'} ${row.path ?? ''}`.trimEnd();
  const join = (asked: string, m: { marks: string; served: string }) => [asked, m.marks, m.served].filter(Boolean).join(' ');
  const full = join(targetText(row.provider, row.model, false), routeMarks(row));
  if (full.length <= width) return full;
  const short = routeMarks(row, true);
  const asked = targetText(row.provider, row.model, true);
  const tail = [short.marks, short.served].filter(Boolean).join(' ');
  // The marks and the target that served outlast the name asked for, which is cut first.
  return tail ? `${fit(asked, Math.max(4, width - tail.length - 1))} ${tail}` : asked;
}

function tokensText(row: Row): string {
  if (row.state === 'live') {
    if (row.liveTokens !== null) return `–/${compact(row.liveTokens)}`;
    return row.outputBytes > 0 ? `↓${bytes(row.outputBytes)}` : '';
  }
  const { inputTokens: i, outputTokens: o } = row.usage;
  if (i === undefined && o === undefined) return row.outputBytes > 0 ? bytes(row.outputBytes) : '–';
  return `${compact(i)}/${compact(o)}`;
}

/** Output tokens per second of generation (after the first byte when streaming). */
export function tokensPerSecond(row: Row, now: number): number | undefined {
  if (row.state === 'live') {
    if (row.liveTokens === null || row.firstByteAt === null) return undefined;
    const s = (now - row.firstByteAt) / 1000;
    return s >= 0.2 ? row.liveTokens / s : undefined;
  }
  const out = row.usage.outputTokens;
  if (out === undefined || row.durationMs === null) return undefined;
  const genMs = row.stream && row.ttfbMs !== null && row.durationMs - row.ttfbMs > 50 ? row.durationMs - row.ttfbMs : row.durationMs;
  return genMs > 0 ? out / (genMs / 1000) : undefined;
}

function statusText(row: Row, frame: number): string {
  switch (row.state) {
    case 'live': return SPINNER[frame % SPINNER.length]!;
    case 'lost': return '?';
    case 'ok': case 'error': return row.status === null ? '–' : String(row.status);
    default: { const never: never = row.state; return never; }
  }
}

function value(id: ColumnId, row: Row, now: number, frame: number, width: number): string {
  switch (id) {
    case 'seq': return String(row.seq);
    case 'time': return clock(row.start);
    case 'key': return row.keyName ?? '–';
    case 'mode': return row.mode === null ? '–' : MODE_LABELS[row.mode];
    case 'model': return modelText(row, width);
    case 'path': return row.path ?? '–';
    case 'status': return statusText(row, frame);
    case 'ttfb': return row.ttfbMs !== null ? duration(row.ttfbMs) : row.state === 'live' ? '…' : '–';
    case 'dur': return duration(row.state === 'live' ? now - row.start : row.durationMs);
    case 'tokens': return tokensText(row);
    case 'tps': { const t = tokensPerSecond(row, now); return t === undefined ? '–' : compact(t); }
    default: { const never: never = id; return never; }
  }
}

/** One table line for a row; `frame` turns the spinner of a live row. */
export function rowLine(layout: Layout, row: Row, now: number, frame = 0): string {
  return layout.columns.map((c) => cell(value(c.id, row, now, frame, c.width), c.width, c.align)).join(' ');
}

/** The line under a failed row: its code and message, cut to the width. */
export function errorLine(layout: Layout, row: Row): string | undefined {
  if (!row.error) return undefined;
  const indent = layout.columns[0]!.id === 'seq' ? 6 : 2;
  return fit(`${' '.repeat(indent)}↳ ${row.error.code}: ${row.error.message.replace(/\s+/g, ' ')}`, layout.width);
}
