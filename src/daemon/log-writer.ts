// The daemon's log lines (access lines, warnings) are stamped when they happen but written in
// batches from a timer, never from inside a request: a log on a file or a terminal is written
// synchronously by Node, and one write per request would put disk I/O on the hot path.
// Whatever is queued is written on process exit, so the last lines survive `process.exit`.

export interface BatchedLog {
  log(line: string): void;
  /** Writes everything queued now. */
  flush(): void;
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
      queued += `${new Date().toISOString()} ${line}\n`;
      if (!timer) { timer = setTimeout(flush, intervalMs); timer.unref(); }
    },
    flush,
  };
}
