// Runs `gateway monitor`: the Ink table on a terminal, or one JSON line per finished request when
// stdout is not a terminal (or with --json). Ink and React are loaded only for the table.
import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { batchedLog } from '../../../daemon/observe/log-writer.js';
import { FILES } from '../../../daemon/store/paths.js';
import { CliError, note } from '../../common.js';
import { findDaemon, notRunningMessage } from '../../daemon-client.js';
import { subscribeEvents, type ConnectionStatus } from '../../events-client.js';
import { themeFor } from '../common/theme.js';
import { createRecordJoiner } from './json.js';
import { gatewayCmd } from '../../invocation.js';

export interface RunMonitorOptions {
  dir: string;
  json?: boolean;
}

export async function runMonitor(opts: RunMonitorOptions): Promise<void> {
  if (opts.json || !process.stdout.isTTY) return runJson(opts.dir);
  const [{ render }, { createElement }, { MonitorApp }] = await Promise.all([import('ink'), import('react'), import('./app.js')]);
  const app = render(
    createElement(MonitorApp, {
      theme: themeFor(process.env),
      keyboard: Boolean(process.stdin.isTTY),
      source: ({ onEvent, onStatus, onStore }) => {
        const sub = subscribeEvents({ dir: opts.dir, onEvent, onStatus, onStore });
        return () => sub.close();
      },
    }),
    { maxFps: 15, exitOnCtrlC: true },
  );
  await app.waitUntilExit();
}

/** One JSON line per request that ends, until interrupted or the reader goes away. */
async function runJson(dir: string): Promise<void> {
  if (!findDaemon(dir)) throw new CliError(notRunningMessage());
  const joinRecord = createRecordJoiner();
  let last: ConnectionStatus['state'] = 'connecting';
  let stopped!: () => void;
  const stop = new Promise<void>((resolve) => { stopped = resolve; });
  const sub = subscribeEvents({
    dir,
    onEvent(ev) {
      const rec = joinRecord(ev);
      if (rec) process.stdout.write(JSON.stringify(rec) + '\n');
    },
    onStatus(s) {
      // Say each change once on stderr; stdout carries only the JSON lines.
      if (s.state === 'connected' && last !== 'connecting' && last !== 'connected') note(`monitor: reconnected to the gateway at ${s.url}`);
      if (s.state === 'disconnected' && last === 'connected') note(`monitor: lost the gateway at ${s.url} (${s.reason}); reconnecting`);
      if (s.state === 'no-daemon' && last === 'connected') note('monitor: the gateway stopped; waiting for it to start again');
      last = s.state;
    },
  });
  process.stdout.on('error', (e: NodeJS.ErrnoException) => { if (e.code === 'EPIPE') stopped(); });
  process.once('SIGINT', stopped);
  process.once('SIGTERM', stopped);
  await stop;
  sub.close();
  await sub.done;
}

/** For `gateway start --foreground` with the monitor on screen: daemon log lines go to daemon.log. */
export function daemonLogFile(dir: string): { path: string; log(line: string): void } {
  const path = join(dir, FILES.log);
  let fd: number | undefined;
  try { fd = openSync(path, 'a', 0o600); } catch { /* the monitor still runs without its log file */ }
  // Batched like the stdout log it replaces; queued lines are written on exit.
  const { log } = batchedLog((text) => { if (fd !== undefined) writeSync(fd, text); });
  return { path, log };
}
