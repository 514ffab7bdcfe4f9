// The chat's input line as a value (pure): text plus a cursor, with the edits a shell user expects
// (Ctrl-A/E/U/K/W, arrows, word jumps) and multi-line movement for ↑/↓.

export interface Editor { text: string; cursor: number }

export const EMPTY: Editor = { text: '', cursor: 0 };

export const at = (text: string, cursor = text.length): Editor => ({ text, cursor: Math.max(0, Math.min(text.length, cursor)) });

export function insert(e: Editor, s: string): Editor {
  return { text: e.text.slice(0, e.cursor) + s + e.text.slice(e.cursor), cursor: e.cursor + s.length };
}

export function backspace(e: Editor): Editor {
  if (e.cursor === 0) return e;
  const cut = [...e.text.slice(0, e.cursor)].pop()!.length; // one code point, not half a surrogate pair
  return { text: e.text.slice(0, e.cursor - cut) + e.text.slice(e.cursor), cursor: e.cursor - cut };
}

export function deleteForward(e: Editor): Editor {
  if (e.cursor >= e.text.length) return e;
  const cut = [...e.text.slice(e.cursor)][0]!.length;
  return { text: e.text.slice(0, e.cursor) + e.text.slice(e.cursor + cut), cursor: e.cursor };
}

export function left(e: Editor): Editor {
  if (e.cursor === 0) return e;
  return { ...e, cursor: e.cursor - [...e.text.slice(0, e.cursor)].pop()!.length };
}

export function right(e: Editor): Editor {
  if (e.cursor >= e.text.length) return e;
  return { ...e, cursor: e.cursor + [...e.text.slice(e.cursor)][0]!.length };
}

const lineStart = (e: Editor) => e.text.lastIndexOf('\n', e.cursor - 1) + 1;
const lineEnd = (e: Editor) => { const i = e.text.indexOf('\n', e.cursor); return i === -1 ? e.text.length : i; };

export const home = (e: Editor): Editor => ({ ...e, cursor: lineStart(e) });
export const end = (e: Editor): Editor => ({ ...e, cursor: lineEnd(e) });

/** Ctrl-U: erase from the start of the line to the cursor. */
export function killBack(e: Editor): Editor {
  const s = lineStart(e);
  return { text: e.text.slice(0, s) + e.text.slice(e.cursor), cursor: s };
}

/** Ctrl-K: erase from the cursor to the end of the line. */
export function killForward(e: Editor): Editor {
  return { text: e.text.slice(0, e.cursor) + e.text.slice(lineEnd(e)), cursor: e.cursor };
}

function wordStart(text: string, from: number): number {
  let i = from;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  while (i > 0 && !/\s/.test(text[i - 1]!)) i--;
  return i;
}

function wordEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  while (i < text.length && !/\s/.test(text[i]!)) i++;
  return i;
}

/** Ctrl-W / Alt-Backspace: erase the word before the cursor. */
export function killWord(e: Editor): Editor {
  const s = wordStart(e.text, e.cursor);
  return { text: e.text.slice(0, s) + e.text.slice(e.cursor), cursor: s };
}

export const wordLeft = (e: Editor): Editor => ({ ...e, cursor: wordStart(e.text, e.cursor) });
export const wordRight = (e: Editor): Editor => ({ ...e, cursor: wordEnd(e.text, e.cursor) });

/** Row and column of the cursor, and the number of lines. */
export function position(e: Editor): { row: number; col: number; rows: number } {
  const before = e.text.slice(0, e.cursor).split('\n');
  return { row: before.length - 1, col: before[before.length - 1]!.length, rows: e.text.split('\n').length };
}

/** ↑/↓ inside a multi-line input; undefined at the first/last line (the caller then walks history). */
export function vertical(e: Editor, dir: -1 | 1): Editor | undefined {
  const { row, col, rows } = position(e);
  const target = row + dir;
  if (target < 0 || target >= rows) return undefined;
  const lines = e.text.split('\n');
  let offset = 0;
  for (let i = 0; i < target; i++) offset += lines[i]!.length + 1;
  return { ...e, cursor: offset + Math.min(col, lines[target]!.length) };
}
