// `gateway logs [-f] [-n 50]`: the tail of daemon.log, optionally followed.
import type { Command } from 'commander';
import { closeSync, openSync, readSync, statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { FILES } from '../../daemon/store/paths.js';
import { CliError, cliStateDir, parsePositiveInt } from '../common.js';
import { gatewayCmd } from '../invocation.js';

export function registerLogs(program: Command): void {
  program.command('logs')
    .description('print the end of the daemon log (daemon.log in the state directory)')
    .option('-n, --lines <n>', 'how many lines', parsePositiveInt, 50)
    .option('-f, --follow', 'keep printing new lines as they are written (Ctrl-C to stop)')
    .action((opts: { lines: number; follow?: boolean }) => logs(opts));
}

function readRange(path: string, start: number, end: number): Buffer {
  const buf = Buffer.alloc(Math.max(0, end - start));
  const fd = openSync(path, 'r');
  try { readSync(fd, buf, 0, buf.length, start); } finally { closeSync(fd); }
  return buf;
}

/** Offset where the last `n` lines begin (reads backwards in blocks, not the whole file). */
function tailOffset(path: string, size: number, n: number): number {
  let pos = size;
  let newlines = 0;
  // A trailing newline ends the last line; it does not start another one.
  if (size > 0 && readRange(path, size - 1, size)[0] === 0x0a) pos = size - 1;
  while (pos > 0) {
    const start = Math.max(0, pos - 65536);
    const block = readRange(path, start, pos);
    for (let i = block.length - 1; i >= 0; i--) {
      if (block[i] === 0x0a && ++newlines === n) return start + i + 1;
    }
    pos = start;
  }
  return 0;
}

async function logs(opts: { lines: number; follow?: boolean }): Promise<void> {
  const path = join(cliStateDir(), FILES.log);
  let size: number;
  try { size = statSync(path).size; } catch {
    throw new CliError(`no daemon log yet (${path}); it is written when the gateway runs in the background: ${gatewayCmd('start')}`);
  }
  process.stdout.write(readRange(path, tailOffset(path, size, opts.lines), size));
  if (!opts.follow) return;
  let offset = size;
  const pump = () => {
    let now: number;
    try { now = statSync(path).size; } catch { return; }
    if (now < offset) offset = 0; // truncated or replaced
    if (now > offset) {
      process.stdout.write(readRange(path, offset, now));
      offset = now;
    }
  };
  try { watch(path, pump); } catch { /* polling below still works */ }
  setInterval(pump, 500);
  await new Promise<never>(() => {});
}
