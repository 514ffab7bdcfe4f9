// `gateway start`: the daemon in the background (detached, output appended to daemon.log), or
// attached with --foreground. Waits until /healthz answers, then prints the URL.
import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureStateDir, FILES } from '../../daemon/store/paths.js';
import { CliError, cliStateDir, note, out, parsePort, parsePositiveSeconds } from '../common.js';
import { configuredPort, DEFAULT_HOST, healthy, readDaemonRecord } from '../daemon-client.js';
import { describeOwner, findPortOwner } from '../port-owner.js';
import { gatewayCmd } from '../invocation.js';
import { exposureProblem, isLoopback, parseProxyAddresses } from '../../daemon/http/exposure.js';
import { parseStoreUrl, redact, STORE_ENV } from '../../daemon/store/store-url.js';

interface StartOpts {
  port?: number; host: string; foreground?: boolean; upstreamTimeout?: number; monitor?: boolean;
  tlsCert?: string; tlsKey?: string; behindProxy?: string; store?: string;
}

/** How the daemon is reached beyond loopback: its own TLS, a reverse proxy in front, both or neither. */
interface NetOpts { tls?: { certFile: string; keyFile: string }; behindProxy?: string[] }

const READY_TIMEOUT_MS = 10_000;
const POLL_MS = 50;

export function registerStart(program: Command): void {
  program.command('start')
    .description('start the gateway daemon in the background and print its URL')
    .option('-p, --port <port>', 'port to listen on (default: $GATEWAY_PORT, else 8080; 0 picks a free one)', parsePort)
    .option('--host <host>', 'address to listen on', DEFAULT_HOST)
    .option('--foreground', 'run attached to this terminal, logging to stdout; Ctrl-C drains and stops it')
    .option('--no-monitor', 'with --foreground on a terminal: print log lines instead of showing the live monitor')
    .option('--upstream-timeout <seconds>', 'how long to wait for a provider\'s response headers (default: $GATEWAY_UPSTREAM_TIMEOUT, else config upstreamTimeoutSeconds, else 600)', parsePositiveSeconds)
    .option('--tls-cert <file>', 'serve HTTPS with this PEM certificate (its chain after it); with --tls-key')
    .option('--tls-key <file>', 'the PEM private key of --tls-cert')
    .option('--behind-proxy <address>', 'the IP address of the TLS-terminating reverse proxy in front (comma-separated for several): its X-Forwarded-For/-Proto are believed, nobody else\'s')
    .option('--store <url>', `team mode: keep keys, limits, usage and conversations in this PostgreSQL database (postgres://user:password@host:5432/db), shared with every daemon pointed at it (default: $${STORE_ENV}, else config.json store.url)`)
    .addHelpText('after', `\nIn the background, the daemon's output goes to daemon.log in the state directory (${gatewayCmd('logs')}).
Listening beyond loopback (--host 0.0.0.0, a LAN address, ::) needs --tls-cert and --tls-key, or
--behind-proxy: the gateway is never served to other machines in plain HTTP.`)
    .action((opts: StartOpts) => start(opts));
}

function upstreamTimeout(opts: StartOpts): number | undefined {
  if (opts.upstreamTimeout !== undefined) return opts.upstreamTimeout;
  const v = process.env.GATEWAY_UPSTREAM_TIMEOUT;
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`GATEWAY_UPSTREAM_TIMEOUT must be a positive number of seconds, got "${v}"`);
  return n;
}

async function portTaken(host: string, port: number): Promise<CliError> {
  const owner = await findPortOwner(port);
  return new CliError(`port ${port} on ${host} is already in use by ${describeOwner(owner)}; stop it or pick another port: ${gatewayCmd(`start --port ${port === 8080 ? 8081 : port + 1}`)}`);
}

/** Exit 0 when a healthy daemon is already recorded; an error when one is recorded but mute. */
async function alreadyRunning(dir: string): Promise<boolean> {
  const rec = readDaemonRecord(dir);
  if (!rec?.alive) return false;
  if (await healthy(rec, 2_000)) {
    out(`gateway is already running at ${rec.url} (pid ${rec.pid})`);
    return true;
  }
  throw new CliError(`a gateway (pid ${rec.pid}) is recorded at ${rec.url} but does not answer; see ${gatewayCmd('logs')}, or stop it: ${gatewayCmd('stop')}`);
}

/** The TLS and proxy flags, checked together with --host before anything starts; a usage error otherwise. */
function netOpts(opts: StartOpts): NetOpts {
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) throw new CliError('--tls-cert and --tls-key go together: give both, the certificate and its private key', 2);
  const net: NetOpts = {};
  if (opts.tlsCert !== undefined && opts.tlsKey !== undefined) net.tls = { certFile: resolve(opts.tlsCert), keyFile: resolve(opts.tlsKey) };
  if (opts.behindProxy !== undefined) {
    try { net.behindProxy = parseProxyAddresses(opts.behindProxy); } catch (e) { throw new CliError((e as Error).message, 2); }
  }
  const problem = exposureProblem({ host: opts.host, tls: net.tls !== undefined, proxies: net.behindProxy ?? [] });
  if (problem) throw new CliError(problem, 2);
  return net;
}

