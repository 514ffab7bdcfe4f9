// `gateway status` tells scripts by its exit code whether the gateway runs, as `systemctl status`
// does: 3 when it does not (also with --json, which still prints {running:false}), 0 when it does.
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { GATEWAY_BIN, makeTempHome, runCli } from '../helpers/cli.js';

const home = makeTempHome();
afterAll(() => home.cleanup());
const cli = (args: string[]) => runCli(args, { home: home.dir });

describe('gateway status when no gateway runs', () => {
  it('says so on stdout and exits 3', async () => {
    const r = await cli(['status']);
    expect(r.stdout).toBe('gateway is not running (start it with: gateway start)\n');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(3);
  });

  it('--json prints {running:false} and exits 3 too', async () => {
    const r = await cli(['status', '--json']);
    expect(JSON.parse(r.stdout)).toEqual({ running: false });
    expect(r.code).toBe(3);
  });

  it('a daemon.json left by a dead process counts as not running', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(home.dir, 'daemon.json'), JSON.stringify({ pid: Number(dead.stdout), host: '127.0.0.1', port: 1, url: 'http://127.0.0.1:1', startedAt: '' }), { mode: 0o600 });
    expect((await cli(['status'])).code).toBe(3);
  });

  it('a script can branch on it', () => {
    const r = spawnSync('sh', ['-c', `if "$0" "$1" status >/dev/null; then echo up; else echo "down $?"; fi`, process.execPath, GATEWAY_BIN], { encoding: 'utf8', env: { ...process.env, GATEWAY_HOME: home.dir } });
    expect(r.stdout).toBe('down 3\n');
  });
});
