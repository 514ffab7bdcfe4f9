// Everything the monitor shows, owned by one pure reducer: request rows built from daemon events,
// totals and the one-minute request rate, pause, filter, selection and the details view. Time
// comes in with the actions (`now`), so a scripted event sequence always gives the same frames.
import type { Key } from 'ink';
import type { GatewayEvent } from '../../../daemon/observe/events.js';
import type { ConnectionStatus } from '../../events-client.js';
import { storeHealthText, type StoreStatusView } from '../../../daemon/store/store-health.js';
import { matches, NO_FILTER, parseFilter, type Filter } from './filter.js';
import { commandFor } from './keys.js';
import { applyEvent, type Row, type Totals, type Work } from './rows.js';

export type { Row, RowState } from './rows.js';

/** One <Static> item; its React key is `${gen}:${index}`, as items are only ever appended within a generation. */
export type PrintItem =
  | { kind: 'columns' }
  | { kind: 'row'; row: Row }
  | { kind: 'note'; text: string; tone: 'info' | 'warn' | 'error'; time: number };

export type View = 'table' | 'select' | 'details' | 'filter' | 'help';

export interface MonitorState {
  conn: ConnectionStatus;
  /** Team mode: the daemon's shared store as it last reported it; absent on a laptop. */
  store?: StoreStatusView;
  /** Monitor start, or the last clear. */
  since: number;
  now: number;
  nextSeq: number;
  /** In flight, oldest first. */
  live: Row[];
  /** Finished, oldest first, the last KEEP_DONE of them (for selection and reprinting). */
  done: Row[];
  /** What <Static> prints; a new generation starts on clear and when the list grows long. */
  printed: { gen: number; items: PrintItem[] };
  /** Bumped when the screen must be wiped before the next generation prints. */
  clearScreen: number;
  totals: Totals;
  /** Requests started per second over the last minute: [epoch second, count]. */
  rate: Array<[number, number]>;
  paused: { at: number; held: GatewayEvent[]; dropped: number } | null;
  filter: Filter;
  filterDraft: string;
  view: View;
  selectedId: string | null;
  /** Set by the quit key; the app exits. */
  quit: boolean;
}

export type Action =
  /** A key press, interpreted here (shortcuts table) so keys arriving between two frames see each other's effect. */
  | { type: 'key'; input: string; key: Key; now: number }
  | { type: 'events'; events: GatewayEvent[]; now: number }
  | { type: 'tick'; now: number }
  | { type: 'connection'; status: ConnectionStatus; now: number }
  | { type: 'store'; store: StoreStatusView; now: number }
  | { type: 'move'; by: number | 'first' | 'last' }
  | { type: 'select' }
  | { type: 'details' }
  | { type: 'back' }
  | { type: 'filter_start' }
  | { type: 'filter_edit'; apply: (draft: string) => string }
  | { type: 'filter_apply' }
  | { type: 'pause'; now: number }
  | { type: 'clear'; now: number }
  | { type: 'screen_cleared' }
  | { type: 'help' }
  | { type: 'static_rollover'; printedUpTo: number };

export const KEEP_DONE = 1000;
/** Rows printed again under a new filter. */
export const REPRINT_ROWS = 40;
const ROLLOVER_AT = 2000;
const MAX_HELD = 50_000;

export function initialState(now: number): MonitorState {
  return {
    conn: { state: 'connecting' }, since: now, now, nextSeq: 1, live: [], done: [],
    printed: { gen: 0, items: [{ kind: 'columns' }] }, clearScreen: 0,
    totals: { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, cacheRead: 0, cacheWrite: 0 }, rate: [],
    paused: null, filter: NO_FILTER, filterDraft: '', view: 'table', selectedId: null, quit: false,
  };
}

/** Requests per second over the last minute (or since the monitor started, when that is shorter). */
export function requestRate(s: MonitorState): number {
  const sec = Math.floor(s.now / 1000);
  const count = s.rate.reduce((n, [t, c]) => (t > sec - 60 ? n + c : n), 0);
  const window = Math.min(60, Math.max(1, (s.now - s.since) / 1000));
  return count / window;
}

function rowItem(row: Row): PrintItem {
  return { kind: 'row', row };
}

function noteItem(s: MonitorState, text: string, tone: 'info' | 'warn' | 'error'): PrintItem {
  return { kind: 'note', text, tone, time: s.now };
}

