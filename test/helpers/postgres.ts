// A throwaway PostgreSQL server for tests: Debian's `postgresql` package (installed by .ci/run),
// a fresh data directory in a temp folder, trust authentication for one user on a loopback port.
// Postgres refuses to run as root, so under root (sessions and CI) it runs as the `postgres`
// system user the package created.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { closedPort } from './ports.js';

export interface TestPostgres {
  /** `postgres://gw@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** Stops the server (fast shutdown), keeping its data: `start` brings it back on the same port. */
  stop(): void;
  start(): void;
  /** Stops it and deletes its data. */
  destroy(): void;
  /** `pg_dump` of one database (plain SQL), run as the server's tools are. */
  dump(database: string): string;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed (apt-get install -y postgresql; .ci/run does it)');
  return join(root, versions[0]!, 'bin');
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-pg-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const { uid, gid } = pgUser();
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) => {
    const cmd = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    return execFileSync(cmd, argv, { stdio: 'pipe', timeout: 60_000 });
  };
  run('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'gw', '--no-sync']);
  const port = await closedPort();
  const start = () => { run('pg_ctl', ['-D', join(dir, 'data'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', join(dir, 'log'), '-w', 'start']); };
  const stop = () => { run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']); };
  start();
  return {
    url: `postgres://gw@127.0.0.1:${port}/postgres`, port, start, stop,
    dump: (database) => run('pg_dump', ['-h', '127.0.0.1', '-p', String(port), '-U', 'gw', '--no-password', database]).toString('utf8'),
    destroy() {
      try { stop(); } catch { /* already stopped */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pgUser(): { uid: number; gid: number } {
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).trim();
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
