// Colours for the Ink UIs, switched off as a whole when NO_COLOR is set (https://no-color.org):
// components take their colours from here, never as literals, so "no colour" is one decision.
export interface Theme {
  color: boolean;
  error: string | undefined;
  ok: string | undefined;
  warn: string | undefined;
  accent: string | undefined;
  code: string | undefined;
  muted: string | undefined;
}

const COLORS: Theme = { color: true, error: 'red', ok: 'green', warn: 'yellow', accent: 'cyan', code: 'cyan', muted: 'gray' };
const PLAIN: Theme = { color: false, error: undefined, ok: undefined, warn: undefined, accent: undefined, code: undefined, muted: undefined };

/** NO_COLOR counts when set to anything but the empty string. */
export function themeFor(env: NodeJS.ProcessEnv = process.env): Theme {
  return env.NO_COLOR !== undefined && env.NO_COLOR !== '' ? PLAIN : COLORS;
}
