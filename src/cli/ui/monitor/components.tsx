// The monitor's pieces: one table row, a printed (<Static>) item, the status header, the bodies of
// each view and the footer. They only render what the state and the layout say.
import { Box, Text } from 'ink';
import { cacheHitRatio } from '../../../daemon/observe/events.js';
import { compact, clock, fit, percent } from '../common/format.js';
import type { Theme } from '../common/theme.js';
import { errorLine, headerLine, rowLine, type Layout } from './columns.js';
import { detailLines } from './details.js';
import { footerText, helpLines } from './keys.js';
import { requestRate, type MonitorState, type PrintItem, type Row } from './state.js';
import { gatewayCmd } from '../../invocation.js';
import { storeHealthText } from '../../../daemon/store/store-health.js';

function rowColor(row: Row, theme: Theme): string | undefined {
  if (row.state === 'error') return theme.error;
  if (row.state === 'lost') return theme.warn;
  return undefined;
}

export function RowView({ row, layout, theme, now, frame, selected = false, withError = true }: {
  row: Row; layout: Layout; theme: Theme; now: number; frame: number; selected?: boolean; withError?: boolean;
}) {
  const line = rowLine(layout, row, now, frame);
  const err = withError ? errorLine(layout, row) : undefined;
  const color = rowColor(row, theme);
  return (
    <Box flexDirection="column">
      <Text wrap="truncate" inverse={selected} color={color ?? (row.state === 'live' ? theme.accent : undefined)} dimColor={row.state === 'lost'}>{line}</Text>
      {err ? <Text wrap="truncate" color={theme.error ?? undefined}>{err}</Text> : null}
    </Box>
  );
}

export function PrintedView({ item, layout, theme }: { item: PrintItem; layout: Layout; theme: Theme }) {
  switch (item.kind) {
    case 'columns': return <Text wrap="truncate" bold>{headerLine(layout)}</Text>;
    case 'row': return <RowView row={item.row} layout={layout} theme={theme} now={item.row.end ?? item.row.start} frame={0} />;
    case 'note': {
      const color = item.tone === 'error' ? theme.error : item.tone === 'warn' ? theme.warn : theme.muted;
      return <Text wrap="truncate" color={color} dimColor={!theme.color && item.tone === 'info'}>{fit(`── ${clock(item.time)} ${item.text}`, layout.width)}</Text>;
    }
    default: { const never: never = item; return never; }
  }
}

function connectionLine(s: MonitorState): { text: string; tone: 'ok' | 'warn' | 'error' | 'muted' } {
  const c = s.conn;
  switch (c.state) {
    case 'connecting': return { text: '○ connecting to the gateway…', tone: 'muted' };
    case 'connected': return { text: `● gateway ${c.url.replace(/^https?:\/\//, '')} (pid ${c.pid})`, tone: 'ok' };
    case 'no-daemon': return { text: `○ no gateway is running; start one with: ${gatewayCmd('start')} (waiting for it)`, tone: 'error' };
    case 'disconnected': return { text: `○ gateway ${c.url.replace(/^https?:\/\//, '')} unreachable (${c.reason}); retrying`, tone: 'warn' };
    default: { const never: never = c; return never; }
  }
}

const SEP = ' · ';

/**
 * The totals line's parts for a terminal `width` wide. The cache shows only once a provider reported
 * using it (most sessions without it need no zeros): its reads, writes and hit ratio where they fit,
 * else the hit ratio alone; the start time and the rate's window go first.
 */
export function statusParts(state: MonitorState, width: number): string[] {
  const t = state.totals;
  const rate = requestRate(state);
  const counts = [
    `requests ${compact(t.requests)}`, `errors ${compact(t.errors)}`, `in flight ${state.live.length}`,
    `tokens ${compact(t.tokensIn)} in / ${compact(t.tokensOut)} out`,
  ];
  const rateText = `${rate < 10 ? rate.toFixed(2) : compact(rate)} req/s`;
  const wide = width >= 96 ? [`${rateText} (1 min)`, `since ${clock(state.since)}`] : [rateText];
  if (t.cacheRead + t.cacheWrite === 0) return [...counts, ...wide];
  const hit = `${percent(cacheHitRatio(t.cacheRead, t.tokensIn))} hit`;
  const cache = `cache ${compact(t.cacheRead)} read / ${compact(t.cacheWrite)} write, ${hit}`;
  const choices = [[...counts, cache, ...wide], [...counts, cache, rateText], [...counts, `cache ${hit}`, rateText]];
  return choices.find((c) => c.join(SEP).length <= width) ?? choices[choices.length - 1]!;
}

