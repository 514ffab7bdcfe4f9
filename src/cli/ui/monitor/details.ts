// The details view of one request as lines of text (pure): what it was, its timings, its stream,
// its usage, its error and its request headers (credentials already masked by the daemon).
import { bytes, clock, compact, duration, fit, percent } from '../common/format.js';
import { cacheHitRatio } from '../../../daemon/observe/events.js';
import { refusalText, tokensPerSecond } from './columns.js';
import type { Row } from './rows.js';
import { outcomeText, parseRoute } from '../../../daemon/observe/route-text.js';

export interface DetailLine { text: string; tone?: 'error' | 'muted' | 'title' }

function wrap(text: string, width: number, indent: string): string[] {
  const out: string[] = [];
  const room = Math.max(10, width - indent.length);
  for (let rest = text.replace(/\s+/g, ' ').trim(); rest.length > 0; rest = rest.slice(room).trimStart()) out.push(indent + rest.slice(0, room));
  return out.length > 0 ? out : [indent];
}

const ms3 = (t: number) => `${clock(t)}.${String(Math.floor(t % 1000)).padStart(3, '0')}`;
const maybe = (n: number | undefined) => (n === undefined ? '–' : compact(n));

/** Each attempt the gateway made and why it ended, and the time waited between them. */
function attemptLines(row: Row, width: number, label: (name: string) => string): DetailLine[] {
  const attempts = parseRoute(row.route);
  if (attempts.length === 0) return [];
  const waited = row.waitedMs ? ` · waited ${duration(row.waitedMs)} between them` : '';
  const head = { text: fit(`${label('attempts')}${attempts.length}${waited}`, width) };
  const pad = Math.min(40, Math.max(...attempts.map((a) => a.provider.length + a.model.length + (a.label ? a.label.length + 1 : 0) + 1)));
  return [head, ...attempts.map((a, i) => {
    const target = `${a.provider}/${a.model}${a.label ? `#${a.label}` : ''}`;
    const failed = i < attempts.length - 1 || row.state === 'error';
    return { text: fit(`  ${i + 1}. ${target.padEnd(pad)}  ${outcomeText(a.outcome)}`, width), ...(failed ? { tone: 'muted' as const } : {}) };
  })];
}

export function detailLines(row: Row, now: number, width: number, maxLines: number): DetailLine[] {
  const label = (name: string) => name.padEnd(10);
  const outcome = row.limit ? `refused by the key's ${row.limit} limit` : row.refused ? refusalText(row.error?.code ?? '') : row.state === 'ok' ? 'ok' : 'error';
  const state = row.state === 'live' ? 'in flight' : row.state === 'lost' ? 'unknown (monitor disconnected)' : `${row.status ?? '–'} ${outcome}`;
  // A refused request never reached a provider: whether it would have streamed is not known.
  const streaming = row.stream === null || row.refused ? '' : row.stream ? ' · streaming' : ' · not streaming';
  const lines: DetailLine[] = [
    { text: fit(`request #${row.seq}  ${row.id}  ${row.method ?? ''} ${row.path ?? ''}`.trimEnd(), width), tone: 'title' },
    { text: fit(`${label('route')}${row.mode ?? '–'} · ${row.provider ?? '–'} · ${row.model ?? '–'}${row.served ? ` → served by ${row.served.provider}/${row.served.model}` : ''}${streaming}`, width) },
    { text: fit(`${label('key')}${row.keyName ?? '–'}${row.keyId ? ` (${row.keyId})` : ''}${row.keyLabel ? ` · provider key ${row.keyLabel}` : ''}`, width) },
    { text: fit(`${label('status')}${state}`, width), ...(row.state === 'error' ? { tone: 'error' as const } : {}) },
    ...attemptLines(row, width, label),
  ];
  const total = row.state === 'live' ? now - row.start : row.durationMs;
  const gen = total !== null && row.ttfbMs !== null ? total - row.ttfbMs : null;
  lines.push({ text: fit(`${label('timings')}started ${ms3(row.start)} · first byte ${duration(row.ttfbMs)} · total ${duration(total)}${gen !== null && row.stream ? ` · streaming ${duration(gen)}` : ''}`, width) });
  const tps = tokensPerSecond(row, now);
  const tokens = row.state === 'live' ? row.liveTokens ?? undefined : row.usage.outputTokens;
  lines.push({ text: fit(`${label('output')}${row.chunks > 0 ? `${row.chunks} chunks · ` : ''}${bytes(row.outputBytes)} · ${maybe(tokens)} tokens${tps === undefined ? '' : ` · ${tps.toFixed(1)} tok/s`}`, width) });
  const u = row.usage;
  lines.push({ text: fit(`${label('usage')}input ${maybe(u.inputTokens)} · output ${maybe(u.outputTokens)} · reasoning ${maybe(u.reasoningTokens)}`, width) });
  // Part of the input (events.ts TokenUsage): the reads, the writes (the 1-hour ones among them), and their share.
  if (u.cachedTokens !== undefined || u.cacheWriteTokens !== undefined) {
    const hour = u.cacheWrite1hTokens ? ` (${compact(u.cacheWrite1hTokens)} for 1h)` : '';
    lines.push({ text: fit(`${label('cache')}${maybe(u.cachedTokens)} read · ${maybe(u.cacheWriteTokens)} written${hour} · ${percent(cacheHitRatio(u.cachedTokens, u.inputTokens))} of the input read`, width) });
  }
  lines.push({ text: fit(`${label('request')}${row.requestBytes === null ? '–' : bytes(row.requestBytes)} body`, width) });
  if (row.error) {
    const [first, ...rest] = wrap(`${row.error.code}: ${row.error.message}`, width, ' '.repeat(10));
    lines.push({ text: label('error') + first!.trimStart(), tone: 'error' }, ...rest.slice(0, 3).map((text) => ({ text, tone: 'error' as const })));
  }
  const headers = Object.entries(row.headers ?? {});
  lines.push({ text: `${label('headers')}${headers.length === 0 ? '– (not reported)' : '(credentials masked)'}`, tone: 'muted' });
  const room = Math.max(0, maxLines - lines.length);
  const shown = headers.length > room ? headers.slice(0, Math.max(0, room - 1)) : headers;
  for (const [name, value] of shown) lines.push({ text: fit(`  ${name}: ${value}`, width) });
  if (shown.length < headers.length) lines.push({ text: `  … ${headers.length - shown.length} more`, tone: 'muted' });
  return lines.slice(0, Math.max(1, maxLines));
}
