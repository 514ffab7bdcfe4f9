// The Live page's event stream: what is in flight now, then every start, first byte, progress and
// finished row (with its cost) as it happens. Events are queued and written on a short timer, so
// a slow browser tab only grows its own bounded queue and never slows a request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UsageRecorder } from '../observe/usage/recorder.js';

const MAX_QUEUE = 5_000;

export function streamLive(req: IncomingMessage, res: ServerResponse, recorder: UsageRecorder): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive',
    'x-content-type-options': 'nosniff', 'x-accel-buffering': 'no',
  });
  res.write(`retry: 2000\n\n`);
  res.write(`event: snapshot\ndata: ${JSON.stringify({ inFlight: recorder.inFlight(), now: Date.now() })}\n\n`);
  let queue: string[] = [];
  let dropped = 0;
  const off = recorder.onLive((ev) => {
    if (queue.length >= MAX_QUEUE) { dropped++; return; }
    queue.push(`data: ${JSON.stringify(ev)}\n\n`);
  });
  const timer = setInterval(() => {
    if (queue.length === 0 && dropped === 0) return;
    if (res.writableNeedDrain) return;
    if (dropped > 0) { res.write(`event: dropped\ndata: ${dropped}\n\n`); dropped = 0; }
    res.write(queue.join(''));
    queue = [];
  }, 100);
  const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
  const stop = () => { clearInterval(timer); clearInterval(ping); off(); };
  res.on('close', stop);
  req.on('close', stop);
}
