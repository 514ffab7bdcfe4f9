// Everything `gateway chat` shows and remembers, owned by one pure reducer: the printed transcript
// (for <Static>), the conversation sent to the model, the input and its history, the answer being
// streamed and the numbers of the last one. Network and files are the app's business, not this.
import type { ChatAnswer, ChatMessage, Usage } from './client.js';
import { parseInput, type SlashName } from './commands.js';
import * as ed from './editor.js';
import { at, EMPTY, type Editor } from './editor.js';
import { finishText, MD_START, pushText, type MdCursor, type MdLine } from './markdown.js';

export type Tone = 'info' | 'error' | 'muted';

/** One <Static> item; keyed `${gen}:${index}` since items are only appended within a generation. */
export type Printed =
  | { kind: 'banner'; text: string }
  | { kind: 'user'; text: string }
  | { kind: 'md'; line: MdLine }
  | { kind: 'notice'; text: string; tone: Tone }
  | { kind: 'gap' };

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
  time: number;
  model?: string;
  usage?: Usage | null;
  ms?: number;
  stopped?: boolean;
}

export interface Streaming {
  id: number;
  model: string;
  /** Exactly what is sent. */
  messages: ChatMessage[];
  userText: string;
  md: MdCursor;
  text: string;
  pieces: number;
  startedAt: number;
  firstAt: number | null;
  stopping: boolean;
}

export interface LastAnswer {
  /** The model asked for (what `--model` or /model said). */
  requested: string;
  /** The model that answered, as the daemon reported it. */
  model: string;
  usage: Usage | null;
  ms: number;
  ttfbMs: number | null;
}

export interface ChatState {
  printed: { gen: number; items: Printed[] };
  clearScreen: number;
  model: string;
  system: string | null;
  turns: Turn[];
  input: Editor;
  history: string[];
  /** Position while walking the input history with ↑/↓ (null: editing a fresh line). */
  historyIndex: number | null;
  historyDraft: string;
  stream: Streaming | null;
  nextStreamId: number;
  last: LastAnswer | null;
  /** Set by a first Ctrl-C on an empty line; a second one soon after exits. */
  exitArmedAt: number | null;
  busy: string | null;
  /** A slash command for the app to run (it may need the network or the disk). */
  command: { seq: number; name: SlashName; arg: string } | null;
  /** A one-line hint in the footer until the next key (e.g. "press ctrl-c again to exit"). */
  hint: string | null;
  exiting: boolean;
  now: number;
}

export type Action =
  /** Keys become actions applied to the reducer's own state: several can arrive between two frames. */
  | { type: 'edit'; apply: (input: Editor) => Editor }
  | { type: 'enter'; now: number }
  | { type: 'arrow'; dir: -1 | 1 }
  | { type: 'interrupt'; now: number }
  | { type: 'eof' }
  | { type: 'exit' }
  | { type: 'disarm' }
  | { type: 'delta'; text: string; now: number }
  | { type: 'done'; answer: ChatAnswer; now: number }
  | { type: 'failed'; message: string; now: number }
  | { type: 'stopped'; now: number }
  | { type: 'notice'; text: string; tone: Tone }
  | { type: 'model'; model: string }
  | { type: 'system'; text: string | null }
  | { type: 'clear' }
  | { type: 'screen_cleared'; banner: string }
  | { type: 'busy'; text: string | null }
  | { type: 'tick'; now: number };

export function initialChat(opts: { model: string; system?: string | null; banner: string; now: number }): ChatState {
  return {
    printed: { gen: 0, items: [{ kind: 'banner', text: opts.banner }] }, clearScreen: 0,
    model: opts.model, system: opts.system ?? null, turns: [], input: EMPTY, history: [], historyIndex: null, historyDraft: '',
    stream: null, nextStreamId: 1, last: null, exitArmedAt: null, busy: null, command: null, hint: null, exiting: false, now: opts.now,
  };
}

const print = (s: ChatState, ...items: Printed[]): ChatState['printed'] => ({ gen: s.printed.gen, items: [...s.printed.items, ...items] });

/** What the model is sent: the system prompt, then the conversation. */
export function conversation(s: ChatState): ChatMessage[] {
  return [...(s.system ? [{ role: 'system' as const, content: s.system }] : []), ...s.turns.map((t) => ({ role: t.role, content: t.content }))];
}

