// The chat's pure parts: the streaming Markdown splitter, the input editor, slash-command parsing
// and the reducer's flows (send, stream, finish, fail, stop, history, multi-line input, exit).
import { describe, expect, it } from 'vitest';
import { parseInput } from '../../src/cli/ui/chat/commands.js';
import * as ed from '../../src/cli/ui/chat/editor.js';
import { finishText, inlineSpans, MD_START, pushText, type MdLine } from '../../src/cli/ui/chat/markdown.js';
import { chatReducer, initialChat, transcript, type Action, type ChatState } from '../../src/cli/ui/chat/state.js';

const T = 1_700_000_000_000;
const start = () => initialChat({ model: 'openai/gpt-5.4', banner: 'hello', now: T });
const run = (actions: Action[], s: ChatState = start()) => actions.reduce(chatReducer, s);
const type = (text: string): Action => ({ type: 'edit', apply: (e) => ed.insert(e, text) });
const enter: Action = { type: 'enter', now: T + 1 };
const printedText = (s: ChatState) => s.printed.items.map((i) => (i.kind === 'md' ? `${i.line.kind}:${i.line.text}` : i.kind === 'notice' || i.kind === 'user' || i.kind === 'banner' ? `${i.kind}:${i.text}` : i.kind));
const answer = (text: string, over: object = {}) => ({ text, model: 'gpt-5.4', usage: { inputTokens: 9, outputTokens: 3 }, finishReason: 'stop', ms: 900, ttfbMs: 100, ...over });

describe('streaming markdown', () => {
  function feed(chunks: string[]): MdLine[] {
    let c = MD_START;
    const out: MdLine[] = [];
    for (const ch of chunks) { const r = pushText(c, ch); out.push(...r.lines); c = r.cursor; }
    return [...out, ...finishText(c)];
  }

  it('prints complete lines only, whatever the chunking, and closes an unclosed fence', () => {
    const text = '# Title\nSome **bold** and `code`.\n\n- a\n2. b\n> quote\n---\n```ts\nconst x = 1;\n\n```\nafter\n```\nopen';
    const whole = feed([text]);
    const bytes = feed([...text]);
    expect(bytes).toEqual(whole);
    expect(whole.map((l) => l.kind)).toEqual(['heading', 'text', 'text', 'bullet', 'bullet', 'quote', 'rule', 'fence-open', 'code', 'code', 'fence-close', 'text', 'fence-open', 'code', 'fence-close']);
    expect(whole[0]!.text).toBe('Title');
    expect(whole[3]!.text).toBe('• a');
    expect(whole[4]!.text).toBe('2. b');
    expect(whole[7]).toMatchObject({ kind: 'fence-open', lang: 'ts' });
    expect(whole[8]).toMatchObject({ kind: 'code', text: 'const x = 1;' });
  });

  it('keeps markdown-looking lines inside code as code', () => {
    expect(feed(['```\n# not a heading\n- not a bullet\n```\n']).map((l) => l.kind)).toEqual(['fence-open', 'code', 'code', 'fence-close']);
  });

  it('splits inline code, bold and italic', () => {
    expect(inlineSpans('use `npm i` **now**, _please_ (a*b*c stays)')).toEqual([
      { text: 'use ', style: 'plain' }, { text: 'npm i', style: 'code' }, { text: ' ', style: 'plain' }, { text: 'now', style: 'bold' },
      { text: ', ', style: 'plain' }, { text: 'please', style: 'italic' }, { text: ' (a*b*c stays)', style: 'plain' },
    ]);
  });
});

