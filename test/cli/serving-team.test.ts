// Serving a team, as a user runs it: `gateway start` beyond loopback is refused in plain HTTP, and
// served over the daemon's own TLS (a self-signed certificate made here with openssl) with a
// reverse proxy named; doors want a proxy key and admin routes an admin key, the local admin token
// works only from this machine; X-Forwarded-For is believed from the proxy alone; admin keys are
// made, listed and revoked; `gateway --url` acts on the gateway with GATEWAY_ADMIN_KEY; the dashboard
// signs in with an admin key over the network.
//
// A non-loopback peer on one machine: the daemon listens on 0.0.0.0 and the test connects to this
// machine's own LAN address from that address (os.networkInterfaces()), so the daemon sees a peer
// that is not loopback. The test needs such an interface and says so when there is none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { closedPort } from '../helpers/ports.js';
import { readResponse } from '../helpers/http-response.js';
import { lanAddress, selfSignedCert } from '../helpers/tls.js';

const home = makeTempHome('gateway-team-');
let LAN = '';
let CERT = '';
let KEY = '';
let mock: MockProvider;
let env: Record<string, string>;
let port = 0;
let pid = 0;
const cli = (args: string[], extra: Record<string, string | undefined> = {}) => runCli(args, { home: home.dir, env: { ...env, ...extra } });

function expectOneLineError(r: CliResult, pattern: RegExp, code = 1): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('WARNING'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
}

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }

/**
 * One HTTPS request to the daemon, trusting exactly its certificate (whose name is gw.example):
 * `from: 'lan'` connects to the LAN address from the LAN address (a peer that is not loopback),
 * otherwise to 127.0.0.1.
 */
function call(path: string, o: { method?: string; headers?: Record<string, string>; body?: string; from?: 'lan' | 'loopback' } = {}): Promise<Reply> {
  const host = o.from === 'lan' ? LAN : '127.0.0.1';
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host, port, path, method: o.method ?? 'GET', ca: readFileSync(CERT), servername: 'gw.example',
      ...(o.from === 'lan' ? { localAddress: LAN } : {}),
      headers: { host: `gw.example:${port}`, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
      agent: false,
    }, (res) => readResponse(res, resolve));
    req.on('error', reject);
    req.end(o.body);
  });
}

const chat = (key: string, o: { from?: 'lan' | 'loopback'; headers?: Record<string, string> } = {}) => call('/v1/chat/completions', {
  method: 'POST', from: o.from, headers: { authorization: `Bearer ${key}`, ...o.headers },
  body: JSON.stringify({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }),
});

const logLines = (): string[] => {
  const path = join(home.dir, 'daemon.log');
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n') : [];
};

/** True when nothing holds `p` on any interface: we can listen there ourselves. */
function portFree(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(p, '0.0.0.0', () => s.close(() => resolve(true)));
  });
}