/** The streamed answer's last lines, printed when it ends however it ends. */
function flushAnswer(st: Streaming): Printed[] {
  return finishText(st.md).map((line) => ({ kind: 'md', line }));
}

/** A failed or unanswered message leaves the conversation (↑ brings it back from the input history). */
function unsend(s: ChatState): Pick<ChatState, 'turns'> {
  return { turns: s.turns.slice(0, -1) };
}

export const EXIT_WINDOW_MS = 2000;

function remember(s: ChatState, text: string): ChatState {
  const history = s.history[s.history.length - 1] === text ? s.history : [...s.history, text].slice(-500);
  return { ...s, history, historyIndex: null, historyDraft: '' };
}

function send(s: ChatState, text: string, now: number): ChatState {
  const turns: Turn[] = [...s.turns, { role: 'user', content: text, time: now }];
  const stream: Streaming = {
    id: s.nextStreamId, model: s.model, messages: conversation({ ...s, turns }), userText: text, md: MD_START,
    text: '', pieces: 0, startedAt: now, firstAt: null, stopping: false,
  };
  return { ...s, turns, stream, nextStreamId: s.nextStreamId + 1, input: EMPTY, printed: print(s, { kind: 'user', text }), exitArmedAt: null, now };
}

/** Enter: a trailing backslash asks for another line (as in a shell); else send the message or run the command. */
function enter(s: ChatState, now: number): ChatState {
  const { text: raw, cursor } = s.input;
  if (cursor === raw.length && raw.endsWith('\\')) return { ...s, input: ed.insert(ed.backspace(s.input), '\n') };
  const text = raw.trim();
  if (!text) return s;
  const parsed = parseInput(text);
  // Nothing prints while an answer streams, so its lines stay together.
  if (s.stream && !(parsed.kind === 'slash' && parsed.name === 'exit')) return { ...s, hint: 'an answer is still streaming: wait for it, or stop it with ctrl-c' };
  if (parsed.kind === 'message') return send(remember(s, raw.trimEnd()), parsed.text, now);
  const next = { ...remember(s, raw.trimEnd()), input: EMPTY };
  if (parsed.kind === 'unknown') return { ...next, printed: print(s, { kind: 'notice', text: `✗ unknown command /${parsed.word}; /help lists them`, tone: 'error' }) };
  return { ...next, command: { seq: (s.command?.seq ?? 0) + 1, name: parsed.name, arg: parsed.arg } };
}

function arrow(s: ChatState, dir: -1 | 1): ChatState {
  const moved = ed.vertical(s.input, dir);
  if (moved) return { ...s, input: moved };
  if (s.history.length === 0) return s;
  const from = s.historyIndex ?? s.history.length;
  const to = from + dir;
  if (to < 0) return s;
  if (to >= s.history.length) return s.historyIndex === null ? s : { ...s, historyIndex: null, input: at(s.historyDraft) };
  return { ...s, historyIndex: to, historyDraft: s.historyIndex === null ? s.input.text : s.historyDraft, input: at(s.history[to]!) };
}

/** Ctrl-C: stop the answer; else clear the line; on an empty line, a second press soon after exits. */
function interrupt(s: ChatState, now: number): ChatState {
  if (s.stream) return s.stream.stopping ? s : { ...s, stream: { ...s.stream, stopping: true } };
  if (s.input.text) return { ...s, input: EMPTY, historyIndex: null };
  if (s.exitArmedAt !== null && now - s.exitArmedAt < EXIT_WINDOW_MS) return { ...s, exiting: true };
  return { ...s, exitArmedAt: now, hint: 'press ctrl-c again to exit (or ctrl-d)' };
}

