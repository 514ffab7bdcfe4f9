// A whole HTTP response as a test reads it: status, headers, the body as text, and as JSON when it is JSON.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

export interface ReadResponse { status: number; headers: IncomingHttpHeaders; text: string; json: unknown }

/** Reads `res` to its end, then hands it to `done`. */
export function readResponse(res: IncomingMessage, done: (r: ReadResponse) => void): void {
  const parts: Buffer[] = [];
  res.on('data', (c: Buffer) => parts.push(c));
  res.on('end', () => {
    const text = Buffer.concat(parts).toString('utf8');
    let json: unknown;
    try { json = JSON.parse(text); } catch { json = undefined; }
    done({ status: res.statusCode ?? 0, headers: res.headers, text, json });
  });
}
