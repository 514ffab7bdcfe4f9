// Debug body logging (config `usage.logBodies`). Off, none of this runs: the request path checks
// `ctx.bodyLog` once per request and buffers nothing. On, each request's body and the response the
// client received are kept up to the cap, plus a margin so a credential straddling the cut is still
// whole when it is redacted; then redacted, cut to the cap with a note of what was dropped, and
// handed to the sink when the tracker reports the end. Bodies never travel on the event bus.
import type { RequestTracker } from './tracker.js';
import type { BodyRow } from './usage/store.js';

/** Longer than any credential we redact, so one that straddles the cap is captured whole. */
const MARGIN_BYTES = 1024;
export const REDACTED = '[redacted]';

const PROXY_KEY = /sk-proxy-[A-Za-z0-9_-]+/g;
/** A JSON string field whose name says it holds a credential; the value may be cut off at the end. */
const CREDENTIAL_FIELD = /("(?:api[_-]?key|x-api-key|x-goog-api-key|authorization|proxy-authorization)"\s*:\s*)"(?:[^"\\]|\\.)*(?:"|$)/gi;

/** Replaces proxy keys, the given provider keys and credential-named JSON fields with `[redacted]`. */
export function redactCredentials(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so a key that contains another is replaced whole; very short strings are not secrets.
  for (const s of [...secrets].filter((k) => k.length >= 8).sort((a, b) => b.length - a.length)) {
    if (out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return out.replace(PROXY_KEY, REDACTED).replace(CREDENTIAL_FIELD, `$1"${REDACTED}"`);
}

/** The first `keep` bytes of a body, and how many bytes it had in all. */
class CappedBytes {
  private parts: Buffer[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly keep: number) {}

  push(data: Buffer | string): void {
    if (this.kept >= this.keep) { this.total += typeof data === 'string' ? Buffer.byteLength(data) : data.length; return; }
    const b = typeof data === 'string' ? Buffer.from(data) : data;
    this.total += b.length;
    const room = this.keep - this.kept;
    const part = b.length <= room ? b : b.subarray(0, room);
    this.parts.push(Buffer.from(part)); // a copy: never pin a larger chunk in memory
    this.kept += part.length;
  }

  /**
   * The body as kept, not redacted, for a reader that redacts what it takes from it (a trace span's
   * response id); null when there was none, or it was longer than `cap` or than what was kept.
   */
  whole(cap: number): string | null {
    if (this.total === 0 || this.total > cap || this.total > this.kept) return null;
    return (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.kept)).toString('utf8');
  }

  /** Redacted, cut to `cap` bytes with a note of how much was cut; null when there was no body. */
  text(cap: number, secrets: readonly string[]): string | null {
    if (this.total === 0) return null;
    const text = redactCredentials(Buffer.concat(this.parts, this.kept).toString('utf8'), secrets);
    if (this.total <= cap) return text;
    const cut = Buffer.from(text).subarray(0, cap).toString('utf8');
    return `${cut}\n[gateway: cut at ${cap} bytes (usage.bodyCapBytes); the body was ${this.total} bytes, ${this.total - cap} more than the cap]`;
  }
}

/** One request's bodies while it runs. */
export class BodyCapture {
  readonly request: CappedBytes;
  readonly response: CappedBytes;
  constructor(keep: number) {
    this.request = new CappedBytes(keep);
    this.response = new CappedBytes(keep);
  }

  /** Response text or bytes as written to the client. */
  wrote(data: string | Buffer): void { this.response.push(data); }
}

export interface BodyLog {
  /** Starts capturing a request; its bodies are stored when the tracker reports the end. */
  begin(tracker: RequestTracker, requestBody: Buffer | undefined): BodyCapture;
}

export interface BodyLogOptions {
  capBytes: number;
  /** The provider keys held now (read when a request ends, so a reloaded key is redacted too). */
  secrets: () => readonly string[];
  store: (row: BodyRow) => void;
  log?: (line: string) => void;
}

export function createBodyLog(opts: BodyLogOptions): BodyLog {
  let warned = false;
  return {
    begin(tracker, requestBody) {
      const capture = new BodyCapture(opts.capBytes + MARGIN_BYTES);
      if (requestBody) capture.request.push(requestBody);
      tracker.whenDone(() => {
        // Runs inside tracker.finish/fail: whatever goes wrong here must not reach the request.
        try {
          const secrets = opts.secrets();
          opts.store({
            requestId: tracker.id, startedAt: Math.round(Date.now() - tracker.elapsedMs),
            request: capture.request.text(opts.capBytes, secrets), response: capture.response.text(opts.capBytes, secrets),
          });
        } catch (e) {
          if (!warned) { warned = true; opts.log?.(`usage: could not keep a request's bodies: ${(e as Error).message}`); }
        }
      });
      return capture;
    },
  };
}