describe('input editor', () => {
  it('edits like a shell line', () => {
    let e = ed.at('hello world');
    e = ed.killWord(e);
    expect(e).toEqual({ text: 'hello ', cursor: 6 });
    e = ed.insert(ed.home(e), '> ');
    expect(e).toEqual({ text: '> hello ', cursor: 2 });
    expect(ed.killForward(e)).toEqual({ text: '> ', cursor: 2 });
    expect(ed.backspace(ed.at('héllo 👋'))).toEqual({ text: 'héllo ', cursor: 6 });
    expect(ed.left(ed.at('a👋'))).toEqual({ text: 'a👋', cursor: 1 });
    expect(ed.wordLeft(ed.at('one two  three'))).toMatchObject({ cursor: 9 });
  });

  it('moves between lines of a multi-line input, and says when it is at the edge', () => {
    const e = ed.at('first line\nsecond', 14);
    expect(ed.position(e)).toEqual({ row: 1, col: 3, rows: 2 });
    expect(ed.vertical(e, -1)).toEqual({ text: 'first line\nsecond', cursor: 3 });
    expect(ed.vertical(e, 1)).toBeUndefined();
    expect(ed.vertical(ed.at('x\ny', 0), -1)).toBeUndefined();
  });
});

describe('slash commands', () => {
  it.each([
    ['hello', { kind: 'message', text: 'hello' }],
    ['/model gemini/gemini-3.5-flash', { kind: 'slash', name: 'model', arg: 'gemini/gemini-3.5-flash' }],
    ['/MODELS', { kind: 'slash', name: 'models', arg: '' }],
    ['/system be brief\nand kind', { kind: 'slash', name: 'system', arg: 'be brief\nand kind' }],
    ['/quit', { kind: 'slash', name: 'exit', arg: '' }],
    ['/nope', { kind: 'unknown', word: 'nope' }],
    ['//etc/hosts is a path', { kind: 'message', text: '/etc/hosts is a path' }],
  ])('%j', (text, want) => { expect(parseInput(text)).toEqual(want); });
});