beforeAll(async () => {
  LAN = lanAddress('it is how a peer that is not loopback is made on one machine');
  mock = await startMockProvider('openai');
  env = {
    GATEWAY_OPENAI_BASE_URL: mock.origin,
    GATEWAY_OPENAI_API_KEY: mock.key,
    GATEWAY_KEYCHAIN_STORE: 'secret-service',
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}`,
  };
  // Self-signed, naming gw.example and the LAN address but not 127.0.0.1: the CLI on this machine
  // reaches the daemon on 127.0.0.1 all the same (it trusts the certificate the daemon recorded).
  ({ cert: CERT, key: KEY } = selfSignedCert(home.dir, `DNS:gw.example,IP:${LAN}`));
});

afterAll(async () => {
  await cli(['stop']);
  if (pid) try { process.kill(pid, 'SIGKILL'); } catch { /* stopped */ }
  await mock?.close();
  home.cleanup();
});

describe('a bind beyond loopback without TLS or --behind-proxy', () => {
  it('is refused at start: one line, exit 2, no daemon file, the port not held', async () => {
    const p = await closedPort();
    for (const host of ['0.0.0.0', '::', LAN]) {
      const r = await cli(['start', '--host', host, '--port', String(p)]);
      expectOneLineError(r, new RegExp(`refusing to listen on ${host.replace(/\./g, '\\.')} in plain HTTP.*--tls-cert <file> --tls-key <file>.*--behind-proxy <address>`), 2);
      expect(existsSync(join(home.dir, 'daemon.json'))).toBe(false);
      expect(await portFree(p)).toBe(true);
    }
    expect((await cli(['status'])).code).toBe(3); // not running
  });

  it('half the TLS pair, or a key file that is not there, is one line and nothing started', async () => {
    expectOneLineError(await cli(['start', '--host', '0.0.0.0', '--port', '0', '--tls-cert', CERT]), /--tls-cert and --tls-key go together/, 2);
    expectOneLineError(await cli(['start', '--host', '0.0.0.0', '--port', '0', '--behind-proxy', 'proxy.example']), /--behind-proxy takes the reverse proxy's IP address/, 2);
    expectOneLineError(await cli(['start', '--host', '0.0.0.0', '--port', '0', '--tls-cert', CERT, '--tls-key', join(home.dir, 'missing.pem')]), /cannot read the TLS key .*missing\.pem: no such file/);
    expectOneLineError(await cli(['start', '--host', '0.0.0.0', '--port', '0', '--tls-cert', CERT, '--tls-key', CERT]), /the TLS certificate and key cannot be used together/);
    expect(existsSync(join(home.dir, 'daemon.json'))).toBe(false);
  });
});

describe('served over TLS on 0.0.0.0, behind a proxy on this machine (127.0.0.1)', () => {
  let adminKey = '';
  let appKey = '';

  it('starts; status, keys and the health check work from the CLI over HTTPS', async () => {
    const r = await cli(['start', '--host', '0.0.0.0', '--port', '0', '--tls-cert', CERT, '--tls-key', KEY, '--behind-proxy', '127.0.0.1']);
    expect(r.code, r.stderr).toBe(0);
    const m = /^gateway running at https:\/\/0\.0\.0\.0:(\d+) \(pid (\d+)\)$/m.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    port = Number(m![1]);
    pid = Number(m![2]);
    const s = await cli(['status', '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ running: true, answering: true, pid });
    expect((await call('/healthz')).status).toBe(200);
  });

  it('keys create --admin issues an admin key: shown once, hashed, listed as admin', async () => {
    const r = await cli(['keys', 'create', '--admin', '--name', 'ops']);
    expect(r.code, r.stderr).toBe(0);
    adminKey = r.stdout.trim();
    expect(adminKey).toMatch(/^sk-gwadmin-[A-Za-z0-9_-]{43}$/);
    expect(r.stderr).toContain('shown only this once');
    expect(readFileSync(join(home.dir, 'keys.json'), 'utf8')).not.toContain(adminKey);
    const list = await cli(['keys', 'list']);
    expect(list.stdout).toMatch(/\bops \(admin\)\s/);
    const rows = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as Array<{ name: string; admin?: boolean }>;
    expect(rows.find((k) => k.name === 'ops')?.admin).toBe(true);
    expectOneLineError(await cli(['keys', 'create', '--admin', '--name', 'ops-limited', '--rpm', '5']), /admin key has no models or limits/, 2);
    appKey = (await cli(['keys', 'create', '--name', 'app'])).stdout.trim();
    expect(appKey).toMatch(/^sk-proxy-/);
  });

  it('a door without a proxy key, or with an admin key, answers 401 in its own shape', async () => {
    const none = await call('/v1/chat/completions', { method: 'POST', body: '{}', from: 'lan' });
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ type: 'invalid_request_error', code: 'missing_api_key' });
    const messages = await call('/v1/messages', { method: 'POST', body: '{}', headers: { 'x-api-key': adminKey }, from: 'lan' });
    expect(messages.status).toBe(401);
    expect(messages.json).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringMatching(/admin key is not a proxy key/) } });
    expect(messages.text).not.toContain(adminKey);
    const viaChat = await chat(adminKey, { from: 'lan' });
    expect(viaChat.status).toBe(401);
    expect(viaChat.json.error.code).toBe('invalid_api_key');
    expect((await chat(appKey, { from: 'lan' })).status).toBe(200);
  });

  it('an admin route from the network needs an admin key: not nothing, not a proxy key, not the local admin token', async () => {
    const token = readFileSync(join(home.dir, 'admin-token'), 'utf8').trim();
    for (const path of ['/admin/status', '/admin/keys']) {
      const none = await call(path, { from: 'lan' });
      expect(none.status, path).toBe(401);
      expect(none.text).toMatch(/an admin key/);
      expect((await call(path, { from: 'lan', headers: { authorization: `Bearer ${appKey}` } })).status, path).toBe(401);
      const byToken = await call(path, { from: 'lan', headers: { authorization: `Bearer ${token}` } });
      expect(byToken.status, path).toBe(401);
      expect(byToken.text).toMatch(/local admin token is accepted only on the gateway's own machine/);
      expect((await call(path, { from: 'lan', headers: { authorization: `Bearer ${adminKey}` } })).status, path).toBe(200);
    }
    // From this machine the token works, unless the proxy forwarded it from elsewhere.
    expect((await call('/admin/status', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await call('/admin/status', { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '198.51.100.9' } })).status).toBe(401);
  });

  it('X-Forwarded-For is believed from the proxy and ignored from anyone else (the access log\'s client)', async () => {
    const forger = (await cli(['keys', 'create', '--name', 'forger'])).stdout.trim();
    const proxied = (await cli(['keys', 'create', '--name', 'proxied'])).stdout.trim();
    expect((await chat(forger, { from: 'lan', headers: { 'x-forwarded-for': '203.0.113.66', 'x-forwarded-proto': 'https' } })).status).toBe(200);
    expect((await chat(proxied, { headers: { 'x-forwarded-for': '203.0.113.66, 198.51.100.7' } })).status).toBe(200);
    await expect.poll(() => logLines().filter((l) => / key=(forger|proxied) -> 200/.test(l)).length, { timeout: 5_000 }).toBe(2);
    const line = (name: string) => logLines().find((l) => l.includes(` key=${name} -> 200`))!;
    expect(line('forger')).toMatch(new RegExp(` client=${LAN.replace(/\./g, '\\.')}( |$)`));
    expect(line('forger')).not.toContain('203.0.113.66');
    // The proxy appended the address it saw: the client is the rightmost one that is not a proxy.
    expect(line('proxied')).toContain(' client=198.51.100.7');
  });

  it('gateway --url keys create/list/revoke acts on the gateway with GATEWAY_ADMIN_KEY', async () => {
    const url = `https://${LAN}:${port}`;
    const remote = (args: string[]) => cli(['--url', url, '--ca-cert', CERT, ...args], { GATEWAY_ADMIN_KEY: adminKey });
    const created = await remote(['keys', 'create', '--name', 'ci', '--rpm', '30']);
    expect(created.code, created.stderr).toBe(0);
    const ciKey = created.stdout.trim();
    expect(ciKey).toMatch(/^sk-proxy-/);
    expect(created.stderr).toMatch(/Created key [0-9a-f]{8} \(name "ci"\), limits: 30 rpm\./);
    expect((await chat(ciKey, { from: 'lan' })).status).toBe(200);
    const list = await remote(['keys', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Array<{ name: string; status: string; limits: unknown; admin?: boolean }>;
    expect(rows.find((k) => k.name === 'ci')).toMatchObject({ status: 'active', limits: { rpm: 30 } });
    expect(rows.find((k) => k.name === 'ops')?.admin).toBe(true);
    expect(list.stdout).not.toMatch(/sk-(proxy|gwadmin)-/);
    const revoked = await remote(['keys', 'revoke', 'ci']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked key [0-9a-f]{8} \("ci"\)\./);
    const refused = await chat(ciKey, { from: 'lan' });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('key_revoked');
    const status = await remote(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid });
  });

  it('gateway --url fails in one line: no admin key, a wrong one, a proxy key, an untrusted certificate, nobody there', async () => {
    const url = `https://${LAN}:${port}`;
    expectOneLineError(await cli(['--url', url, '--ca-cert', CERT, 'keys', 'list'], { GATEWAY_ADMIN_KEY: undefined }), /needs an admin key in GATEWAY_ADMIN_KEY/);
    expectOneLineError(await cli(['--url', url, '--ca-cert', CERT, 'keys', 'list'], { GATEWAY_ADMIN_KEY: `sk-gwadmin-${'x'.repeat(43)}` }), /refused the admin key in GATEWAY_ADMIN_KEY: unknown admin key/);
    expectOneLineError(await cli(['--url', url, '--ca-cert', CERT, 'keys', 'list'], { GATEWAY_ADMIN_KEY: appKey }), /holds a proxy key/);
    expectOneLineError(await cli(['--url', url, 'keys', 'list'], { GATEWAY_ADMIN_KEY: adminKey }), /cannot reach the gateway at .*: its TLS certificate is not trusted here/);
    expectOneLineError(await cli(['--url', `https://127.0.0.1:${await closedPort()}`, 'status'], { GATEWAY_ADMIN_KEY: adminKey }), /cannot reach the gateway at https:\/\/127\.0\.0\.1:\d+: connection refused/);
    expectOneLineError(await cli(['--url', `http://${LAN}:${port}`, 'status'], { GATEWAY_ADMIN_KEY: adminKey }), /plain HTTP: the admin key is sent only over HTTPS/, 2);
    expectOneLineError(await cli(['--url', url, 'stop'], { GATEWAY_ADMIN_KEY: adminKey }), /--url works with .*`stop` acts on this machine only/, 2);
  });

  it('the dashboard signs in with an admin key over the network; the session ends with the key', async () => {
    const origin = `https://gw.example:${port}`;
    const signIn = (key: string) => call('/dashboard/login', {
      method: 'POST', from: 'lan', body: `key=${encodeURIComponent(key)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    });
    const page = await call('/dashboard/keys', { from: 'lan' });
    expect(page.status).toBe(401);
    expect(page.text).toContain('name="key"');
    const wrong = await signIn(appKey);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const token = readFileSync(join(home.dir, 'admin-token'), 'utf8').trim();
    expect((await signIn(token)).status).toBe(401); // the local token, from the network
    const key = (await cli(['keys', 'create', '--admin', '--name', 'browser'])).stdout.trim();
    const ok = await signIn(key);
    expect(ok.status).toBe(200);
    const cookie = String((ok.headers['set-cookie'] as string[])[0]);
    expect(cookie).toMatch(/; HttpOnly; SameSite=Strict; .*; Secure$/);
    const session = cookie.split(';')[0]!;
    const keys = await call('/dashboard/keys', { from: 'lan', headers: { cookie: session } });
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('data-admin-key');
    expect((await call('/dashboard/keys', { from: 'lan', headers: { cookie: session, origin: 'https://evil.example' } })).status).toBe(403);
    expect((await cli(['keys', 'revoke', 'browser'])).code).toBe(0);
    expect((await call('/dashboard/keys', { from: 'lan', headers: { cookie: session } })).status).toBe(401);
  });

  it('a revoked admin key opens nothing', async () => {
    const r = await cli(['keys', 'revoke', 'ops']);
    expect(r.code).toBe(0);
    const refused = await call('/admin/keys', { from: 'lan', headers: { authorization: `Bearer ${adminKey}` } });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('admin key \\"ops\\" has been revoked');
    expectOneLineError(await cli(['--url', `https://${LAN}:${port}`, '--ca-cert', CERT, 'keys', 'list'], { GATEWAY_ADMIN_KEY: adminKey }), /refused the admin key .*has been revoked/);
  });

  it('stop works over HTTPS and leaves no daemon file', async () => {
    const r = await cli(['stop']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`gateway stopped (pid ${pid})`);
    expect(existsSync(join(home.dir, 'daemon.json'))).toBe(false);
  });
});
