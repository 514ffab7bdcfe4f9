// `gateway start|status|logs|stop` against the real daemon, spawned in the background as a user
// would, plus the round trip: a key stored by the CLI reaches the daemon on reload, a key revoked
// by the CLI stops working on the next request. Upstream is a mock provider on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { makeTempHome, runCli } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

const home = makeTempHome();
let mock: MockProvider;
let env: Record<string, string>;
const cli = (args: string[], input?: string) => runCli(args, { home: home.dir, input, env });
let url = '';
let pid = 0;

function isAlive(p: number): boolean {
  try { process.kill(p, 0); return true; } catch { return false; }
}

beforeAll(async () => {
  mock = await startMockProvider('openai');
  env = {
    GATEWAY_OPENAI_BASE_URL: mock.origin,
    // No keychain for this file: provider keys go to the insecure file (the keychain has its own tests).
    GATEWAY_KEYCHAIN_STORE: 'secret-service',
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}`,
  };
  // A setting the daemon must read from config.json and can only report (checked in the logs test).
  writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ responses: { retentionDays: 'forever' } }), { mode: 0o600 });
});

afterAll(async () => {
  await cli(['stop']);
  if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL');
  await mock.close();
  home.cleanup();
});

describe('daemon lifecycle', () => {
  it('status and stop say "not running" before a start', async () => {
    expect(JSON.parse((await cli(['status', '--json'])).stdout)).toEqual({ running: false });
    const r = await cli(['stop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('not running');
  });

  it('start runs it in the background and prints the URL once /healthz answers', async () => {
    const r = await cli(['start', '--port', '0']);
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    const m = /^gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)$/m.exec(r.stdout);
    expect(m).not.toBeNull();
    url = m![1]!;
    pid = Number(m![2]);
    expect((await fetch(`${url}/healthz`)).ok).toBe(true);
    expect(existsSync(join(home.dir, 'daemon.json'))).toBe(true);
  });

  it('start again says it is already running and exits 0', async () => {
    const r = await cli(['start', '--port', '0']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`already running at ${url} (pid ${pid})`);
  });

  it('a provider key stored by the CLI reaches the daemon at once (reload)', async () => {
    const set = await cli(['providers', 'set', 'openai', '--stdin', '--insecure-storage'], mock.key);
    expect(set.code).toBe(0);
    expect(set.stderr).toContain('The running gateway reloaded.');
    const key = (await cli(['keys', 'create', '--name', 'app'])).stdout.trim();
    const res = await fetch(`${url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${mock.key}`);
  });

  it('a key revoked by the CLI fails on its next request', async () => {
    const key = (await cli(['keys', 'create', '--name', 'short-lived'])).stdout.trim();
    const call = () => fetch(`${url}/openai/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => { await r.text(); return r.status; });
    expect(await call()).toBe(200);
    const r = await cli(['keys', 'revoke', 'short-lived']);
    expect(r.code).toBe(0);
    expect(await call()).toBe(401);
  });

  it('env points at the running daemon', async () => {
    const r = await runCli(['env', 'openai', '--insecure-storage'], { home: home.dir, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`export OPENAI_BASE_URL='${url}/openai/v1'`);
    expect(r.stderr).not.toContain('not running');
  });

  it('status --json reports pid, URL, uptime and requests served', async () => {
    const r = await cli(['status', '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(s).toMatchObject({ running: true, pid, url });
    expect(s.requestsServed).toBeGreaterThanOrEqual(2); // the two that reached a provider
    expect(typeof s.uptimeMs).toBe('number');
    const human = await cli(['status']);
    expect(human.stdout).toMatch(/gateway is running at .*\n\s+pid\s+\d+\n\s+uptime\s+.*\n\s+requests\s+\d+ served/);
  });

  it('logs shows the daemon log; -n limits it', async () => {
    const r = await cli(['logs']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`listening on ${url}`);
    expect(r.stdout).toContain('config responses.retentionDays must be a number of days between 0 and 36500; using 30');
    const one = await cli(['logs', '-n', '1']);
    expect(one.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stdout).not.toContain(mock.key);
  });

  it('doctor sees it running', async () => {
    const checks = JSON.parse((await cli(['doctor', '--json'])).stdout) as { id: string; ok: boolean; detail: string }[];
    expect(checks.find((c) => c.id === 'daemon')).toMatchObject({ ok: true });
    expect(checks.find((c) => c.id === 'daemon')!.detail).toContain(url);
  });

  it('stop drains and waits until the process is gone', async () => {
    const r = await cli(['stop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`gateway stopped (pid ${pid})`);
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(join(home.dir, 'daemon.json'))).toBe(false);
    expect(JSON.parse((await cli(['status', '--json'])).stdout)).toEqual({ running: false });
  });
});

describe('port taken', () => {
  const other = makeTempHome();
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    other.cleanup();
  });

  for (const mode of [[], ['--foreground']]) {
    it(`start ${mode.join(' ')} names the port and who holds it`, async () => {
      const r = await runCli(['start', '--port', String(port), ...mode], { home: other.dir, env: { GATEWAY_KEYCHAIN_SERVICE: `model-gateway-test-${randomBytes(3).toString('hex')}` } });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^error: port ${port} on 127\\.0\\.0\\.1 is already in use by pid ${process.pid} `));
    });
  }

  it('doctor reports who holds the configured port', async () => {
    const r = await runCli(['doctor', '--json'], { home: other.dir, env: { GATEWAY_PORT: String(port) } });
    const d = (JSON.parse(r.stdout) as { id: string; ok: boolean; detail: string; fix?: string }[]).find((c) => c.id === 'daemon')!;
    expect(d.ok).toBe(false);
    expect(d.detail).toContain(`port ${port} is held by pid ${process.pid}`);
    expect(d.fix).toContain('--port');
  });
});