async function start(opts: StartOpts): Promise<void> {
  const net = netOpts(opts);
  if (opts.store !== undefined) {
    let store;
    try { store = parseStoreUrl(opts.store); } catch (e) { throw new CliError((e as Error).message, 2); }
    // Handed on in the environment, never in a command line that `ps` shows with its password.
    process.env[STORE_ENV] = opts.store;
    // This process's own command line holds it too, and `start --foreground` is the daemon, for as
    // long as it runs: the title (what ps and /proc/<pid>/cmdline show) is rewritten without it.
    process.title = process.argv.map((a) => redact(a, store)).join(' ');
  }
  const dir = ensureStateDir(cliStateDir());
  const port = opts.port ?? configuredPort(process.env);
  const timeout = upstreamTimeout(opts);
  if (await alreadyRunning(dir)) return;
  if (!isLoopback(opts.host)) {
    note(`WARNING: listening on ${opts.host} makes the gateway reachable from other machines; anyone with a proxy key can spend your provider credits`);
  }
  if (opts.foreground) return runForeground(dir, opts.host, port, timeout, net, opts.monitor !== false && Boolean(process.stdout.isTTY));
  return runBackground(dir, opts.host, port, timeout, net);
}

async function runForeground(dir: string, host: string, port: number, timeout: number | undefined, net: NetOpts, monitor = false): Promise<void> {
  const { runDaemon } = await import('../../daemon/main.js');
  // On a terminal the live monitor takes the screen, so log lines go to daemon.log instead.
  const ui = monitor ? await import('../ui/monitor/run.js') : undefined;
  const logFile = ui?.daemonLogFile(dir);
  let daemon;
  try {
    daemon = await runDaemon({ host, port, stateDir: dir, ...net, ...(timeout !== undefined ? { upstreamTimeoutSeconds: timeout } : {}), ...(logFile ? { log: logFile.log } : {}) });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw await portTaken(host, port);
    throw e;
  }
  if (ui && logFile) {
    note(`gateway running at ${daemon.url} (pid ${process.pid}); log: ${logFile.path}; q or Ctrl-C stops it`);
    await ui.runMonitor({ dir });
    note('stopping: draining in-flight requests (up to 10 s)');
    await daemon.close();
    return;
  }
  // The daemon owns the process from here: it exits itself on SIGTERM/SIGINT or /admin/shutdown.
  await new Promise<never>(() => {});
}

function errorLineSince(logPath: string, offset: number): string | undefined {
  try {
    const text = readFileSync(logPath).subarray(offset).toString('utf8');
    const lines = text.split('\n').filter((l) => l.startsWith('error: '));
    return lines.at(-1)?.slice('error: '.length);
  } catch {
    return undefined;
  }
}

async function runBackground(dir: string, host: string, port: number, timeout: number | undefined, net: NetOpts): Promise<void> {
  const logPath = join(dir, FILES.log);
  const fd = openSync(logPath, 'a', 0o600);
  const offset = fstatSync(fd).size;
  const mainJs = fileURLToPath(new URL('../main.js', import.meta.url));
  const args = [mainJs, 'start', '--foreground', '--port', String(port), '--host', host];
  if (timeout !== undefined) args.push('--upstream-timeout', String(timeout));
  if (net.tls) args.push('--tls-cert', net.tls.certFile, '--tls-key', net.tls.keyFile);
  if (net.behindProxy) args.push('--behind-proxy', net.behindProxy.join(','));
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', fd, fd], env: process.env });
  closeSync(fd);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  child.on('error', (e) => { exited = { code: null, signal: null }; note(`error starting the daemon: ${e.message}`); });

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) {
      const reason = errorLineSince(logPath, offset);
      throw new CliError(reason ?? `the daemon exited at once (${exited.signal ?? `code ${exited.code}`}); see: ${gatewayCmd('logs')}`);
    }
    const rec = readDaemonRecord(dir);
    if (rec && rec.pid === child.pid && (await healthy(rec, 500))) {
      child.unref();
      out(`gateway running at ${rec.url} (pid ${rec.pid})`);
      note(`logs: ${gatewayCmd('logs -f')}   stop: ${gatewayCmd('stop')}`);
      return;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  child.kill('SIGTERM');
  throw new CliError(`the daemon did not answer /healthz within ${READY_TIMEOUT_MS / 1000} s and was stopped; see: ${gatewayCmd('logs')}`);
}
