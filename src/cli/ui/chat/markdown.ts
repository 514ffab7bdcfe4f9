// Just enough Markdown for a terminal chat, line by line (pure): an answer is cut into complete
// lines as it streams, each line is classified once (fenced code, heading, list item, quote,
// text) and printed for good, so only the unfinished last line is ever redrawn.

export type LineKind = 'fence-open' | 'fence-close' | 'code' | 'heading' | 'bullet' | 'quote' | 'rule' | 'text';

export interface MdLine { kind: LineKind; text: string; lang?: string }

/** Where a streaming answer stands: the unfinished line and whether we are inside a code fence. */
export interface MdCursor { pending: string; fence: string | null; lang: string }

export const MD_START: MdCursor = { pending: '', fence: null, lang: '' };

const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)/;

/** Classifies one complete line given the fence state; returns the new state too. */
export function classifyLine(line: string, fence: string | null, lang: string): { line: MdLine; fence: string | null; lang: string } {
  const f = FENCE.exec(line);
  if (fence !== null) {
    if (f && f[1]!.startsWith(fence[0]!) && f[1]!.length >= fence.length && line.trim() === f[1]) return { line: { kind: 'fence-close', text: '' }, fence: null, lang: '' };
    return { line: { kind: 'code', text: line, lang }, fence, lang };
  }
  if (f) return { line: { kind: 'fence-open', text: '', lang: f[2] ?? '' }, fence: f[1]!, lang: f[2] ?? '' };
  const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (h) return { line: { kind: 'heading', text: h[1]! }, fence, lang };
  const b = /^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$/.exec(line);
  if (b) {
    const marker = /\d/.test(b[2]!) ? b[2]! : '•';
    return { line: { kind: 'bullet', text: `${b[1]}${marker} ${b[3]}` }, fence, lang };
  }
  const q = /^\s{0,3}>\s?(.*)$/.exec(line);
  if (q) return { line: { kind: 'quote', text: q[1]! }, fence, lang };
  if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) return { line: { kind: 'rule', text: '' }, fence, lang };
  return { line: { kind: 'text', text: line }, fence, lang };
}

/** Feeds streamed text; returns the lines it completed and the new cursor. */
export function pushText(c: MdCursor, text: string): { lines: MdLine[]; cursor: MdCursor } {
  const all = c.pending + text.replace(/\r\n?/g, '\n');
  const parts = all.split('\n');
  const pending = parts.pop()!;
  const lines: MdLine[] = [];
  let { fence, lang } = c;
  for (const p of parts) {
    const r = classifyLine(p, fence, lang);
    lines.push(r.line);
    fence = r.fence;
    lang = r.lang;
  }
  return { lines, cursor: { pending, fence, lang } };
}

/** End of the answer: the unfinished line counts, and an unclosed fence is closed. */
export function finishText(c: MdCursor): MdLine[] {
  const lines: MdLine[] = [];
  let { fence, lang } = c;
  if (c.pending !== '') {
    const r = classifyLine(c.pending, fence, lang);
    lines.push(r.line);
    fence = r.fence;
    lang = r.lang;
  }
  if (fence !== null) lines.push({ kind: 'fence-close', text: '' });
  return lines;
}

/** How the unfinished line would look if it ended now (for the live area). */
export function previewLine(c: MdCursor): MdLine {
  return classifyLine(c.pending, c.fence, c.lang).line;
}

export type Span = { text: string; style: 'plain' | 'code' | 'bold' | 'italic' };

/** Inline `code`, **bold** and *italic* / _italic_ spans; anything unmatched stays plain. */
export function inlineSpans(text: string): Span[] {
  const out: Span[] = [];
  const re = /(`+)([^`]+?)\1|\*\*([^*]+)\*\*|__([^_]+)__|(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])|(?<![\w_])_([^_\s][^_]*?)_(?![\w_])/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push({ text: text.slice(last, m.index), style: 'plain' });
    if (m[2] !== undefined) out.push({ text: m[2], style: 'code' });
    else if (m[3] !== undefined || m[4] !== undefined) out.push({ text: (m[3] ?? m[4])!, style: 'bold' });
    else out.push({ text: (m[5] ?? m[6])!, style: 'italic' });
    last = re.lastIndex;
  }
  if (last < text.length) out.push({ text: text.slice(last), style: 'plain' });
  return out;
}