export function chatReducer(s: ChatState, a: Action): ChatState {
  switch (a.type) {
    case 'edit':
      return { ...s, input: a.apply(s.input), exitArmedAt: null, hint: null };
    case 'enter':
      return enter({ ...s, hint: null }, a.now);
    case 'arrow':
      return arrow({ ...s, hint: null }, a.dir);
    case 'interrupt':
      return interrupt(s, a.now);
    case 'eof':
      return s.input.text === '' ? { ...s, exiting: true } : { ...s, input: ed.deleteForward(s.input) };
    case 'exit':
      return { ...s, exiting: true };
    case 'disarm':
      return s.exitArmedAt === null ? s : { ...s, exitArmedAt: null, hint: null };
    case 'delta': {
      const st = s.stream;
      if (!st || a.text === '') return s;
      const { lines, cursor } = pushText(st.md, a.text);
      const next = { ...st, md: cursor, text: st.text + a.text, pieces: st.pieces + 1, firstAt: st.firstAt ?? a.now };
      return { ...s, stream: next, now: a.now, printed: lines.length > 0 ? print(s, ...lines.map((line) => ({ kind: 'md' as const, line }))) : s.printed };
    }
    case 'done': {
      const st = s.stream;
      if (!st) return s;
      const model = a.answer.model ?? st.model;
      const tail = flushAnswer(st);
      const empty = a.answer.text.trim() === '';
      const turns: Turn[] = [...s.turns, { role: 'assistant', content: a.answer.text, time: a.now, model, usage: a.answer.usage, ms: a.answer.ms }];
      const notes: Printed[] = empty ? [{ kind: 'notice', text: `(the model sent an empty answer${a.answer.finishReason ? `; finish reason: ${a.answer.finishReason}` : ''})`, tone: 'muted' }] : [];
      if (a.answer.finishReason === 'length') notes.push({ kind: 'notice', text: '(the answer was cut off: the model hit its output limit)', tone: 'muted' });
      return {
        ...s, turns, stream: null, now: a.now,
        last: { requested: st.model, model, usage: a.answer.usage, ms: a.answer.ms, ttfbMs: a.answer.ttfbMs },
        printed: print(s, ...tail, ...notes, { kind: 'gap' }),
      };
    }
    case 'failed': {
      const st = s.stream;
      if (!st) return { ...s, printed: print(s, { kind: 'notice', text: a.message, tone: 'error' }) };
      return {
        ...s, ...unsend(s), stream: null, now: a.now,
        printed: print(s, ...flushAnswer(st), { kind: 'notice', text: `✗ ${a.message}`, tone: 'error' }, { kind: 'notice', text: '(that message was not kept in the conversation; ↑ brings it back to try again)', tone: 'muted' }, { kind: 'gap' }),
      };
    }
    case 'stopped': {
      const st = s.stream;
      if (!st) return s;
      if (st.text === '') {
        return { ...s, ...unsend(s), stream: null, now: a.now, printed: print(s, { kind: 'notice', text: '(stopped before the answer began; the message was not kept — ↑ brings it back)', tone: 'muted' }, { kind: 'gap' }) };
      }
      const turns: Turn[] = [...s.turns, { role: 'assistant', content: st.text, time: a.now, model: st.model, stopped: true }];
      return { ...s, turns, stream: null, now: a.now, printed: print(s, ...flushAnswer(st), { kind: 'notice', text: '(stopped)', tone: 'muted' }, { kind: 'gap' }) };
    }
    case 'notice':
      return { ...s, printed: print(s, { kind: 'notice', text: a.text, tone: a.tone }) };
    case 'model':
      return { ...s, model: a.model };
    case 'system':
      return { ...s, system: a.text };
    case 'clear':
      return { ...s, turns: [], last: null, printed: { gen: s.printed.gen + 1, items: [] }, clearScreen: s.clearScreen + 1 };
    case 'screen_cleared':
      return s.printed.items.some((i) => i.kind === 'banner') ? s : { ...s, printed: print(s, { kind: 'banner', text: a.banner }) };
    case 'busy':
      return { ...s, busy: a.text };
    case 'tick':
      return s.stream || s.busy ? { ...s, now: a.now } : s;
    default: { const never: never = a; return never; }
  }
}

/** The transcript as saved by /save: what was said, with the model, usage and time of each answer. */
export function transcript(s: ChatState, savedAt: Date): unknown {
  return {
    version: 1,
    savedAt: savedAt.toISOString(),
    model: s.model,
    system: s.system,
    messages: [
      ...(s.system ? [{ role: 'system', content: s.system }] : []),
      ...s.turns.map((t) => ({
        role: t.role, content: t.content, time: new Date(t.time).toISOString(),
        ...(t.model ? { model: t.model } : {}), ...(t.usage ? { usage: t.usage } : {}),
        ...(t.ms !== undefined ? { durationMs: Math.round(t.ms) } : {}), ...(t.stopped ? { stopped: true } : {}),
      })),
    ],
  };
}