function applyEvents(s: MonitorState, events: GatewayEvent[]): MonitorState {
  if (events.length === 0) return s;
  const w: Work = {
    live: new Map(s.live.map((r) => [r.id, r])), done: s.done.slice(), newlyDone: [], totals: { ...s.totals }, rate: s.rate, nextSeq: s.nextSeq,
  };
  for (const ev of events) applyEvent(w, ev);
  const shown = w.newlyDone.filter((r) => matches(r, s.filter)).map(rowItem);
  return {
    ...s,
    live: [...w.live.values()],
    done: w.done.length > KEEP_DONE ? w.done.slice(-KEEP_DONE) : w.done,
    totals: w.totals, rate: w.rate, nextSeq: w.nextSeq,
    printed: shown.length > 0 ? { gen: s.printed.gen, items: [...s.printed.items, ...shown] } : s.printed,
  };
}

/** Held while paused: everything, but progress is the first to go when the buffer is full. */
function hold(s: MonitorState, events: GatewayEvent[]): MonitorState {
  const p = s.paused!;
  let held = p.held.concat(events);
  let dropped = p.dropped;
  if (held.length > MAX_HELD) {
    const before = held.length;
    held = held.filter((e) => e.type !== 'progress');
    if (held.length > MAX_HELD) held = held.slice(held.length - MAX_HELD);
    dropped += before - held.length;
  }
  return { ...s, paused: { ...p, held, dropped } };
}

/** Rows the selection moves over: finished then in flight, as filtered. */
export function selectableRows(s: MonitorState): Row[] {
  return [...s.done, ...s.live].filter((r) => matches(r, s.filter));
}

export function selectedRow(s: MonitorState): Row | undefined {
  if (!s.selectedId) return undefined;
  return s.live.find((r) => r.id === s.selectedId) ?? s.done.find((r) => r.id === s.selectedId);
}

function move(s: MonitorState, by: number | 'first' | 'last'): MonitorState {
  const rows = selectableRows(s);
  if (rows.length === 0) return s;
  let i = rows.findIndex((r) => r.id === s.selectedId);
  if (by === 'first') i = 0;
  else if (by === 'last' || i === -1) i = rows.length - 1;
  else i = Math.max(0, Math.min(rows.length - 1, i + by));
  return { ...s, selectedId: rows[i]!.id, view: s.view === 'details' ? 'details' : 'select' };
}

function connectionNote(s: MonitorState, prev: ConnectionStatus, next: ConnectionStatus): PrintItem | undefined {
  if (next.state === 'connected' && prev.state !== 'connected') return noteItem(s, `connected to the gateway at ${next.url} (pid ${next.pid})`, 'info');
  if (next.state === 'disconnected' && prev.state === 'connected') return noteItem(s, `lost the gateway at ${next.url}: ${next.reason}; reconnecting`, 'warn');
  if (next.state === 'no-daemon' && prev.state === 'connected') return noteItem(s, 'the gateway stopped; waiting for it to start again', 'warn');
  return undefined;
}

/** The filter prompt takes text; everywhere else a key is a shortcut. */
function onKey(s: MonitorState, input: string, key: Key, now: number): MonitorState {
  if (s.view === 'filter') {
    if (key.return) return reducer(s, { type: 'filter_apply' });
    if (key.escape) return reducer(s, { type: 'back' });
    if (key.backspace || key.delete) return { ...s, filterDraft: s.filterDraft.slice(0, -1) };
    if (key.ctrl && input === 'u') return { ...s, filterDraft: '' };
    if (input && !key.ctrl && !key.meta) return { ...s, filterDraft: s.filterDraft + input.replace(/[\r\n\t]/g, ' ') };
    return s;
  }
  const cmd = commandFor(s.view, input, key, now);
  if (!cmd) return s;
  return cmd.type === 'quit' ? { ...s, quit: true } : reducer(s, cmd);
}