export function StatusHeader({ state, layout, theme }: { state: MonitorState; layout: Layout; theme: Theme }) {
  const conn = connectionLine(state);
  const color = conn.tone === 'ok' ? theme.ok : conn.tone === 'warn' ? theme.warn : conn.tone === 'error' ? theme.error : theme.muted;
  const t = state.totals;
  const flags = [
    state.paused ? `PAUSED${state.paused.held.length ? ` (${state.paused.held.length} events held)` : ''}` : '',
    state.filter.text ? `filter: ${state.filter.text}` : '',
  ].filter(Boolean).join('  ');
  const parts = statusParts(state, layout.width);
  return (
    <Box flexDirection="column">
      <Text wrap="truncate">
        <Text color={color} bold={conn.tone !== 'muted'}>{fit(conn.text, Math.max(10, layout.width - flags.length - 2))}</Text>
        {flags ? <Text color={theme.warn} bold inverse={!theme.color && Boolean(state.paused)}>{`  ${flags}`}</Text> : null}
      </Text>
      {state.store && !state.store.connected && state.conn.state === 'connected'
        ? <Text wrap="truncate" color={theme.warn} bold>{fit(`▲ ${storeHealthText(state.store)} · limits on this daemon's share`, layout.width)}</Text>
        : null}
      <Text wrap="truncate">
        {parts.map((p, i) => (
          <Text key={i} color={i === 1 && t.errors > 0 ? theme.error : undefined}>{(i > 0 ? SEP : '') + p}</Text>
        ))}
      </Text>
    </Box>
  );
}

export function LiveRows({ state, layout, theme, frame, max }: { state: MonitorState; layout: Layout; theme: Theme; frame: number; max: number }) {
  const rows = state.live;
  if (rows.length === 0) {
    const idle = state.conn.state === 'connected' ? (state.done.length === 0 ? 'waiting for requests…' : 'no request in flight') : '';
    return idle ? <Text color={theme.muted} dimColor={!theme.color}>{`  ${idle}`}</Text> : null;
  }
  const shown = rows.length > max ? rows.slice(rows.length - (max - 1)) : rows;
  const now = state.paused?.at ?? state.now;
  return (
    <Box flexDirection="column">
      {shown.length < rows.length ? <Text color={theme.muted}>{`  … ${rows.length - shown.length} more in flight`}</Text> : null}
      {shown.map((r) => <RowView key={r.id} row={r} layout={layout} theme={theme} now={now} frame={frame} />)}
    </Box>
  );
}

export function SelectList({ rows, selectedId, layout, theme, now, frame, height }: {
  rows: Row[]; selectedId: string | null; layout: Layout; theme: Theme; now: number; frame: number; height: number;
}) {
  const i = Math.max(0, rows.findIndex((r) => r.id === selectedId));
  const start = Math.max(0, Math.min(i - Math.floor(height / 2), rows.length - height));
  const window = rows.slice(start, start + height);
  return (
    <Box flexDirection="column">
      {window.map((r) => <RowView key={r.id} row={r} layout={layout} theme={theme} now={now} frame={frame} selected={r.id === selectedId} withError={false} />)}
      <Text color={theme.muted} dimColor={!theme.color}>{fit(`  ${i + 1} of ${rows.length}${rows.length >= 1000 ? ' (the last 1000 are kept)' : ''}`, layout.width)}</Text>
    </Box>
  );
}

export function DetailsView({ row, layout, theme, now, height }: { row: Row; layout: Layout; theme: Theme; now: number; height: number }) {
  return (
    <Box flexDirection="column">
      {detailLines(row, now, layout.width, height).map((l, i) => (
        <Text key={i} wrap="truncate" bold={l.tone === 'title'} color={l.tone === 'error' ? theme.error : l.tone === 'muted' ? theme.muted : undefined}>{l.text}</Text>
      ))}
    </Box>
  );
}

export function HelpView({ layout, theme }: { layout: Layout; theme: Theme }) {
  return (
    <Box flexDirection="column">
      <Text bold>Keys</Text>
      {helpLines().map((l) => <Text key={l} wrap="truncate">{fit(`  ${l}`, layout.width)}</Text>)}
      <Text color={theme.muted} wrap="truncate">{fit('  Rows print above as requests end; the live rows below them are still in flight.', layout.width)}</Text>
    </Box>
  );
}

export function Footer({ state, layout, theme }: { state: MonitorState; layout: Layout; theme: Theme }) {
  if (state.view === 'filter') {
    return (
      <Box flexDirection="column">
        <Text wrap="truncate"><Text bold>filter: </Text>{state.filterDraft}<Text inverse> </Text></Text>
        <Text wrap="truncate" color={theme.muted} dimColor={!theme.color}>{fit(`${footerText('filter', false)}   e.g. provider:openai key:chat status:4xx -model:mini`, layout.width)}</Text>
      </Box>
    );
  }
  return <Text wrap="truncate" color={theme.muted} dimColor={!theme.color}>{fit(footerText(state.view, Boolean(state.paused)), layout.width)}</Text>;
}
