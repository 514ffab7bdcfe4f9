// `gateway chat` on a terminal: the transcript prints into <Static> line by line as answers stream
// (so scrollback keeps it), and a small live area holds the unfinished line, the input and the
// footer. One reducer owns the state; this file turns keys into actions and runs the requests.
import { Box, Static, useApp, useInput, usePaste, useStdout, useWindowSize } from 'ink';
import { useCallback, useEffect, useReducer, useRef } from 'react';
import type { Theme } from '../common/theme.js';
import type { ChatClient } from './client.js';
import { helpText, keyCommand, type SlashName } from './commands.js';
import * as ed from './editor.js';
import { chatReducer, EXIT_WINDOW_MS, initialChat, transcript, type ChatState } from './state.js';
import { Footer, InputBox, LiveAnswer, PrintedItem } from './view.js';

export interface ChatAppProps {
  client: ChatClient;
  model: string;
  system?: string | null;
  theme: Theme;
  banner: string;
  /** Checks a model name before /model switches to it; returns why it cannot work, if it cannot. */
  checkModel?: (name: string) => string | undefined;
  /** Remembers the model of a successful answer (the next chat's default). */
  onModelUsed?: (model: string) => void;
  /** Writes /save's file; returns the path written. */
  saveFile: (path: string, content: string) => Promise<string>;
  keyboard?: boolean;
  frameMs?: number;
  now?: () => number;
  width?: number;
  height?: number;
}

const CLEAR_SCREEN = '\x1b[2J\x1b[H';

function columnsOf(ids: string[], width: number, current: string): string[] {
  if (ids.length === 0) return ['  (none)'];
  const w = Math.min(48, Math.max(...ids.map((m) => m.length)) + 4);
  const per = Math.max(1, Math.floor((width - 2) / w));
  const rows: string[] = [];
  for (let i = 0; i < ids.length; i += per) {
    rows.push('  ' + ids.slice(i, i + per).map((m) => `${m === current ? '• ' : '  '}${m}`.padEnd(w)).join('').trimEnd());
  }
  return rows;
}