export function reducer(s: MonitorState, a: Action): MonitorState {
  switch (a.type) {
    case 'key':
      return onKey(s, a.input, a.key, a.now);
    case 'events':
      if (s.paused) return hold(s, a.events);
      return applyEvents({ ...s, now: a.now }, a.events);
    case 'tick':
      return s.paused || (a.now === s.now) ? s : { ...s, now: a.now };
    case 'connection': {
      const next: MonitorState = { ...s, conn: a.status, now: s.paused ? s.now : a.now };
      const note = connectionNote(next, s.conn, a.status);
      // A request in flight when the connection dropped will never report its end to us.
      const lost = a.status.state !== 'connected' && s.conn.state === 'connected' && s.live.length > 0;
      if (!note && !lost) return next;
      const lostRows: Row[] = lost ? s.live.map((r) => ({ ...r, state: 'lost', end: a.now, error: { code: 'monitor_disconnected', message: 'the monitor lost the daemon before this request ended' } })) : [];
      const items = [...next.printed.items, ...lostRows.filter((r) => matches(r, s.filter)).map(rowItem), ...(note ? [note] : [])];
      return { ...next, live: lost ? [] : s.live, done: [...s.done, ...lostRows].slice(-KEEP_DONE), printed: { gen: s.printed.gen, items } };
    }
    case 'store': {
      const next: MonitorState = { ...s, store: a.store, now: s.paused ? s.now : a.now };
      // A change is also printed once, so the scrollback says when the store went away and came back.
      const changed = s.store ? s.store.connected !== a.store.connected : !a.store.connected;
      if (!changed) return next;
      const note = a.store.connected
        ? noteItem(next, `store ${a.store.display} connected again`, 'info')
        : noteItem(next, `store ${a.store.display}: ${storeHealthText(a.store)}${a.store.lastError ? ` (${a.store.lastError})` : ''}`, 'warn');
      return { ...next, printed: { gen: s.printed.gen, items: [...next.printed.items, note] } };
    }
    case 'move':
      return move(s, a.by);
    case 'select':
      return s.view === 'table' ? move(s, 'last') : s;
    case 'details':
      if (s.view === 'details') return { ...s, view: 'select' };
      return selectedRow(s) ? { ...s, view: 'details' } : move(s, 'last');
    case 'back':
      if (s.view === 'details') return { ...s, view: 'select' };
      if (s.view === 'filter') return { ...s, view: 'table', filterDraft: s.filter.text };
      return { ...s, view: 'table', selectedId: null };
    case 'filter_start':
      return { ...s, view: 'filter', filterDraft: s.filter.text };
    case 'filter_edit':
      return { ...s, filterDraft: a.apply(s.filterDraft) };
    case 'filter_apply': {
      const filter = parseFilter(s.filterDraft);
      const base = { ...s, view: 'table' as View, filter, selectedId: null };
      if (filter.text === s.filter.text) return base;
      // Rows already printed cannot change: say what the filter is and print the recent matches again.
      const again = s.done.filter((r) => matches(r, filter)).slice(-REPRINT_ROWS);
      const label = filter.text ? `filter "${filter.text}": the last ${again.length} matching requests, then new ones` : `filter off: the last ${again.length} requests, then new ones`;
      const items: PrintItem[] = [...s.printed.items, noteItem(s, label, 'info'), { kind: 'columns' }, ...again.map(rowItem)];
      return { ...base, printed: { gen: s.printed.gen, items } };
    }
    case 'pause': {
      if (!s.paused) return { ...s, paused: { at: s.now, held: [], dropped: 0 } };
      const resumed = applyEvents({ ...s, paused: null, now: a.now }, s.paused.held);
      if (s.paused.dropped === 0) return resumed;
      return { ...resumed, printed: { ...resumed.printed, items: [...resumed.printed.items, noteItem(resumed, `${s.paused.dropped} progress updates were skipped while paused`, 'info')] } };
    }
    case 'clear': {
      const gen = s.printed.gen + 1;
      return {
        ...s, since: a.now, now: a.now, done: [], selectedId: null, view: s.view === 'filter' ? 'filter' : 'table',
        totals: { requests: s.live.length, errors: 0, tokensIn: 0, tokensOut: 0, cacheRead: 0, cacheWrite: 0 }, rate: [],
        // The new generation prints only once the screen is wiped (screen_cleared), or the wipe would take it too.
        printed: { gen, items: [] }, clearScreen: s.clearScreen + 1,
      };
    }
    case 'screen_cleared':
      return s.printed.items.some((i) => i.kind === 'columns') ? s : { ...s, printed: { gen: s.printed.gen, items: [...s.printed.items, { kind: 'columns' }] } };
    case 'help':
      return { ...s, view: s.view === 'help' ? 'table' : 'help' };
    case 'static_rollover':
      if (s.printed.items.length < a.printedUpTo || a.printedUpTo < ROLLOVER_AT) return s;
      return { ...s, printed: { gen: s.printed.gen + 1, items: s.printed.items.slice(a.printedUpTo) } };
    default: { const never: never = a; return never; }
  }
}

/** When the app should start a new <Static> generation (see the static_rollover action). */
export function needsRollover(s: MonitorState): boolean {
  return s.printed.items.length >= ROLLOVER_AT;
}
