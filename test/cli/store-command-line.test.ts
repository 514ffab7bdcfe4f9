// `gateway start --foreground --store postgres://user:password@…` is the daemon itself, running for
// as long as the gateway serves: its command line, which any user of the machine reads with `ps`
// (/proc/<pid>/cmdline), must not hold the store's password.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, GATEWAY_BIN, makeTempHome } from '../helpers/cli.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';

let postgres: TestPostgres;
let url: string;
beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.database('cmdline');
}, 120_000);
afterAll(() => postgres?.destroy());

describe('the store password and the process list', () => {
  it('a foreground daemon started with --store shows no password in its command line', async () => {
    const home = makeTempHome('gateway-cmdline-');
    let child: ChildProcess | undefined;
    try {
      child = spawn(process.execPath, [GATEWAY_BIN, 'start', '--foreground', '--no-monitor', '--port', '0', '--store', url], {
        env: { ...baseEnv(), GATEWAY_HOME: home.dir, GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}` },
        stdio: 'ignore',
      });
      const exited = new Promise<void>((r) => child!.once('exit', () => r()));
      await until('the daemon to serve', () => existsSync(join(home.dir, 'daemon.json')));
      const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').replace(/\0+/g, ' ');
      expect(cmdline).toContain('--store');
      expect(cmdline).not.toContain(postgres.password);
      child.kill('SIGTERM');
      await exited;
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      home.cleanup();
    }
  }, 60_000);
});
