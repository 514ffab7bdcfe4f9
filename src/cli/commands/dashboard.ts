// `gateway dashboard`: asks the running daemon for a one-time sign-in link and opens it in the
// default browser (or prints it with --no-open, or when there is no browser to open).
import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { CliError, cliStateDir, note, out } from '../common.js';
import { adminRequest, findDaemon } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

interface DashboardOpts { open: boolean }

export function registerDashboard(program: Command): void {
  program.command('dashboard')
    .description('open the local web dashboard (keys, providers, live traffic, usage) with a one-time sign-in link')
    .option('--no-open', 'print the one-time sign-in URL instead of opening a browser')
    .addHelpText('after', '\nThe link signs one browser in, once, within 10 minutes, on this machine. Reached over the network (a gateway\nstarted with --tls-cert or --behind-proxy), the dashboard signs in with an admin key (keys create --admin) instead.')
    .action((opts: DashboardOpts) => dashboard(opts));
}

/** The command that opens a URL here, or undefined when there is no desktop to open it on. */
function opener(url: string, env: NodeJS.ProcessEnv = process.env): { cmd: string; args: string[] } | undefined {
  if (env.BROWSER) return { cmd: env.BROWSER, args: [url] };
  if (process.platform === 'darwin') return { cmd: 'open', args: [url] };
  if (process.platform === 'win32') return { cmd: 'cmd', args: ['/c', 'start', '""', url] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return { cmd: 'xdg-open', args: [url] };
}

/** Resolves true when the opener started and did not fail within a moment. */
function tryOpen(url: string): Promise<boolean> {
  const how = opener(url);
  if (!how) return Promise.resolve(false);
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => { if (!settled) { settled = true; resolve(ok); } };
    const child = spawn(how.cmd, how.args, { detached: true, stdio: 'ignore', windowsVerbatimArguments: process.platform === 'win32' });
    child.once('error', () => done(false));
    child.once('exit', (code) => done(code === 0));
    setTimeout(() => { child.unref(); done(true); }, 1_500).unref();
  });
}

async function dashboard(opts: DashboardOpts): Promise<void> {
  const dir = cliStateDir();
  if (!findDaemon(dir)) throw new CliError(`the gateway is not running; start it first: ${gatewayCmd('start')}`);
  const { url, expiresAt } = await adminRequest<{ url: string; expiresAt: string }>(dir, 'POST', 'dashboard/login');
  const minutes = Math.max(1, Math.round((Date.parse(expiresAt) - Date.now()) / 60_000));
  if (!opts.open) {
    out(url);
    note(`One-time sign-in link: it works once, within ${minutes} minutes.`);
    return;
  }
  if (await tryOpen(url)) {
    out('Opened the dashboard in your browser.');
    note(`If it did not open, visit (once, within ${minutes} minutes): ${url}`);
    return;
  }
  out(url);
  note(`No browser could be opened here; open the link above (it works once, within ${minutes} minutes).`);
}
