// Every monitor shortcut in one table: what key, in which views, which action, and how the footer
// and the help view name it. The app looks keys up here and nowhere else.
import type { Key } from 'ink';
import type { Action, View } from './state.js';

export type Command = Action | { type: 'quit' };

export interface Shortcut {
  /** How the footer and help show the key. */
  label: string;
  help: string;
  /** Shown in the footer of these views. */
  footer: View[];
  views: View[];
  match(input: string, key: Key): boolean;
  command(now: number): Command;
}

const ALL: View[] = ['table', 'select', 'details', 'help'];
const ROWS: View[] = ['table', 'select', 'details'];

export const SHORTCUTS: Shortcut[] = [
  { label: '↑↓', help: 'select a row (also k/j; PgUp/PgDn, Home/End)', footer: ['table', 'select', 'details'], views: ROWS,
    match: (i, k) => k.upArrow || i === 'k', command: () => ({ type: 'move', by: -1 }) },
  { label: '', help: '', footer: [], views: ROWS, match: (i, k) => k.downArrow || i === 'j', command: () => ({ type: 'move', by: 1 }) },
  { label: '', help: '', footer: [], views: ROWS, match: (_i, k) => k.pageUp, command: () => ({ type: 'move', by: -10 }) },
  { label: '', help: '', footer: [], views: ROWS, match: (_i, k) => k.pageDown, command: () => ({ type: 'move', by: 10 }) },
  { label: '', help: '', footer: [], views: ROWS, match: (i, k) => k.home || i === 'g', command: () => ({ type: 'move', by: 'first' }) },
  { label: '', help: '', footer: [], views: ROWS, match: (i, k) => k.end || i === 'G', command: () => ({ type: 'move', by: 'last' }) },
  { label: 'enter', help: 'show or hide the selected request\'s details', footer: ['select', 'details'], views: ROWS,
    match: (_i, k) => k.return, command: () => ({ type: 'details' }) },
  { label: 'esc', help: 'back (details → list → table)', footer: ['select', 'details'], views: ALL,
    match: (_i, k) => k.escape, command: () => ({ type: 'back' }) },
  { label: 'f', help: 'filter: provider:openai key:chat status:4xx model:gpt, bare words, -term to exclude', footer: ['table', 'select'], views: ALL,
    match: (i) => i === 'f' || i === '/', command: () => ({ type: 'filter_start' }) },
  { label: 'p', help: 'pause / resume (events are kept and shown on resume)', footer: ['table', 'select', 'details'], views: ALL,
    match: (i) => i === 'p' || i === ' ', command: (now) => ({ type: 'pause', now }) },
  { label: 'c', help: 'clear the screen, the rows and the totals', footer: ['table', 'select'], views: ALL,
    match: (i) => i === 'c', command: (now) => ({ type: 'clear', now }) },
  { label: '?', help: 'this help', footer: ['table'], views: ALL, match: (i) => i === '?' || i === 'h', command: () => ({ type: 'help' }) },
  { label: 'q', help: 'quit (also Ctrl-C)', footer: ALL, views: ALL, match: (i) => i === 'q', command: () => ({ type: 'quit' }) },
];

const FOOTER_WORDS: Record<string, string> = {
  '↑↓': 'select', enter: 'details', esc: 'back', f: 'filter', p: 'pause', c: 'clear', '?': 'help', q: 'quit',
};

/** The command for a key in a view (not the filter editor, which takes text), or undefined. */
export function commandFor(view: View, input: string, key: Key, now: number): Command | undefined {
  if (view === 'filter') return undefined;
  for (const s of SHORTCUTS) if (s.views.includes(view) && s.match(input, key)) return s.command(now);
  return undefined;
}

/** Footer text for a view, e.g. "↑↓ select  f filter  p pause  c clear  ? help  q quit". */
export function footerText(view: View, paused: boolean): string {
  if (view === 'filter') return 'type a filter  enter apply  esc cancel  ctrl-u erase';
  if (view === 'help') return '? or esc back  p pause  c clear  q quit';
  return SHORTCUTS.filter((s) => s.footer.includes(view) && s.label)
    .map((s) => `${s.label} ${s.label === 'p' && paused ? 'resume' : FOOTER_WORDS[s.label]}`)
    .join('  ');
}

/** What the marks after a row's model mean (columns.ts routeMarks writes them). */
const ROUTE_MARKS = [
  '', 'after the model: ↻2 retried twice · ⇄1 moved to another key of the pool · → openai/gpt-5.4 a fallback served it',
];

/** Lines for the help view. */
export function helpLines(): string[] {
  return [...SHORTCUTS.filter((s) => s.help).map((s) => `${s.label.padEnd(6)} ${s.help}`), ...ROUTE_MARKS];
}
