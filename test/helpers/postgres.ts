// A throwaway PostgreSQL server for tests: Debian's `postgresql` package (installed by .ci/run),
// a fresh data directory in a temp folder on a loopback port. TCP connections need the password
// (scram-sha-256), as on a real team box, so that a test can show no password ever leaks into
// output or logs; the set-up's own tools come in through the Unix socket without one.
// Postgres refuses to run as root, so under root (sessions and CI) it runs as the `postgres`
// system user the package created.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closedPort } from './ports.js';

export interface TestPostgres {
  /** `postgres://gw:<password>@127.0.0.1:<port>/postgres` */
  url: string;
  /** The password of user `gw` (in `url`). */
  password: string;
  port: number;
  /** Creates database `name` (letters, digits, _) and returns its URL. */
  database(name: string): Promise<string>;
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
  // Letters and digits only: it goes into a URL as it is.
  const password = randomBytes(18).toString('base64url').replace(/[-_]/g, 'x');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) {
    const { uid, gid } = pgUser();
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  const run = (tool: string, args: string[]) => {
    const cmd = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    return execFileSync(cmd, argv, { stdio: 'pipe', timeout: 60_000 });
  };
  run('initdb', ['-D', join(dir, 'data'), '--auth-host=scram-sha-256', '--auth-local=trust', '-U', 'gw', `--pwfile=${pwfile}`, '--no-sync']);
  rmSync(pwfile);
  const port = await closedPort();
  const start = () => { run('pg_ctl', ['-D', join(dir, 'data'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', join(dir, 'log'), '-w', 'start']); };
  const stop = () => { run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']); };
  start();
  const url = `postgres://gw:${password}@127.0.0.1:${port}/postgres`;
  return {
    url, password, port, start, stop,
    // Over the Unix socket, where the server trusts its own user (TCP needs the password).
    dump: (database) => run('pg_dump', ['-h', dir, '-p', String(port), '-U', 'gw', '--no-password', database]).toString('utf8'),
    async database(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try { await admin.query(`CREATE DATABASE ${name}`); } finally { await admin.end(); }
      return url.replace(/\/postgres$/, `/${name}`);
    },
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
