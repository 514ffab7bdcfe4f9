// The live monitor: finished requests print once into <Static> (the terminal keeps them as
// scrollback), and below them a small live area redraws on a fixed tick: the header with totals,
// the requests in flight (or the selection list, the details, the help) and the footer of keys.
// Events are buffered between ticks, so a burst of thousands costs one reducer pass and one frame.
import { Box, Static, Text, useApp, useInput, useStdout, useWindowSize } from 'ink';
import { useEffect, useLayoutEffect, useMemo, useReducer, useRef } from 'react';
import type { GatewayEvent } from '../../../daemon/observe/events.js';
import type { ConnectionStatus } from '../../events-client.js';
import type { StoreStatusView } from '../../../daemon/store/store-health.js';
import { splitKeystrokes } from '../common/keystrokes.js';
import type { Theme } from '../common/theme.js';
import { headerLine, layoutFor } from './columns.js';
import { DetailsView, Footer, HelpView, LiveRows, PrintedView, SelectList, StatusHeader } from './components.js';
import { initialState, needsRollover, reducer, selectableRows, selectedRow } from './state.js';

/** Where events come from: the daemon's SSE stream in the CLI, a script in tests. Returns an unsubscribe. */
export type EventSource = (handlers: { onEvent(ev: GatewayEvent): void; onStatus(s: ConnectionStatus): void; onStore(s: StoreStatusView): void }) => () => void;

export interface MonitorProps {
  source: EventSource;
  theme: Theme;
  /** Keyboard handling; off when stdin is not a terminal. */
  keyboard?: boolean;
  tickMs?: number;
  now?: () => number;
  /** Override the terminal size (tests). */
  width?: number;
  height?: number;
}

const CLEAR_SCREEN = '\x1b[2J\x1b[H';

export function MonitorApp({ source, theme, keyboard = true, tickMs = 100, now = Date.now, width, height }: MonitorProps) {
  const [state, dispatch] = useReducer(reducer, undefined, () => initialState(now()));
  const pending = useRef<GatewayEvent[]>([]);
  const live = useRef(state);
  live.current = state;
  const { exit } = useApp();
  const { write } = useStdout();
  const size = useWindowSize();
  const cols = width ?? size.columns;
  const rows = height ?? size.rows;
  const layout = useMemo(() => layoutFor(cols), [cols]);

  useEffect(() => {
    const flush = () => {
      if (pending.current.length > 0) dispatch({ type: 'events', events: pending.current.splice(0), now: now() });
    };
    const unsubscribe = source({
      onEvent: (ev) => { pending.current.push(ev); },
      // Events received before a disconnect must land before it, or their rows would be marked lost.
      onStatus: (status) => { flush(); dispatch({ type: 'connection', status, now: now() }); },
      onStore: (store) => { flush(); dispatch({ type: 'store', store, now: now() }); },
    });
    let idleTicks = 0;
    const timer = setInterval(() => {
      if (pending.current.length > 0) { flush(); return; }
      // Nothing new: redraw for the spinners and live timers, and once a second for the rate.
      if (live.current.live.length > 0 || ++idleTicks * tickMs >= 1000) { idleTicks = 0; dispatch({ type: 'tick', now: now() }); }
    }, tickMs);
    return () => { clearInterval(timer); unsubscribe(); };
  }, [source, tickMs, now]);

  useLayoutEffect(() => {
    if (needsRollover(state)) dispatch({ type: 'static_rollover', printedUpTo: state.printed.items.length });
  }, [state.printed.items.length]);

  useEffect(() => {
    if (state.clearScreen === 0) return;
    write(CLEAR_SCREEN);
    dispatch({ type: 'screen_cleared' });
  }, [state.clearScreen, write]);

  useEffect(() => { if (state.quit) exit(); }, [state.quit]);

  useInput((input, key) => {
    for (const k of splitKeystrokes(input, key)) dispatch({ type: 'key', input: k.input, key: k.key, now: now() });
  }, { isActive: keyboard });

  const shownNow = state.paused?.at ?? state.now;
  const frame = Math.floor(shownNow / 100);
  // Header (2, and a line while the store is unreachable) + column titles (1) + footer (1-2) + one spare line, so the live area never fills the screen.
  const body = Math.max(3, rows - 5 - (state.view === 'filter' ? 1 : 0) - (state.store?.connected === false ? 1 : 0) - 1);
  const selected = selectedRow(state);

  let view;
  switch (state.view) {
    case 'details':
      view = selected
        ? <DetailsView row={selected} layout={layout} theme={theme} now={shownNow} height={body} />
        : <Text color={theme.muted}>that request is no longer kept</Text>;
      break;
    case 'select':
      view = <SelectList rows={selectableRows(state)} selectedId={state.selectedId} layout={layout} theme={theme} now={shownNow} frame={frame} height={Math.max(3, Math.min(body - 1, Math.floor(rows / 2)))} />;
      break;
    case 'help':
      view = <HelpView layout={layout} theme={theme} />;
      break;
    case 'table':
    case 'filter':
      view = <LiveRows state={state} layout={layout} theme={theme} frame={frame} max={Math.max(3, Math.min(body, Math.floor(rows / 2) - 2))} />;
      break;
    default: { const never: never = state.view; view = never; }
  }

  return (
    <Box flexDirection="column">
      <Static key={state.printed.gen} items={state.printed.items}>
        {(item, i) => <PrintedView key={`${state.printed.gen}:${i}`} item={item} layout={layout} theme={theme} />}
      </Static>
      <StatusHeader state={state} layout={layout} theme={theme} />
      {state.view === 'select' || (state.live.length > 0 && (state.view === 'table' || state.view === 'filter')) ? <Text wrap="truncate" dimColor>{headerLine(layout)}</Text> : null}
      {view}
      <Footer state={state} layout={layout} theme={theme} />
    </Box>
  );
}
