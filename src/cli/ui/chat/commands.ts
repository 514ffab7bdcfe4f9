// The chat's slash commands and keys, each in one table: the app dispatches from these, and
// /help and the footer print them.
import type { Key } from 'ink';

export type SlashName = 'model' | 'models' | 'system' | 'clear' | 'save' | 'help' | 'exit';

export interface Slash { name: SlashName; aliases: string[]; args: string; help: string }

export const SLASH_COMMANDS: Slash[] = [
  { name: 'model', aliases: [], args: '[name]', help: 'show the model, or switch to another (the conversation is kept)' },
  { name: 'models', aliases: [], args: '[filter]', help: 'list the models the gateway offers (GET /v1/models)' },
  { name: 'system', aliases: [], args: '[text|off]', help: 'show, set or remove the system prompt' },
  { name: 'clear', aliases: ['reset'], args: '', help: 'start a new conversation (model and system prompt stay)' },
  { name: 'save', aliases: [], args: '<file>', help: 'write the transcript as JSON' },
  { name: 'help', aliases: ['?'], args: '', help: 'this list' },
  { name: 'exit', aliases: ['quit', 'q'], args: '', help: 'leave (also Ctrl-D on an empty line)' },
];

export type ParsedInput =
  | { kind: 'message'; text: string }
  | { kind: 'slash'; name: SlashName; arg: string }
  | { kind: 'unknown'; word: string };

/** A line the user sent: a message, or a command (`//text` sends `/text` as a message). */
export function parseInput(text: string): ParsedInput {
  if (!text.startsWith('/') || text.startsWith('//')) return { kind: 'message', text: text.startsWith('//') ? text.slice(1) : text };
  const m = /^\/(\S*)\s*([\s\S]*)$/.exec(text)!;
  const word = m[1]!.toLowerCase();
  const cmd = SLASH_COMMANDS.find((c) => c.name === word || c.aliases.includes(word));
  return cmd ? { kind: 'slash', name: cmd.name, arg: m[2]!.trim() } : { kind: 'unknown', word };
}

export type KeyCommand =
  | 'submit' | 'newline' | 'interrupt' | 'eof' | 'up' | 'down' | 'left' | 'right' | 'home' | 'end'
  | 'word-left' | 'word-right' | 'backspace' | 'delete' | 'kill-back' | 'kill-forward' | 'kill-word';

export interface ChatKey { label: string; help: string; match(input: string, key: Key): boolean; command: KeyCommand }

/** First match wins; anything else that is text is typed into the input. */
export const CHAT_KEYS: ChatKey[] = [
  { label: 'shift-enter, alt-enter, ctrl-j', help: 'new line (or end the line with \\)', command: 'newline',
    match: (i, k) => (k.return && (k.shift || k.meta)) || i === '\n' },
  { label: 'enter', help: 'send', command: 'submit', match: (_i, k) => k.return },
  { label: 'ctrl-c', help: 'stop the answer; on an empty line, twice to exit', command: 'interrupt', match: (i, k) => k.ctrl && i === 'c' },
  { label: 'ctrl-d', help: 'exit (on an empty line)', command: 'eof', match: (i, k) => k.ctrl && i === 'd' },
  { label: '↑ ↓', help: 'earlier / later inputs (or move between lines)', command: 'up', match: (i, k) => k.upArrow || (k.ctrl && i === 'p') },
  { label: '', help: '', command: 'down', match: (i, k) => k.downArrow || (k.ctrl && i === 'n') },
  { label: 'alt-← alt-→', help: 'word left / right', command: 'word-left', match: (i, k) => (k.leftArrow && (k.meta || k.ctrl)) || (k.meta && i === 'b') },
  { label: '', help: '', command: 'word-right', match: (i, k) => (k.rightArrow && (k.meta || k.ctrl)) || (k.meta && i === 'f') },
  { label: '← →', help: 'move', command: 'left', match: (i, k) => k.leftArrow || (k.ctrl && i === 'b') },
  { label: '', help: '', command: 'right', match: (i, k) => k.rightArrow || (k.ctrl && i === 'f') },
  { label: 'ctrl-a ctrl-e', help: 'start / end of line', command: 'home', match: (i, k) => k.home || (k.ctrl && i === 'a') },
  { label: '', help: '', command: 'end', match: (i, k) => k.end || (k.ctrl && i === 'e') },
  { label: 'ctrl-w', help: 'erase the word before the cursor', command: 'kill-word', match: (i, k) => (k.ctrl && i === 'w') || (k.meta && k.backspace) },
  { label: 'ctrl-u ctrl-k', help: 'erase to the start / end of the line', command: 'kill-back', match: (i, k) => k.ctrl && i === 'u' },
  { label: '', help: '', command: 'kill-forward', match: (i, k) => k.ctrl && i === 'k' },
  { label: '', help: '', command: 'backspace', match: (_i, k) => k.backspace },
  { label: '', help: '', command: 'delete', match: (_i, k) => k.delete },
];

export function keyCommand(input: string, key: Key): KeyCommand | undefined {
  return CHAT_KEYS.find((k) => k.match(input, key))?.command;
}

export function helpText(): string[] {
  return [
    'Commands:',
    ...SLASH_COMMANDS.map((c) => `  /${`${c.name} ${c.args}`.trim().padEnd(16)} ${c.help}`),
    'Keys:',
    ...CHAT_KEYS.filter((k) => k.label).map((k) => `  ${k.label.padEnd(31)} ${k.help}`),
  ];
}
