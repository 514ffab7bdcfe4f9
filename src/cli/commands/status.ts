// `gateway status`: running or not, URL, pid, uptime, requests served, key pools and open circuit
// breakers (GET /admin/status).
// Exit codes follow `systemctl status`, so scripts can test it: 0 running, 3 not running (with
// --json too, which still prints {running:false}), 1 recorded as running but not answering.
import type { Command } from 'commander';
import { CliError, cliStateDir, formatDuration, out, printJson } from '../common.js';
import { adminRequest, findDaemon, type DaemonStatus } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { remoteOf, remoteRequest, type Remote } from '../remote.js';
import { storeHealthText } from '../../daemon/store/store-health.js';

/** `systemctl status`'s code for a unit that is not running. */
export const NOT_RUNNING = 3;

export function registerStatus(program: Command): void {
  program.command('status')
    .description('show whether the gateway runs, its URL, pid, uptime and requests served')
    .option('--json', 'machine-readable output ({running:false} when it does not run)')
    .addHelpText('after', '\nExit status: 0 running, 3 not running (as systemctl status), 1 running but not answering.')
    .action((opts: { json?: boolean }) => status(opts, remoteOf(program)));
}

async function status(opts: { json?: boolean }, remote: Remote | undefined): Promise<void> {
  if (remote) {
    const s = await remoteRequest<DaemonStatus>(remote, 'GET', 'status');
    if (opts.json) printJson({ running: true, answering: true, ...s });
    else printStatus(s);
    return;
  }
  const dir = cliStateDir();
  const d = findDaemon(dir);
  if (!d) {
    if (opts.json) printJson({ running: false });
    else out(`gateway is not running (start it with: ${gatewayCmd('start')})`);
    process.exitCode = NOT_RUNNING;
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
  printStatus(s);
}

function printStatus(s: DaemonStatus): void {
  out(`gateway is running at ${s.url}`);
  out(`  pid       ${s.pid}`);
  out(`  uptime    ${formatDuration(s.uptimeMs)} (since ${s.startedAt})`);
  out(`  requests  ${s.requestsServed} served, ${s.inFlight} in flight`);
  if (s.version) out(`  version   ${s.version}`);
  // Team mode: the shared store (never its password), whether it answers, and this daemon's name in it.
  if (s.store) {
    const st = s.store;
    out(`  store     ${st.display}, ${storeHealthText(st)}${st.connected ? ` (${st.daemons} daemon${st.daemons === 1 ? '' : 's'} alive)` : ''}`);
    if (!st.connected && st.lastError) out(`            ${st.lastError}; serving on this daemon's share of each key's limits`);
    if (st.unreconciled > 0) out(`            ${st.unreconciled} limit settlement${st.unreconciled === 1 ? '' : 's'} made while it was unreachable still to be written back`);
    out(`  daemon id ${st.daemonId}`);
  }
  // Key pools, and any single key that rests or was refused: what requests can use now.
  for (const [provider, keys] of Object.entries(s.keyPools ?? {})) {
    if (keys.length < 2 && keys.every((k) => k.state === 'ok')) continue;
    out(`  keys      ${provider}: ${keys.map((k) => `${k.label} ${k.masked} ${k.state === 'resting' ? `resting until ${new Date(k.until!).toISOString()}` : k.state === 'refused' ? `refused (${k.status})` : 'ok'}`).join(', ')}`);
  }
  // Targets the circuit breaker passes over now: requests go to their fallbacks until then.
  for (const b of s.breakers ?? []) out(`  breaker   ${b.target} open until ${b.until}`);
}
