// Several keys can reach us as one chunk (typed ahead while busy, a script, tmux send-keys): Ink
// then hands over the whole string at once. For single-key UIs we split it back into keystrokes.
import type { Key } from 'ink';

export interface Keystroke { input: string; key: Key }

const NONE: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
  return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false,
  super: false, hyper: false, capsLock: false, numLock: false,
};

export function keyOf(over: Partial<Key> = {}): Key {
  return { ...NONE, ...over };
}

/** One keystroke per character of a multi-character plain chunk; anything else stays as it came. */
export function splitKeystrokes(input: string, key: Key): Keystroke[] {
  const special = Object.entries(key).some(([k, v]) => v === true && k !== 'shift');
  if (input.length <= 1 || special) return [{ input, key }];
  return [...input].map((c): Keystroke => {
    const code = c.charCodeAt(0);
    if (c === '\r' || c === '\n') return { input: '', key: keyOf({ return: true }) };
    if (c === '\t') return { input: '', key: keyOf({ tab: true }) };
    if (c === '\x7f' || c === '\b') return { input: '', key: keyOf({ backspace: true }) };
    if (code < 32) return { input: String.fromCharCode(code + 96), key: keyOf({ ctrl: true }) };
    return { input: c, key: keyOf({ shift: /[A-Z]/.test(c) }) };
  });
}
