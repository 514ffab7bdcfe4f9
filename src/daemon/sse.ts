// One incremental Server-Sent Events parser for every upstream, and the writer for our own streams.
// The parser is byte-split safe: events may arrive cut anywhere, including inside a UTF-8
// character or between `\r` and `\n` (Gemini separates events with `\r\n\r\n`).
import { StringDecoder } from 'node:string_decoder';
import type { SseEvent } from '../providers/types.js';

export class SseParser {
  private decoder = new StringDecoder('utf8');
  private buf = '';
  private event: string | undefined;
  private data: string[] = [];
  private pendingCR = false;

  /** Feed raw bytes; returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer);
    if (this.pendingCR) {
      // A `\r` ended the previous chunk: a `\n` right after it belongs to the same line break.
      if (text.startsWith('\n')) text = text.slice(1);
      this.pendingCR = false;
    }
    this.buf += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.buf.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < this.buf.length) { if (this.buf.charCodeAt(i + 1) === 10) i++; }
        else this.pendingCR = true;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  /** End of input: a final event without its blank line still counts (Gemini closes that way). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.buf + this.decoder.end();
    this.buf = '';
    if (rest.length > 0) this.line(rest, out);
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0 || this.event !== undefined) {
        if (this.data.length > 0) out.push(this.event === undefined ? { data: this.data.join('\n') } : { event: this.event, data: this.data.join('\n') });
        this.data = [];
        this.event = undefined;
      }
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' comment */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/** Serialises one `data:` event (OpenAI style: no `event:` line). */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_DONE = 'data: [DONE]\n\n';
