// `gateway status`: running or not, URL, pid, uptime and requests served (GET /admin/status).
import type { Command } from 'commander';
import { CliError, cliStateDir, formatDuration, out, printJson } from '../common.js';
import { adminRequest, findDaemon, type DaemonStatus } from '../daemon-client.js';

export function registerStatus(program: Command): void {
  program.command('status')
    .description('show whether the gateway runs, its URL, pid, uptime and requests served')
    .option('--json', 'machine-readable output ({running:false} when it does not run)')
    .action((opts: { json?: boolean }) => status(opts));
}

async function status(opts: { json?: boolean }): Promise<void> {
  const dir = cliStateDir();
  const d = findDaemon(dir);
  if (!d) {
    if (opts.json) printJson({ running: false });
    else out('gateway is not running (start it with: gateway start)');
    return;
  }
  let s: DaemonStatus;
  try {
    s = await adminRequest<DaemonStatus>(dir, 'GET', 'status');
  } catch (e) {
    if (opts.json) printJson({ running: true, answering: false, pid: d.pid, url: d.url, error: (e as Error).message });
    throw new CliError((e as Error).message);
  }
  if (opts.json) {
    printJson({ running: true, answering: true, ...s });
    return;
  }
  out(`gateway is running at ${s.url}`);
  out(`  pid       ${s.pid}`);
  out(`  uptime    ${formatDuration(s.uptimeMs)} (since ${s.startedAt})`);
  out(`  requests  ${s.requestsServed} served, ${s.inFlight} in flight`);
  if (s.version) out(`  version   ${s.version}`);
}