describe('chat reducer', () => {
  it('sends a message with the system prompt and history, prints the answer line by line, keeps the turn', () => {
    let s = run([{ type: 'system', text: 'be brief' }, type('hi'), enter]);
    expect(s.stream?.messages).toEqual([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }]);
    expect(s.input).toEqual(ed.EMPTY);
    s = run([{ type: 'delta', text: 'Hel', now: T + 5 }, { type: 'delta', text: 'lo\n```js\nx', now: T + 6 }], s);
    expect(printedText(s).slice(-3)).toEqual(['user:hi', 'text:Hello', 'fence-open:']);
    expect(s.stream?.md.pending).toBe('x');
    s = run([{ type: 'done', answer: answer('Hello\n```js\nx'), now: T + 9 }], s);
    expect(printedText(s).slice(-3)).toEqual(['code:x', 'fence-close:', 'gap']);
    expect(s.turns.map((t) => [t.role, t.content])).toEqual([['user', 'hi'], ['assistant', 'Hello\n```js\nx']]);
    expect(s.last).toMatchObject({ requested: 'openai/gpt-5.4', model: 'gpt-5.4', usage: { outputTokens: 3 } });
    s = run([type('and then?'), enter], s);
    expect(s.stream?.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('a failed request leaves the conversation as it was and prints one error line; ↑ brings the message back', () => {
    let s = run([type('first'), enter, { type: 'done', answer: answer('ok'), now: T + 2 }, type('second'), enter]);
    s = run([{ type: 'failed', message: 'no openai API key is configured (provider_not_configured, HTTP 503)', now: T + 3 }], s);
    expect(s.stream).toBeNull();
    expect(s.turns.map((t) => t.content)).toEqual(['first', 'ok']);
    expect(printedText(s)).toContain('notice:✗ no openai API key is configured (provider_not_configured, HTTP 503)');
    s = run([{ type: 'arrow', dir: -1 }], s);
    expect(s.input.text).toBe('second');
  });

  it('ctrl-c stops a stream (the partial answer is kept), clears a line, and exits only when pressed twice', () => {
    let s = run([type('tell me'), enter, { type: 'delta', text: 'Once upon', now: T + 2 }, { type: 'interrupt', now: T + 3 }]);
    expect(s.stream?.stopping).toBe(true);
    s = run([{ type: 'stopped', now: T + 4 }], s);
    expect(s.turns.at(-1)).toMatchObject({ role: 'assistant', content: 'Once upon', stopped: true });
    expect(printedText(s).slice(-3)).toEqual(['text:Once upon', 'notice:(stopped)', 'gap']);
    s = run([type('draft'), { type: 'interrupt', now: T + 10 }], s);
    expect(s.input.text).toBe('');
    s = run([{ type: 'interrupt', now: T + 20 }], s);
    expect(s.exiting).toBe(false);
    expect(s.hint).toMatch(/again to exit/);
    expect(run([{ type: 'interrupt', now: T + 5000 }], s).exiting).toBe(false);
    expect(run([{ type: 'interrupt', now: T + 500 }], s).exiting).toBe(true);
  });

  it('a stop before the first token drops the unanswered message', () => {
    const s = run([type('hello'), enter, { type: 'interrupt', now: T + 2 }, { type: 'stopped', now: T + 3 }]);
    expect(s.turns).toEqual([]);
  });

  it('multi-line input: a trailing backslash continues, enter inside a stream only hints', () => {
    let s = run([type('line one\\'), enter]);
    expect(s.input).toEqual({ text: 'line one\n', cursor: 9 });
    s = run([type('line two'), enter], s);
    expect(s.stream?.userText).toBe('line one\nline two');
    s = run([type('too soon'), enter], s);
    expect(s.hint).toMatch(/still streaming/);
    expect(s.input.text).toBe('too soon');
    expect(s.turns).toHaveLength(1);
  });

  it('walks the input history with ↑/↓ and restores the draft', () => {
    let s = run([type('/model a'), enter, type('/model b'), enter, type('dra')]);
    s = run([{ type: 'arrow', dir: -1 }], s);
    expect(s.input.text).toBe('/model b');
    s = run([{ type: 'arrow', dir: -1 }, { type: 'arrow', dir: -1 }], s);
    expect(s.input.text).toBe('/model a');
    s = run([{ type: 'arrow', dir: 1 }, { type: 'arrow', dir: 1 }], s);
    expect(s.input.text).toBe('dra');
  });

  it('slash commands are handed to the app; unknown ones print an error; ctrl-d exits on an empty line', () => {
    let s = run([type('/model gemini-3.5-flash'), enter]);
    expect(s.command).toEqual({ seq: 1, name: 'model', arg: 'gemini-3.5-flash' });
    s = run([type('/frobnicate'), enter], s);
    expect(printedText(s).at(-1)).toBe('notice:✗ unknown command /frobnicate; /help lists them');
    expect(run([type('x'), { type: 'eof' }], s).exiting).toBe(false);
    expect(run([{ type: 'eof' }], s).exiting).toBe(true);
  });

  it('/clear forgets the conversation and starts a new screen; the transcript has what was said', () => {
    let s = run([{ type: 'system', text: 'sys' }, type('q'), enter, { type: 'done', answer: answer('a'), now: T + 2 }]);
    const t = transcript(s, new Date(T)) as { messages: Array<{ role: string; content: string; usage?: unknown }>; model: string };
    expect(t.model).toBe('openai/gpt-5.4');
    expect(t.messages.map((m) => [m.role, m.content])).toEqual([['system', 'sys'], ['user', 'q'], ['assistant', 'a']]);
    expect(t.messages[2]!.usage).toEqual({ inputTokens: 9, outputTokens: 3 });
    s = run([{ type: 'clear' }], s);
    expect(s.turns).toEqual([]);
    expect(s.system).toBe('sys');
    expect(s.printed).toEqual({ gen: 1, items: [] });
    s = run([{ type: 'screen_cleared', banner: 'hello' }], s);
    expect(printedText(s)).toEqual(['banner:hello']);
  });
});
