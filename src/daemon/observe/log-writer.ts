// The daemon's log lines (access lines, warnings) are stamped when they happen but written in
// batches from a timer, never from inside a request: a log on a file or a terminal is written
// synchronously by Node, and one write per request would put disk I/O on the hot path.
// Whatever is queued is written on process exit, so the last lines survive `process.exit`.

export interface BatchedLog {
  log(line: string): void;
  /** Writes everything queued now. */
  flush(): void;
}

/** `2026-11-22T12:00:00.123Z` for now; the part up to the second is formatted once per second. */
let stampSecond = -1;
let stampPrefix = '';
function stamp(): string {
  const ms = Date.now();
  const second = Math.floor(ms / 1000);
  if (second !== stampSecond) { stampSecond = second; stampPrefix = new Date(second * 1000).toISOString().slice(0, 20); }
  const frac = ms - second * 1000;
  return `${stampPrefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
}

export function batchedLog(sink: (text: string) => void, intervalMs = 50): BatchedLog {
  let queued = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) { clearTimeout(timer); timer = undefined; }
    if (queued === '') return;
    const text = queued;
    queued = '';
    try { sink(text); } catch { /* disk full or a closed terminal: keep serving */ }
  };
  process.on('exit', flush);
  return {
    log(line) {
      queued += `${stamp()} ${line}\n`;
      if (!timer) { timer = setTimeout(flush, intervalMs); timer.unref(); }
    },
    flush,
  };
}
