// How the chat looks: transcript items (user turns, Markdown-ish answer lines, notices), the live
// part of a streaming answer, the input with its cursor, and the footer with the last answer's numbers.
import { Box, Text } from 'ink';
import { compact, duration, fit, SPINNER } from '../common/format.js';
import type { Theme } from '../common/theme.js';
import type { Editor } from './editor.js';
import { inlineSpans, previewLine, type MdLine } from './markdown.js';
import type { ChatState, Printed } from './state.js';

export function Inline({ text, theme }: { text: string; theme: Theme }) {
  return (
    <>
      {inlineSpans(text).map((s, i) => {
        switch (s.style) {
          case 'code': return <Text key={i} color={theme.code}>{theme.color ? s.text : `\`${s.text}\``}</Text>;
          case 'bold': return <Text key={i} bold>{s.text}</Text>;
          case 'italic': return <Text key={i} italic>{s.text}</Text>;
          default: return <Text key={i}>{s.text}</Text>;
        }
      })}
    </>
  );
}

export function MdLineView({ line, theme, width }: { line: MdLine; theme: Theme; width: number }) {
  switch (line.kind) {
    case 'fence-open': return <Text color={theme.muted}>{`╭─${line.lang ? ` ${line.lang} ` : ''}${'─'.repeat(Math.max(0, Math.min(20, width - 4 - (line.lang?.length ?? 0))))}`}</Text>;
    case 'fence-close': return <Text color={theme.muted}>{`╰${'─'.repeat(Math.min(22, Math.max(1, width - 2)))}`}</Text>;
    case 'code': return <Text><Text color={theme.muted}>│ </Text><Text color={theme.code}>{line.text || ' '}</Text></Text>;
    case 'heading': return <Text bold color={theme.accent}>{line.text}</Text>;
    case 'bullet': return <Text><Inline text={line.text} theme={theme} /></Text>;
    case 'quote': return <Text><Text color={theme.muted}>▎ </Text><Text italic><Inline text={line.text} theme={theme} /></Text></Text>;
    case 'rule': return <Text color={theme.muted}>{'─'.repeat(Math.min(40, Math.max(1, width - 1)))}</Text>;
    case 'text': return <Text>{line.text === '' ? ' ' : <Inline text={line.text} theme={theme} />}</Text>;
    default: { const never: never = line.kind; return never; }
  }
}

export function PrintedItem({ item, theme, width }: { item: Printed; theme: Theme; width: number }) {
  switch (item.kind) {
    case 'banner': return <Box marginBottom={1}><Text bold color={theme.accent}>{item.text}</Text></Box>;
    case 'user':
      return (
        <Box flexDirection="column">
          {item.text.split('\n').map((l, i) => <Text key={i} bold color={theme.accent}>{`${i === 0 ? '›' : ' '} ${l}`}</Text>)}
          <Text> </Text>
        </Box>
      );
    case 'md': return <MdLineView line={item.line} theme={theme} width={width} />;
    case 'notice': return <Text color={item.tone === 'error' ? theme.error : theme.muted} dimColor={!theme.color && item.tone === 'muted'}>{item.text}</Text>;
    case 'gap': return <Text> </Text>;
    default: { const never: never = item; return never; }
  }
}

/** The streamed answer's unfinished line, its progress and how to stop it. */
export function LiveAnswer({ state, theme, width, maxRows }: { state: ChatState; theme: Theme; width: number; maxRows: number }) {
  const st = state.stream;
  if (!st) {
    if (!state.busy) return null;
    return <Text color={theme.muted}>{`${SPINNER[Math.floor(state.now / 100) % SPINNER.length]} ${state.busy}`}</Text>;
  }
  const line = previewLine(st.md);
  // A very long unfinished line shows its end only; it prints whole once it is finished.
  const room = Math.max(1, maxRows) * Math.max(20, width - 2);
  const shown = line.text.length > room ? { ...line, text: `…${line.text.slice(-room + 1)}` } : line;
  const elapsed = state.now - st.startedAt;
  const status = st.stopping ? 'stopping…'
    : st.firstAt === null ? `waiting for ${st.model}… ${duration(elapsed)}`
    : `${st.model} · ~${compact(st.pieces)} chunks · ${duration(elapsed)}`;
  return (
    <Box flexDirection="column">
      {st.md.pending !== '' ? <MdLineView line={shown} theme={theme} width={width} /> : null}
      <Text color={theme.muted} wrap="truncate">{fit(`${SPINNER[Math.floor(state.now / 100) % SPINNER.length]} ${status}  ·  ctrl-c stops`, width - 1)}</Text>
    </Box>
  );
}

export function InputBox({ input, theme, width, placeholder, dim }: { input: Editor; theme: Theme; width: number; placeholder: string; dim: boolean }) {
  const lines = input.text.split('\n');
  let offset = 0;
  return (
    <Box flexDirection="column">
      <Text color={theme.muted}>{'─'.repeat(Math.max(1, width - 1))}</Text>
      {input.text === '' ? (
        <Text><Text bold color={theme.accent}>› </Text><Text inverse> </Text><Text color={theme.muted} dimColor={!theme.color}>{` ${placeholder}`}</Text></Text>
      ) : lines.map((l, i) => {
        const start = offset;
        offset += l.length + 1;
        const prefix = <Text bold color={theme.accent}>{i === 0 ? '› ' : '  '}</Text>;
        if (input.cursor < start || input.cursor > start + l.length) return <Text key={i} dimColor={dim}>{prefix}{l}</Text>;
        const c = input.cursor - start;
        const ch = l.slice(c, c + 1) || ' ';
        return <Text key={i} dimColor={dim}>{prefix}{l.slice(0, c)}<Text inverse>{ch}</Text>{l.slice(c + 1)}</Text>;
      })}
    </Box>
  );
}

export function Footer({ state, theme, width }: { state: ChatState; theme: Theme; width: number }) {
  const l = state.last;
  let lastText = 'no answer yet';
  if (l) {
    const u = l.usage;
    const out = u?.outputTokens;
    const genMs = l.ttfbMs !== null && l.ms - l.ttfbMs > 50 ? l.ms - l.ttfbMs : l.ms;
    const tps = out !== undefined && genMs > 0 ? ` · ${(out / (genMs / 1000)).toFixed(out / (genMs / 1000) < 10 ? 1 : 0)} tok/s` : '';
    const tokens = u ? `${compact(u.inputTokens)} in / ${compact(u.outputTokens)} out tokens` : 'tokens not reported';
    lastText = `last answer${l.requested === state.model ? '' : ` (${l.requested})`} ${tokens} · ${duration(l.ms)}${tps}`;
  }
  const hints = state.hint ?? 'enter send · shift/alt-enter or \\ newline · ↑↓ history · /help · ctrl-d exit';
  return (
    <Box flexDirection="column">
      <Text wrap="truncate"><Text bold>{state.model}</Text><Text color={theme.muted}>{fit(`  ${lastText}`, Math.max(0, width - 1 - state.model.length))}</Text></Text>
      <Text wrap="truncate" color={state.hint ? theme.warn : theme.muted} dimColor={!theme.color && !state.hint}>{fit(hints, width - 1)}</Text>
    </Box>
  );
}
