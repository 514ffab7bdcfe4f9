// `gateway start --store …` against a real PostgreSQL that takes a password: a store the daemon
// cannot use is a clear one-line error at start, in the background and in the foreground, with a
// non-zero exit, no daemon.json and nothing listening; `status` and `doctor` show the store
// (user@host:port/database, never its password), whether it is connected, and the daemon's name;
// and no output or log line ever holds the password.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from '../../src/daemon/store/pg-schema.js';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { closedPort } from '../helpers/ports.js';
import { startStallProxy, type StallProxy } from '../helpers/stall-proxy.js';
import { until } from '../helpers/wait.js';

let postgres: TestPostgres;
let newer: string;
/** A server that takes the connection and never answers (a partition, a hung host). */
let silent: StallProxy;
beforeAll(async () => {
  postgres = await startPostgres();
  silent = await startStallProxy(postgres.port);
  silent.freeze();
  newer = await postgres.database('newer');
  const c = new pg.Client({ connectionString: newer });
  await c.connect();
  await c.query('CREATE TABLE gateway_schema (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
  await c.query("INSERT INTO gateway_schema (version, description) VALUES (99, 'from a later gateway')");
  await c.end();
}, 120_000);
afterAll(async () => {
  await silent?.close();
  postgres?.destroy();
});

// Never the user's keychain: a bus that does not exist.
const ENV = (home: string) => ({ GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home, 'no-bus-here')}` });

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/** What a user sees of a run: its output and the daemon's log (store-url keeps the URL, 0600, by design). */
function everything(r: CliResult, home: string): string {
  const log = join(home, 'daemon.log');
  return [r.stdout, r.stderr, existsSync(log) ? readFileSync(log, 'utf8') : ''].join('\n');
}


describe('a store the daemon cannot use stops the start with one line', () => {
  const cases: Array<{ name: string; url: () => Promise<string>; error: () => RegExp; wrong?: string }> = [
    { name: 'a malformed URL', url: async () => `postgres//gw:${postgres.password}@db.example`, error: () => /^error: the store URL is not a URL; it takes the form postgres:\/\/user:password@host:5432\/database$/ },
    { name: 'another database engine', url: async () => `mysql://gw:${postgres.password}@127.0.0.1/app`, error: () => /^error: the store URL must start with postgres:\/\/ \(got mysql:\/\/…\); only PostgreSQL is supported as a shared store$/ },
    { name: 'an unreachable server', url: async () => `postgres://gw:${postgres.password}@127.0.0.1:${await closedPort()}/postgres`, error: () => /^error: the store at gw@127\.0\.0\.1:\d+\/postgres: connection refused \(is PostgreSQL running there\?\)$/ },
    { name: 'a server that never answers', url: async () => postgres.url.replace(`:${postgres.port}/`, `:${silent.port}/`), error: () => /^error: the store at gw@127\.0\.0\.1:\d+\/postgres: the connection timed out$/ },
    { name: 'wrong credentials', wrong: 'not-the-Passw0rd', url: async () => postgres.url.replace(postgres.password, 'not-the-Passw0rd'), error: () => new RegExp(`^error: the store at gw@127\\.0\\.0\\.1:${postgres.port}/postgres: it refused the credentials \\(password authentication failed for user "gw"\\)$`) },
    { name: 'a missing database', url: async () => postgres.url.replace(/\/postgres$/, '/nosuchdb'), error: () => /^error: the store at gw@127\.0\.0\.1:\d+\/nosuchdb: database "nosuchdb" does not exist; create it first \(createdb\)$/ },
    { name: 'a database of a newer schema', url: async () => newer, error: () => new RegExp(`^error: the store at gw@127\\.0\\.0\\.1:\\d+/newer: the store has schema version 99, newer than this gateway understands \\(${PG_SCHEMA_VERSION}\\); upgrade model-gateway$`) },
  ];
  for (const c of cases) {
    for (const how of ['background', 'foreground', 'GATEWAY_STORE_URL'] as const) {
      it(`${c.name} (${how})`, async () => {
        const home = makeTempHome('gateway-store-');
        try {
          const url = await c.url();
          const port = await closedPort();
          const args = ['start', '--port', String(port), ...(how === 'foreground' ? ['--foreground'] : []), ...(how === 'GATEWAY_STORE_URL' ? [] : ['--store', url])];
          const r = await runCli(args, { home: home.dir, env: { ...ENV(home.dir), ...(how === 'GATEWAY_STORE_URL' ? { GATEWAY_STORE_URL: url } : {}) } });
          expect(r.code, r.stderr).not.toBe(0);
          expect(r.stdout).toBe('');
          expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
          expect(r.stderr.trimEnd()).toMatch(c.error());
          expect(existsSync(join(home.dir, 'daemon.json'))).toBe(false);
          expect(existsSync(join(home.dir, 'store-url'))).toBe(false);
          expect(await listening(port)).toBe(false);
          const seen = everything(r, home.dir);
          expect(seen).not.toContain(postgres.password);
          if (c.wrong) expect(seen).not.toContain(c.wrong);
        } finally {
          home.cleanup();
        }
      });
    }
  }
});

