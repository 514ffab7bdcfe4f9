// A throwaway PostgreSQL server for the team-mode rows (#22): Debian's `postgresql` package, a fresh
// data directory in a temp folder, trust authentication on a loopback port, pinned to one core and
// removed afterwards. Postgres refuses to run as root, so under root it runs as the `postgres`
// system user the package created (as test/helpers/postgres.ts does for the tests). Its settings
// are the package's defaults (fsync and synchronous commit on), as a team's server would have them;
// `extra` adds server options (bench/profile.ts turns on pg_stat_statements), and so does
// BENCH_PG_OPTIONS, to see what a setting changes (`-c synchronous_commit=off`: what commits' flushes cost).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { log, PIN } from './lib.ts';

export interface BenchPostgres {
  /** `postgres://gw@127.0.0.1:<port>/postgres` */
  url: string;
  /** The server's processes now (postmaster and its backends): for CPU accounting and the interference check. */
  pids(): number[];
  /** Stops it and deletes its data. */
  destroy(): void;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (Debian: apt-get install -y postgresql)');
  return join(root, versions[0]!, 'bin');
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export async function startPostgres(core: number, extra: string[] = []): Promise<BenchPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-pg-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const [, , uid, gid] = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).trim().split(':');
    chownSync(dir, Number(uid), Number(gid));
  }
  // The server inherits the pinning of pg_ctl, which starts it.
  const run = (tool: string, args: string[]) => {
    const argv = [...(asRoot ? ['runuser', '-u', 'postgres', '--'] : []), join(bin, tool), ...args];
    const [cmd, ...rest] = PIN ? ['taskset', '-c', String(core), ...argv] : argv;
    return execFileSync(cmd!, rest, { stdio: 'pipe', timeout: 60_000 });
  };
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'gw', '--no-sync']);
  const port = await freePort();
  const options = [`-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', ...extra, process.env.BENCH_PG_OPTIONS ?? ''].join(' ');
  run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
  log(`PostgreSQL on 127.0.0.1:${port} (pid ${postmaster})`);
  let gone = false;
  const destroy = () => {
    if (gone) return;
    gone = true;
    try { run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']); } catch { /* already stopped */ }
    rmSync(dir, { recursive: true, force: true });
  };
  // However the bench ends (done, failed, Ctrl-C: lib.ts exits on the signal), the server goes too.
  process.on('exit', destroy);
  return { url: `postgres://gw@127.0.0.1:${port}/postgres`, pids: () => [postmaster, ...childrenOf(postmaster)], destroy };
}

/** The live children of `pid` (a postmaster's backends and workers), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch { /* exited */ }
  }
  return out;
}
