// Where no keychain is usable (here: the Secret Service pinned, on a D-Bus address where nothing
// listens), storing a key fails with a clear error offering --insecure-storage, and never falls
// back to plaintext silently; with the flag, the key goes to a 0600 file with a loud warning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Socket } from 'node:net';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { GATEWAY_BIN, makeTempHome, runCli } from '../helpers/cli.js';

const home = makeTempHome();
afterAll(() => home.cleanup());
const NO_KEYCHAIN = {
  GATEWAY_KEYCHAIN_STORE: 'secret-service',
  DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home.dir, 'no-bus-here')}`,
  GATEWAY_KEYCHAIN_SERVICE: `model-gateway-test-${randomBytes(3).toString('hex')}`,
};
const cli = (args: string[], input?: string) => runCli(args, { home: home.dir, input, env: NO_KEYCHAIN });
const KEY = `AIza-test-${randomBytes(20).toString('hex')}`;

describe.runIf(process.platform === 'linux')('without a usable keychain', () => {
  it('providers set fails with one line naming the problem and offering --insecure-storage', async () => {
    const r = await cli(['providers', 'set', 'gemini', '--stdin'], KEY);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: cannot store the key in a keychain: .*Secret Service.*--insecure-storage/);
    expect(existsSync(join(home.dir, 'insecure-secrets.json'))).toBe(false);
  });

  it('providers list says no keychain is usable', async () => {
    const r = await cli(['providers', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Keychain: none usable \(.*Secret Service/);
  });

  it('--insecure-storage writes a 0600 file and warns loudly on stderr', async () => {
    const r = await cli(['providers', 'set', 'gemini', '--stdin', '--insecure-storage'], KEY + '\n');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/WARNING: .*UNENCRYPTED/);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    const path = join(home.dir, 'insecure-secrets.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ gemini: KEY });
    const list = JSON.parse((await cli(['providers', 'list', '--json'])).stdout) as { providers: { provider: string; origin: string | null; last4: string | null }[] };
    expect(list.providers.find((p) => p.provider === 'gemini')).toMatchObject({ origin: 'insecure-file', last4: KEY.slice(-4) });
  });

  it('env needs a keychain for its client key too, and offers the same way out', async () => {
    const r = await cli(['env']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot keep a client key in a keychain: .*--insecure-storage\n$/);
    const ok = await cli(['env', 'gemini', '--insecure-storage']);
    expect(ok.code).toBe(0);
    // `env gemini` is gemini-cli's: the root (any model), and its settings as comments.
    expect(ok.stdout).toMatch(/^export GOOGLE_GEMINI_BASE_URL='http:\/\/127\.0\.0\.1:8080'\nexport GEMINI_API_KEY='sk-proxy-[\w-]+'\n(#.*\n)+$/);
    const again = await cli(['env', 'gemini']); // now held in the file: no flag needed
    expect(again.stdout).toBe(ok.stdout);
  });

  it('providers remove deletes it from the file', async () => {
    const r = await cli(['providers', 'remove', 'gemini']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('from the insecure file');
    expect(JSON.parse(readFileSync(join(home.dir, 'insecure-secrets.json'), 'utf8'))).not.toHaveProperty('gemini');
  });

  it('doctor marks the keychain ✗ with a fix', async () => {
    const r = await runCli(['doctor', '--json'], { home: home.dir, env: { ...NO_KEYCHAIN, GATEWAY_PORT: '0' } });
    const kc = (JSON.parse(r.stdout) as { id: string; ok: boolean; fix?: string }[]).find((c) => c.id === 'keychain')!;
    expect(kc.ok).toBe(false);
    expect(kc.fix).toContain('--insecure-storage');
    expect(r.code).toBe(1);
  });
});

describe.runIf(process.platform === 'linux')('with a keychain that never answers', () => {
  // A D-Bus address where something accepts connections and then says nothing: the keyring
  // module blocks on it, so only the 3 s timeout (and killing the helper process) gets us out.
  const sockets = new Set<Socket>();
  const silent = createServer((s) => { sockets.add(s); }); // accept, then stay silent
  const socket = join(home.dir, 'silent-bus');
  const HUNG = { ...NO_KEYCHAIN, DBUS_SESSION_BUS_ADDRESS: `unix:path=${socket}` };
  beforeAll(() => new Promise<void>((resolve) => silent.listen(socket, resolve)));
  afterAll(() => new Promise((resolve) => {
    for (const s of sockets) s.destroy();
    silent.close(resolve);
  }));

  it('providers list gives up after 3 s and says so', async () => {
    // It ends by itself (runCli's own timeout would fail the test) and says why.
    const r = await runCli(['providers', 'list'], { home: home.dir, env: HUNG });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Keychain: none usable \(Secret Service \(Linux, D-Bus\) did not answer within 3 s/);
  });

  it('providers set fails in one line after the timeout, offering --insecure-storage', async () => {
    const r = await runCli(['providers', 'set', 'openai', '--stdin'], { home: home.dir, env: HUNG, input: 'sk-abcdefghijklmnopqrstuvwx' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot store the key in a keychain: Secret Service \(Linux, D-Bus\) did not answer within 3 s.*--insecure-storage\n$/);
  });
});

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

describe.runIf(process.platform === 'linux' && hasTmux)('the hidden prompt, typed on a terminal (tmux)', () => {
  const sock = `gateway-cli-test-${process.pid}`;
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', sock, ...args], { encoding: 'utf8' });
  afterAll(() => { tmux('kill-server'); });

  it('does not echo the key and stores what was typed', async () => {
    const typed = `sk-typed-${randomBytes(12).toString('hex')}`;
    const envs = Object.entries({ ...NO_KEYCHAIN, GATEWAY_HOME: home.dir }).map(([k, v]) => `${k}=${v}`).join(' ');
    const cmd = `env ${envs} '${process.execPath}' '${GATEWAY_BIN}' providers set openai --insecure-storage; echo "exit=$?"; sleep 30`;
    expect(tmux('new-session', '-d', '-x', '120', '-y', '12', cmd).status).toBe(0);
    await expect.poll(() => tmux('capture-pane', '-p').stdout, { timeout: 5000 }).toContain('openai API key (input hidden):');
    tmux('send-keys', '-l', typed);
    tmux('send-keys', 'Enter');
    await expect.poll(() => tmux('capture-pane', '-p').stdout, { timeout: 5000 }).toContain('exit=0');
    const screen = tmux('capture-pane', '-p').stdout;
    expect(screen).not.toContain(typed);
    expect(screen).toContain(`(…${typed.slice(-4)})`);
    expect(JSON.parse(readFileSync(join(home.dir, 'insecure-secrets.json'), 'utf8')).openai).toBe(typed);
  });
});
