// Team mode's usage journal (observe/usage/journal.ts) writes the rows of the requests that ended
// in one event-loop turn in one write, at the end of the turn. Its promise, that a SIGKILL loses
// no row of a request whose client got its answer, then needs each answer's last bytes to leave
// after that write: the server's responses (this ServerResponse) hold their end, and whatever of
// the body res.write still holds corked for this tick, until the journal has written. Every
// request path records its end (tracker.finish/fail, which journals the row) in the same turn it
// ends the response, or earlier, so the write at the turn's end covers it. A stream's earlier
// chunks are not held: only the end that completes the answer.
//
// A request alone in flight when its answer ends (one client at a time) is not held: its answer
// goes, then, in the same synchronous run, its row is built and written at once (appended(), with
// nothing in flight). Its row then trails its answer by those few microseconds, as every row did
// before the journal wrote by turns; holding a lone answer for its row cost one client at a time
// 8 points of throughput here (bench/ab.ts --store --conc 1: 79% of SQLite's req/s held, 88%
// not, 87% before) and ~35 µs at the median, for a window no load makes wider. Not so an answer
// sent after its request's record ended (an error the server's boundary sends, a refusal): its
// row is journaled already and the request no longer counts in flight, so with one other request
// in flight the row waits for the turn's write, and the answer waits with it.
import { ServerResponse, type IncomingMessage } from 'node:http';

type End = (...args: unknown[]) => unknown;
const end = ServerResponse.prototype.end as End;

/** The usage journal as the gate sees it (observe/usage/journal.ts). */
export interface GateJournal {
  /** Rows are journaled and not written yet. */
  readonly unwritten: boolean;
  /** Writes them. */
  flush(): void;
}

export class AnswerGate {
  private journal: GateJournal | undefined;
  private held: Array<{ res: ServerResponse; args: unknown[] }> = [];

  /** The ServerResponse class the server is made with. */
  readonly Response: typeof ServerResponse<IncomingMessage>;

  /** `inFlight`: the tracked requests in flight (one whose end was recorded is not; see the top of this file). */
  constructor(private readonly inFlight: () => number) {
    const gate = this;
    this.Response = class GatedResponse extends ServerResponse<IncomingMessage> {
      endHeld = false;
      override end(...args: unknown[]): this {
        if (this.endHeld) return this; // a second end, as Node takes one: nothing more
        // Alone in flight (or untracked beside one other), no row waiting: it goes now, its row right after (appended()).
        const j = gate.journal;
        if (j === undefined || this.destroyed || (gate.inFlight() <= 1 && !j.unwritten)) return end.apply(this, args) as this;
        this.endHeld = true;
        // Bytes written earlier this tick are still corked (res.write uncorks on the next tick):
        // they wait with the end, which uncorks it all.
        this.socket?.cork();
        gate.hold(this, args);
        return this;
      }
    };
    // A held end is an end to those who ask (a handler checking before it writes more).
    Object.defineProperty(this.Response.prototype, 'writableEnded', {
      get(this: ServerResponse & { endHeld: boolean }) { return this.endHeld || this.finished; },
    });
  }

  /**
   * The answers ended in a turn leave after `journal` wrote that turn's rows. Without one (none
   * yet, or the journal closed), ends are not held.
   */
  waitFor(journal: GateJournal | undefined): void {
    this.journal = journal;
    if (journal === undefined) this.release();
  }

  /**
   * A row was journaled (not written yet). With nothing left in flight every row due is appended:
   * they are written now, and the held answers go (none waits for the rest of the turn).
   */
  appended(): void {
    if (this.inFlight() > 0) return;
    this.journal?.flush();
    this.release();
  }

  private hold(res: ServerResponse, args: unknown[]): void {
    if (this.held.length === 0) setImmediate(this.release);
    this.held.push({ res, args });
  }

  private readonly release = (): void => {
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    this.journal?.flush(); // nothing to write when appended() just wrote
    for (const { res, args } of held) {
      try { end.apply(res, args); } catch (e) { res.destroy(e as Error); }
    }
  };
}
