// `gateway stop`: asks the daemon to drain and exit (POST /admin/shutdown, SIGTERM as fallback),
// then waits until its process is gone.
import type { Command } from 'commander';
import { CliError, cliStateDir, out } from '../common.js';
import { adminRequest, isPidAlive, readDaemonRecord } from '../daemon-client.js';

/** The daemon drains for up to 10 s and exits by 15 s whatever still hangs (daemon/main.ts): a little more. */
const STOP_TIMEOUT_MS = 17_000;

export function registerStop(program: Command): void {
  program.command('stop')
    .description('stop the gateway daemon: in-flight requests get up to 10 s to finish')
    .action(() => stop());
}

async function stop(): Promise<void> {
  const dir = cliStateDir();
  const rec = readDaemonRecord(dir);
  if (!rec?.alive) {
    out('gateway is not running');
    return;
  }
  try {
    await adminRequest(dir, 'POST', 'shutdown');
  } catch {
    try { process.kill(rec.pid, 'SIGTERM'); } catch { /* already gone */ }
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (isPidAlive(rec.pid)) {
    if (Date.now() > deadline) throw new CliError(`the gateway (pid ${rec.pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s; force it: kill -9 ${rec.pid}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  out(`gateway stopped (pid ${rec.pid})`);
}
