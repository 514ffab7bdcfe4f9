// Writing an answer the gateway makes itself: a whole JSON body with its length, and the headers
// every event stream it writes carries (the one place they are written).
import type { ServerResponse } from 'node:http';

/** An event stream's headers: never cached, never buffered by a proxy in between. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no',
};

/** Writes `text` as the whole JSON answer; returns its length, for the tracker. */
export function sendJsonText(res: ServerResponse, status: number, text: string, extra: Readonly<Record<string, string>> = {}): number {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
  return text.length;
}

/** Writes `body` as the whole JSON answer; returns the text written. */
export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Readonly<Record<string, string>> = {}): string {
  const text = JSON.stringify(body);
  sendJsonText(res, status, text, extra);
  return text;
}
