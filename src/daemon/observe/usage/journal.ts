// Team mode's promise that a killed daemon loses no usage row. A finished request's row waits in
// memory for its batch (recorder.ts), up to half a second; here it is also appended to a journal
// file. The rows of the requests that end in one event-loop turn go in one write(2), at the end of
// that turn (setImmediate), before any of their answers leaves: the server holds each answer's
// last bytes until then (http/answer-gate.ts; a request alone in flight is written at once, just
// after its answer, as that file says). In the kernel, the rows outlive a SIGKILL (as
// SQLite's WAL commits do; a power cut is another matter); one write per turn instead of one per
// request is most of what the journal saves a busy daemon. The journal is a run of segments: a new
// one each batch tick, and a segment is deleted once every row in it is in usage.db. Rows are
// written in the order they were appended, so "every row of segment k is written" is "the rows
// written (or dropped) number at least those appended up to k's end". A daemon that starts after
// a crash replays what is left, skipping rows usage.db already has.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rm, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { UsageRow } from './store.js';

const PREFIX = 'usage.journal.';

interface Segment { seq: number; path: string }

/** The journal segments in `dir`, oldest first. */
function segments(dir: string): Segment[] {
  let names: string[];
  try { names = readdirSync(dir); } catch { return []; }
  return names.filter((n) => n.startsWith(PREFIX) && /^\d+$/.test(n.slice(PREFIX.length)))
    .map((n) => ({ seq: Number(n.slice(PREFIX.length)), path: join(dir, n) }))
    .sort((a, b) => a.seq - b.seq);
}

/** What a crashed daemon's journal still holds (in `dirs`, in order): its rows, and a function that deletes those segments once they are safe. */
export function readJournal(dirs: string[]): { rows: UsageRow[]; discard(): void } {
  const segs = dirs.flatMap(segments);
  const rows: UsageRow[] = [];
  for (const s of segs) {
    let text: string;
    try { text = readFileSync(s.path, 'utf8'); } catch { continue; }
    for (const line of text.split('\n')) {
      if (!line) continue;
      // A line cut short (a full disk) is skipped; every whole one is a row.
      try { rows.push(JSON.parse(line) as UsageRow); } catch { /* torn */ }
    }
  }
  return { rows, discard: () => { for (const s of segs) rmSync(s.path, { force: true }); } };
}

export class RowJournal {
  private fd: number | undefined;
  private seq: number;
  private lines = 0;
  /** Rows appended since the journal opened. */
  private appended = 0;
  /** Closed segments and the appended count at their end. */
  private readonly closed: Array<{ path: string; end: number }> = [];
  private failed = false;
  /** Rows appended and not written yet (this turn's), as the lines to write. */
  private pending = '';
  private pendingLines = 0;
  /** The end-of-turn write, while one is due. */
  private scheduled: NodeJS.Immediate | undefined;

  /** Starts after any segment already in `dir` (one a failed replay kept). */
  constructor(private readonly dir: string, private readonly log: (line: string) => void = () => {}) {
    try { mkdirSync(dir, { recursive: true, mode: 0o700 }); } catch { /* its first write says why */ }
    this.seq = (segments(dir).at(-1)?.seq ?? 0) + 1;
  }

  private get path(): string { return join(this.dir, `${PREFIX}${this.seq}`); }

  /**
   * On the request path: the row's JSON, written with the others of this turn at its end (flush()).
   * Returns the JSON (the team's usage push sends it as it is).
   */
  append(row: UsageRow): string {
    this.appended++;
    const json = JSON.stringify(row);
    this.pending += `${json}\n`;
    this.pendingLines++;
    this.scheduled ??= setImmediate(this.flushed);
    return json;
  }

  private readonly flushed = (): void => { this.scheduled = undefined; this.flush(); };

  /** Rows are appended and not written yet (the server holds an answer while one is: http/answer-gate.ts). */
  get unwritten(): boolean { return this.pendingLines > 0; }

  /** Writes the rows appended since the last write, in one write. A failure (a full disk) costs durability, never the request. */
  flush(): void {
    // Written before the turn's end (a lone request's row: http/answer-gate.ts): no end-of-turn
    // callback is left due, which would cost one client at a time an extra turn per request.
    if (this.scheduled) { clearImmediate(this.scheduled); this.scheduled = undefined; }
    if (this.pendingLines === 0) return;
    const [text, lines] = [this.pending, this.pendingLines];
    this.pending = '';
    this.pendingLines = 0;
    try {
      this.fd ??= openSync(this.path, 'a', 0o600);
      writeSync(this.fd, text);
      this.lines += lines;
      this.failed = false;
    } catch (e) {
      if (!this.failed) this.log(`usage: could not write the journal in ${this.dir} (${(e as Error).message}); rows wait in memory only until written`);
      this.failed = true;
    }
  }

  /** Starts a new segment (each batch tick), so the rows being written can be let go of as a whole. */
  rotate(): void {
    this.flush();
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    if (this.lines > 0) this.closed.push({ path: this.path, end: this.appended });
    else rmSync(this.path, { force: true });
    this.lines = 0;
    this.seq++;
  }

  /**
   * `done` rows, counted from the first appended, are in usage.db (or were given up): their closed
   * segments go. Unlinked off the event loop: a busy half second's segment is megabytes, whose
   * unlink held every request for about a millisecond (0.8–1.2 ms for 3.5 MB here). One a crash
   * leaves behind is replayed at the next start, its rows skipped as usage.db has them.
   */
  release(done: number): void {
    this.drop(done, (path) => rm(path, { force: true }, (e) => { if (e) this.log(`usage: could not delete the journal segment ${path} (${e.message}); its rows are skipped when it is read again`); }));
  }

  /** Closes the journal; with every row written, nothing of it stays behind (deleted before this returns). */
  close(done: number): void {
    this.rotate();
    this.drop(done, (path) => rmSync(path, { force: true }));
  }

  private drop(done: number, unlink: (path: string) => void): void {
    while (this.closed.length > 0 && this.closed[0]!.end <= done) unlink(this.closed.shift()!.path);
  }
}
