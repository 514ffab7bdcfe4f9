// One incremental Server-Sent Events parser for every upstream, and the writer for our own streams.
// The parser is byte-split safe: events may arrive cut anywhere, including inside a UTF-8
// character or between `\r` and `\n` (Gemini separates events with `\r\n\r\n`).
import { StringDecoder } from 'node:string_decoder';
import type { SseEvent } from '../../providers/types.js';

export class SseParser {
  private decoder = new StringDecoder('utf8');
  /** The start of a line not yet ended. */
  private buf = '';
  private event: string | undefined;
  /** The event's `data` lines so far, joined by `\n`. */
  private data: string | undefined;
  private pendingCR = false;

  /** Feed raw bytes; returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer);
    if (this.pendingCR && text !== '') {
      // A `\r` ended the previous chunk: a `\n` right after it belongs to the same line break.
      if (text.charCodeAt(0) === 10) text = text.slice(1);
      this.pendingCR = false;
    }
    const out: SseEvent[] = [];
    const s = this.buf === '' ? text : this.buf + text;
    // Line ends are found with indexOf (native), not a loop over every character: this runs once
    // per upstream chunk, long before V8 optimises it, so each interpreted step counts.
    let start = 0;
    let lf = s.indexOf('\n', this.buf.length); // the kept start of a line holds no line break
    let cr = s.indexOf('\r', this.buf.length);
    while (lf !== -1 || cr !== -1) {
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        this.line(s, start, lf, out);
        start = lf + 1;
      } else {
        this.line(s, start, cr, out);
        if (cr + 1 === s.length) this.pendingCR = true;
        start = s.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      }
      if (lf !== -1 && lf < start) lf = s.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = s.indexOf('\r', start);
    }
    this.buf = start === 0 ? s : s.slice(start);
    return out;
  }

  /** End of input: a final event without its blank line still counts (Gemini closes that way). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.buf + this.decoder.end();
    this.buf = '';
    if (rest.length > 0) this.line(rest, 0, rest.length, out);
    this.line('', 0, 0, out);
    return out;
  }

  /** One line, `s` from `start` to `end` (exclusive). */
  private line(s: string, start: number, end: number, out: SseEvent[]): void {
    if (start === end) {
      if (this.data !== undefined) out.push(this.event === undefined ? { data: this.data } : { event: this.event, data: this.data });
      this.data = undefined;
      this.event = undefined;
      return;
    }
    if (s.charCodeAt(start) === 58 /* ':' comment */) return;
    let colon = s.indexOf(':', start);
    if (colon === -1 || colon > end) colon = end;
    let from = colon + 1;
    if (from < end && s.charCodeAt(from) === 32) from++;
    const value = from < end ? s.slice(from, end) : '';
    if (colon - start === 4 && s.startsWith('data', start)) this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (colon - start === 5 && s.startsWith('event', start)) this.event = value;
  }
}

/** Serialises one `data:` event (OpenAI style: no `event:` line). */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';

/** A stream whose events' data are rewritten one by one (`edit` returns null to drop one); only data lines are kept. */
export function rewriteEvents(edit: (data: string) => string | null): { push(chunk: Buffer): string; end(): string } {
  const parser = new SseParser();
  const text = (events: SseEvent[]): string => {
    let out = '';
    for (const ev of events) {
      const data = edit(ev.data);
      if (data !== null) out += `data: ${data}\n\n`;
    }
    return out;
  };
  return { push: (chunk) => text(parser.push(chunk)), end: () => text(parser.end()) };
}