describe('status and doctor show the store, and whether it is connected', () => {
  let home: ReturnType<typeof makeTempHome>;
  let url: string;
  const cli = (args: string[]) => runCli(args, { home: home.dir, env: ENV(home.dir), timeoutMs: 30_000 });
  beforeAll(async () => { home = makeTempHome('gateway-store-'); url = await postgres.database('team_status'); });
  afterAll(async () => { await cli(['stop']).catch(() => undefined); home.cleanup(); });

  it('connected, then degraded while PostgreSQL is stopped, then connected again; the password nowhere', async () => {
    const started = await cli(['start', '--port', '0', '--store', url]);
    expect(started.code, started.stderr).toBe(0);
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(started.stdout)![1]);
    const display = `gw@127.0.0.1:${postgres.port}/team_status`;

    const text = await cli(['status']);
    expect(text.stdout).toContain(`  store     ${display}, connected (1 daemon alive)\n`);
    expect(text.stdout).toContain(`  daemon id ${hostname()}:${port}\n`);
    const json = JSON.parse((await cli(['status', '--json'])).stdout) as { store: unknown };
    expect(json.store).toEqual({ display, daemonId: `${hostname()}:${port}`, connected: true, downSince: null, lastError: null, daemons: 1, unreconciled: 0 });
    const doctor = await cli(['doctor']);
    expect(doctor.stdout).toContain(`✓ shared store: ${display} connected; this daemon is ${hostname()}:${port}, 1 daemon alive\n`);

    postgres.stop();
    let down: CliResult;
    try {
      down = await until('status to say degraded', async () => { const r = await cli(['status']); return r.stdout.includes('degraded') && r; });
      expect(down.stdout).toMatch(new RegExp(`  store     ${display.replace(/\./g, '\\.')}, degraded: store unreachable since \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\n`));
      const st = JSON.parse((await cli(['status', '--json'])).stdout) as { store: { connected: boolean; downSince: string; lastError: string } };
      expect(st.store).toMatchObject({ connected: false, downSince: expect.stringMatching(/Z$/), lastError: expect.stringContaining(`the store at ${display}`) });
      const sick = await cli(['doctor']);
      expect(sick.stdout).toMatch(new RegExp(`✗ shared store: ${display.replace(/\./g, '\\.')} degraded: store unreachable since \\S+ \\(the store at `));
      expect(sick.code).toBe(1);
    } finally {
      postgres.start();
    }
    await until('status to say connected again', async () => (await cli(['status'])).stdout.includes(`${display}, connected`));

    await cli(['stop']);
    // No daemon: doctor asks the store this state directory's daemon last used, without changing it.
    const idle = await cli(['doctor']);
    expect(idle.stdout).toContain(`✓ shared store: ${display} reachable, schema version ${PG_SCHEMA_VERSION}, 0 daemons alive\n`);
    postgres.stop();
    try {
      const unreachable = await cli(['doctor']);
      expect(unreachable.stdout).toContain(`✗ shared store: the store at ${display}: connection refused (is PostgreSQL running there?)`);
    } finally {
      postgres.start();
    }
    expect(everything(down, home.dir) + started.stdout + started.stderr + idle.stdout).not.toContain(postgres.password);
  }, 120_000);
});