export function ChatApp(props: ChatAppProps) {
  const { client, theme, frameMs = 50, now = Date.now } = props;
  const [state, dispatch] = useReducer(chatReducer, undefined, () => initialChat({ model: props.model, system: props.system ?? null, banner: props.banner, now: now() }));
  const { exit } = useApp();
  const { write } = useStdout();
  const size = useWindowSize();
  const width = props.width ?? size.columns;
  const height = props.height ?? size.rows;
  const controller = useRef<AbortController | null>(null);
  const pending = useRef('');
  const saved = useRef<string | null>(null);

  const notice = useCallback((text: string, tone: 'info' | 'error' | 'muted' = 'muted') => dispatch({ type: 'notice', text, tone }), []);

  // Run the request for each new stream; deltas are batched and applied once per frame.
  const streamId = state.stream?.id;
  useEffect(() => {
    const st = state.stream;
    if (!st) return;
    const ac = new AbortController();
    controller.current = ac;
    const flush = () => { if (pending.current) { const text = pending.current; pending.current = ''; dispatch({ type: 'delta', text, now: now() }); } };
    const timer = setInterval(() => { if (pending.current) flush(); else dispatch({ type: 'tick', now: now() }); }, frameMs);
    client.stream(st.model, st.messages, (t) => { pending.current += t; }, ac.signal).then(
      (answer) => { flush(); dispatch({ type: 'done', answer, now: now() }); },
      (e: unknown) => { flush(); dispatch(ac.signal.aborted ? { type: 'stopped', now: now() } : { type: 'failed', message: (e as Error).message, now: now() }); },
    ).finally(() => { clearInterval(timer); if (controller.current === ac) controller.current = null; });
    // Leaving the app mid-answer aborts it (and the daemon aborts the provider request).
    return () => { ac.abort(); clearInterval(timer); };
  }, [streamId]);

  useEffect(() => {
    const requested = state.last?.requested;
    if (requested && requested !== saved.current) { saved.current = requested; props.onModelUsed?.(requested); }
  }, [state.last]);

  useEffect(() => {
    if (state.clearScreen === 0) return;
    write(CLEAR_SCREEN);
    dispatch({ type: 'screen_cleared', banner: props.banner });
  }, [state.clearScreen]);

  const busyTask = useCallback(async (label: string, task: () => Promise<void>) => {
    dispatch({ type: 'busy', text: label });
    const timer = setInterval(() => dispatch({ type: 'tick', now: now() }), 100);
    try { await task(); } finally { clearInterval(timer); dispatch({ type: 'busy', text: null }); }
  }, [now]);

  const runSlash = (s: ChatState, name: SlashName, arg: string): void => {
    switch (name) {
      case 'model': {
        if (!arg) { notice(`model: ${s.model} (switch with /model <name>; /models lists them)`); return; }
        const why = props.checkModel?.(arg);
        if (why) { notice(`✗ ${why}`, 'error'); return; }
        dispatch({ type: 'model', model: arg });
        notice(`model: ${arg}${s.turns.length > 0 ? ' (the conversation so far goes with it)' : ''}`, 'info');
        return;
      }
      case 'models':
        void busyTask('fetching the model list…', async () => {
          try {
            const ids = (await client.models()).filter((m) => !arg || m.toLowerCase().includes(arg.toLowerCase()));
            notice([`${ids.length} model${ids.length === 1 ? '' : 's'}${arg ? ` matching "${arg}"` : ''} (• current; switch with /model <name>):`, ...columnsOf(ids, width, s.model)].join('\n'));
          } catch (e) { notice(`✗ ${(e as Error).message}`, 'error'); }
        });
        return;
      case 'system':
        if (!arg) notice(s.system ? `system prompt: ${s.system}` : 'no system prompt (set one with /system <text>)');
        else if (arg === 'off') { dispatch({ type: 'system', text: null }); notice('system prompt removed', 'info'); }
        else { dispatch({ type: 'system', text: arg }); notice(`system prompt set (${arg.length} characters); it applies from the next message`, 'info'); }
        return;
      case 'clear':
        dispatch({ type: 'clear' });
        return;
      case 'save':
        if (!arg) { notice('✗ usage: /save <file>', 'error'); return; }
        void props.saveFile(arg, JSON.stringify(transcript(s, new Date(now())), null, 2) + '\n').then(
          (path) => notice(`saved ${s.turns.length} message${s.turns.length === 1 ? '' : 's'} to ${path}`, 'info'),
          (e: unknown) => notice(`✗ cannot save to ${arg}: ${(e as Error).message}`, 'error'),
        );
        return;
      case 'help':
        notice(helpText().join('\n'));
        return;
      case 'exit':
        dispatch({ type: 'exit' });
        return;
      default: { const never: never = name; return never; }
    }
  };

  // Slash commands run here, against the state that asked for them.
  useEffect(() => {
    if (state.command) runSlash(state, state.command.name, state.command.arg);
  }, [state.command?.seq]);

  useEffect(() => { if (state.stream?.stopping) controller.current?.abort(); }, [state.stream?.stopping]);
  useEffect(() => { if (state.exiting) exit(); }, [state.exiting]);
  useEffect(() => {
    if (state.exitArmedAt === null) return;
    const t = setTimeout(() => dispatch({ type: 'disarm' }), EXIT_WINDOW_MS);
    return () => clearTimeout(t);
  }, [state.exitArmedAt]);

  const edit = (apply: (e: ed.Editor) => ed.Editor): void => dispatch({ type: 'edit', apply });

  useInput((input, key) => {
    const cmd = keyCommand(input, key);
    switch (cmd) {
      case 'submit': dispatch({ type: 'enter', now: now() }); return;
      case 'newline': edit((e) => ed.insert(e, '\n')); return;
      case 'interrupt': dispatch({ type: 'interrupt', now: now() }); return;
      case 'eof': dispatch({ type: 'eof' }); return;
      case 'up': dispatch({ type: 'arrow', dir: -1 }); return;
      case 'down': dispatch({ type: 'arrow', dir: 1 }); return;
      case 'left': edit(ed.left); return;
      case 'right': edit(ed.right); return;
      case 'home': edit(ed.home); return;
      case 'end': edit(ed.end); return;
      case 'word-left': edit(ed.wordLeft); return;
      case 'word-right': edit(ed.wordRight); return;
      case 'backspace': edit(ed.backspace); return;
      case 'delete': edit(ed.deleteForward); return;
      case 'kill-back': edit(ed.killBack); return;
      case 'kill-forward': edit(ed.killForward); return;
      case 'kill-word': edit(ed.killWord); return;
      case undefined: {
        if (!input || key.ctrl || key.meta || key.escape || key.tab) return;
        // Typed ahead faster than we read (or sent by a script): "text⏎" in one chunk is text, then enter.
        const typed = /^([^\r\n]+)\r$/.exec(input);
        edit((e) => ed.insert(e, typed ? typed[1]! : input.replace(/\r\n?/g, '\n')));
        if (typed) dispatch({ type: 'enter', now: now() });
        return;
      }
      default: { const never: never = cmd; return never; }
    }
  }, { isActive: props.keyboard ?? true });

  usePaste((text) => edit((e) => ed.insert(e, text.replace(/\r\n?/g, '\n'))), { isActive: props.keyboard ?? true });

  // Footer (2) + rule (1) + input + status (1) + a spare line: the rest may hold the unfinished line.
  const inputRows = state.input.text.split('\n').length;
  const liveRows = Math.max(1, height - 5 - inputRows);

  return (
    <Box flexDirection="column">
      <Static key={state.printed.gen} items={state.printed.items}>
        {(item, i) => <PrintedItem key={`${state.printed.gen}:${i}`} item={item} theme={theme} width={width} />}
      </Static>
      {state.exiting ? null : (
        <>
          <LiveAnswer state={state} theme={theme} width={width} maxRows={liveRows} />
          <InputBox input={state.input} theme={theme} width={width} dim={Boolean(state.stream)} placeholder="message, or /help" />
          <Footer state={state} theme={theme} width={width} />
        </>
      )}
    </Box>
  );
}

