// The README's deployment example (deploy/), exercised as far as this machine allows. No systemd
// or Docker daemon runs here, so:
// - the systemd unit passes `systemd-analyze verify`, and its ExecStart command line, run with the
//   environment systemd would give it (its own PATH, Environment=, the env file's variables;
//   nothing inherited from this shell), serves a team: HTTPS on the unit's flags, the throwaway
//   PostgreSQL of GATEWAY_STORE_URL as its store, an admin key made on the box, `gateway --url`
//   making a proxy key with it, a request with that key answered by a mock provider with the
//   provider key from the env file; SIGTERM stops it with exit 0;
// - the Dockerfile names only what exists (the npm scripts it runs, the files it copies, the
//   package's bin as its entrypoint, exactly the package's files in the image), and its ENTRYPOINT
//   and CMD, run with the image's ENV and the same env file, serve the same way.
// The absolute paths the unit and the image use (/etc/model-gateway, /var/lib/model-gateway, /app,
// /tls) are mapped into a temp root, the executable to this repository's bin, and the port to a free
// one (tests never take fixed ports): those are the only changes, each checked before it is made.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_BIN, REPO_ROOT, runCli } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { closedPort } from '../helpers/ports.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { selfSignedCert } from '../helpers/tls.js';

const DEPLOY = join(REPO_ROOT, 'deploy');
const UNIT_FILE = join(DEPLOY, 'model-gateway.service');
const ENV_FILE = join(DEPLOY, 'gateway.env.example');
const DOCKERFILE = join(DEPLOY, 'Dockerfile');
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string>; files: string[] };
/** What systemd gives a service before its own Environment= (systemd.exec(5), "Environment variables in spawned processes"). */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

// ---- parsing, as systemd and Docker read these files (the subset the example uses) ----------------

/** A unit file's settings by section, in order; a key may repeat (Environment=). */
function parseUnit(text: string): Map<string, Array<[string, string]>> {
  const sections = new Map<string, Array<[string, string]>>();
  let current: Array<[string, string]> | undefined;
  for (const raw of text.replace(/\\\n/g, ' ').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) { current = []; sections.set(head[1]!, current); continue; }
    const eq = line.indexOf('=');
    if (!current || eq === -1) throw new Error(`not a unit file line: ${line}`);
    current.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return sections;
}

const settings = (unit: Map<string, Array<[string, string]>>, section: string, key: string) => (unit.get(section) ?? []).filter(([k]) => k === key).map(([, v]) => v);

/** KEY=value lines (systemd's EnvironmentFile= and `docker run --env-file` read them alike when there are no quotes). */
function parseEnvFile(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`not a KEY=value line: ${line}`);
    expect(m[2], `${m[1]}: quotes mean different things to systemd and Docker`).not.toMatch(/["']/);
    out.push([m[1]!, m[2]!]);
  }
  return out;
}

interface Instruction { stage: number; op: string; args: string }

function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  for (const raw of text.replace(/\\\n/g, ' ').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`not a Dockerfile instruction: ${line}`);
    if (m[1] === 'FROM') stage++;
    out.push({ stage, op: m[1]!, args: m[2]! });
  }
  return out;
}

// ---- running the daemon as the example does, and using it as a team would --------------------------

let postgres: TestPostgres;
let mock: MockProvider;
const root = mkdtempSync(join(tmpdir(), 'gateway-deploy-'));
const running = new Set<ChildProcess>();
let dbs = 0;

beforeAll(async () => {
  postgres = await startPostgres();
  mock = await startMockProvider('openai');
}, 120_000);

afterAll(async () => {
  for (const c of running) c.kill('SIGKILL');
  await mock?.close();
  postgres?.destroy();
  rmSync(root, { recursive: true, force: true });
});

/** The store's password in the URLs handed to the daemons: the test server trusts loopback and ignores it, so it only shows where it leaks. */
const STORE_PASSWORD = 'deploy-test-pw-7Qx';

/** A new database on the test server, as a URL with a password as an operator's would have. */
async function freshDatabase(): Promise<string> {
  return (await postgres.database(`deploy_${++dbs}`)).replace('postgres://gw@', `postgres://gw:${STORE_PASSWORD}@`);
}

/** The env file with a value for each variable it names, as an operator fills it in. */
function filledEnvFile(storeUrl: string): Array<[string, string]> {
  const vars = parseEnvFile(readFileSync(ENV_FILE, 'utf8'));
  const names = vars.map(([k]) => k);
  expect(names).toEqual(expect.arrayContaining(['GATEWAY_STORE_URL', 'GATEWAY_OPENAI_API_KEY', 'GATEWAY_ANTHROPIC_API_KEY', 'GATEWAY_GEMINI_API_KEY']));
  const values: Record<string, string> = {
    GATEWAY_STORE_URL: storeUrl, GATEWAY_OPENAI_API_KEY: mock.key, GATEWAY_ANTHROPIC_API_KEY: 'sk-ant-unused', GATEWAY_GEMINI_API_KEY: 'gemini-unused', GATEWAY_DAEMON_ID: 'gw1',
  };
  return vars.map(([k, v]) => [k, values[k] ?? v]);
}

interface Reply { status: number; text: string }

function https(port: number, ca: string, path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', ca: readFileSync(ca), agent: false, headers: { ...(o.body ? { 'content-type': 'application/json' } : {}), ...o.headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Starts `argv` (node + the CLI) with exactly `env`; resolves once /healthz answers over HTTPS, or rejects with its output when it exits first. */
async function serve(argv: string[], env: NodeJS.ProcessEnv, port: number, ca: string): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the daemon exited (${code}) before it served:\n${output}`))));
  const healthy = (async () => {
    for (;;) {
      try {
        if ((await https(port, ca, '/healthz')).status === 200) return;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.race([healthy, exited]);
  child.removeAllListeners('exit');
  return { child, output: () => output };
}

/**
 * What a team does with a freshly deployed gateway: an admin key made on its machine (the CLI with
 * the daemon's state directory), a proxy key made with it from elsewhere (`gateway --url`), a
 * request with that key; and what the operator checks: the store holds the gateway's schema.
 */
async function useAsATeam(o: { port: number; ca: string; stateDir: string; storeUrl: string }): Promise<void> {
  const admin = await runCli(['keys', 'create', '--admin', '--name', 'ops'], { home: o.stateDir });
  expect(admin.code, admin.stderr).toBe(0);
  const adminKey = admin.stdout.trim();
  expect(adminKey).toMatch(/^sk-gwadmin-/);
  const elsewhere = mkdtempSync(join(root, 'laptop-'));
  const created = await runCli(['--url', `https://127.0.0.1:${o.port}`, '--ca-cert', o.ca, 'keys', 'create', '--name', 'ci'], { home: elsewhere, env: { GATEWAY_ADMIN_KEY: adminKey } });
  expect(created.code, created.stderr).toBe(0);
  const proxyKey = created.stdout.trim();
  expect(proxyKey).toMatch(/^sk-proxy-/);

  const before = mock.requests.length;
  const r = await https(o.port, o.ca, '/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${proxyKey}` }, body: JSON.stringify({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }) });
  expect(r.status, r.text).toBe(200);
  expect(JSON.parse(r.text).choices[0].message.content).toEqual(expect.any(String));
  // Upstream with the provider key of the env file, never the proxy key.
  expect(mock.requests.length).toBe(before + 1);
  expect(mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${mock.key}`);

  const db = new pg.Client({ connectionString: o.storeUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM gateway_schema');
    expect(rows[0]!.n).toBeGreaterThan(0);
  } finally { await db.end(); }
}

/** SIGTERM, as `systemctl stop` and `docker stop` send it: the daemon drains and exits 0, waited for up to `graceS`. */
async function stopLikeTheSupervisor(child: ChildProcess, graceS: number): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceS * 1000);
  const code = await exited;
  clearTimeout(timer);
  running.delete(child);
  return code;
}

/** `/etc/model-gateway/...`-style paths of the example, mapped into this test's temp root. */
const under = (base: string) => (p: string) => (p.startsWith('/') ? join(base, p) : p);

describe('the systemd unit (deploy/model-gateway.service)', () => {
  const unitText = readFileSync(UNIT_FILE, 'utf8');
  const unit = parseUnit(unitText);
  const exec = settings(unit, 'Service', 'ExecStart');

  it('passes systemd-analyze verify, with the CLI where its ExecStart names it', () => {
    const analyze = spawnSync('systemd-analyze', ['--version']);
    expect(analyze.error, 'systemd-analyze is missing (Debian package systemd; .ci/run installs it)').toBeUndefined();
    expect(exec).toHaveLength(1);
    const executable = exec[0]!.split(/\s+/)[0]!;
    // verify checks that the executable exists: it stands at the path of a global npm install here.
    expect(basename(executable)).toBe(Object.keys(pkg.bin)[0]);
    const dir = mkdtempSync(join(root, 'verify-'));
    writeFileSync(join(dir, 'model-gateway.service'), unitText.split(executable).join(GATEWAY_BIN));
    const r = spawnSync('systemd-analyze', ['verify', join(dir, 'model-gateway.service')], { encoding: 'utf8' });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it('keeps secrets out of the unit: they come from a root-only env file', () => {
    expect(unitText).not.toMatch(/postgres(ql)?:\/\/|sk-|API_KEY=/);
    expect(settings(unit, 'Service', 'EnvironmentFile')).toEqual(['/etc/model-gateway/gateway.env']);
    expect(settings(unit, 'Service', 'Restart')).toEqual(['on-failure']);
    expect(settings(unit, 'Service', 'StateDirectory')).toEqual(['model-gateway']);
  });

  it('its ExecStart, with the environment systemd gives it, serves a team on PostgreSQL and stops cleanly on SIGTERM', async () => {
    const base = mkdtempSync(join(root, 'systemd-'));
    const map = under(base);
    const words = exec[0]!.split(/\s+/);
    // Split on spaces as systemd does for a line without quotes, specifiers or variables.
    expect(exec[0]).not.toMatch(/["'%$\\]/);
    const args = words.slice(1);
    const portAt = args.indexOf('--port');
    expect(portAt).toBeGreaterThan(-1);
    const port = await closedPort();
    args[portAt + 1] = String(port);
    const mapped = args.map(map);
    // The certificate and key where the unit reads them.
    const cert = mapped[mapped.indexOf('--tls-cert') + 1]!;
    const key = mapped[mapped.indexOf('--tls-key') + 1]!;
    mkdirSync(join(cert, '..'), { recursive: true });
    const made = selfSignedCert(join(cert, '..'), 'IP:127.0.0.1,DNS:gw.example');
    expect([made.cert, made.key]).toEqual([cert, key]);

    const storeUrl = await freshDatabase();
    const env: NodeJS.ProcessEnv = { PATH: SYSTEMD_PATH, LANG: 'C.UTF-8', USER: 'gateway', LOGNAME: 'gateway', SHELL: '/usr/sbin/nologin' };
    for (const e of settings(unit, 'Service', 'Environment')) {
      const [k, ...v] = e.split('=');
      env[k!] = map(v.join('='));
    }
    env.HOME = env.GATEWAY_HOME; // the gateway user's home (useradd --home-dir) is its state directory
    for (const [k, v] of filledEnvFile(storeUrl)) env[k] = v;
    env.GATEWAY_OPENAI_BASE_URL = mock.origin; // the test's stand-in for the provider on the internet
    const stateDir = env.GATEWAY_HOME!;
    expect(stateDir.startsWith(base)).toBe(true);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 }); // StateDirectory= makes it before the start

    const { child, output } = await serve([process.execPath, GATEWAY_BIN, ...mapped], env, port, cert);
    await useAsATeam({ port, ca: cert, stateDir, storeUrl });
    expect(output()).toContain('gw1'); // the daemon's name from the env file
    expect(output()).not.toContain(STORE_PASSWORD);
    const grace = Number(settings(unit, 'Service', 'TimeoutStopSec')[0]);
    expect(await stopLikeTheSupervisor(child, grace), output()).toBe(0);
  }, 60_000);
});

describe('the container file (deploy/Dockerfile)', () => {
  const steps = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
  const last = Math.max(...steps.map((s) => s.stage));
  const json = (op: string) => JSON.parse(steps.find((s) => s.op === op && s.stage === last)!.args) as string[];

  it('runs only npm scripts the package has, and copies only files that exist and the build context keeps', () => {
    const ignored = readFileSync(join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const s of steps) {
      if (s.op === 'RUN') {
        for (const cmd of s.args.split('&&').map((c) => c.trim())) {
          const script = /^npm run (\S+)/.exec(cmd);
          if (script) expect(Object.keys(pkg.scripts), cmd).toContain(script[1]);
          if (/^npm ci\b/.test(cmd)) {
            // npm ci installs from the lock file: it must be in the stage before.
            const copied = steps.filter((c) => c.stage === s.stage && c.op === 'COPY' && steps.indexOf(c) < steps.indexOf(s)).flatMap((c) => c.args.split(/\s+/).slice(0, -1));
            expect(copied, cmd).toEqual(expect.arrayContaining(['package.json', 'package-lock.json']));
          }
        }
      }
      if (s.op === 'COPY' && !s.args.startsWith('--from')) {
        for (const src of s.args.split(/\s+/).slice(0, -1)) {
          expect(existsSync(join(REPO_ROOT, src)), src).toBe(true);
          expect(ignored, `${src} is left out of the build context`).not.toContain(src.split('/')[0]);
        }
      }
    }
  });

  it('puts exactly the package\'s files in the image, and starts the package\'s bin', () => {
    // What each COPY of the final stage brings: its sources, or, from the build stage, its destination.
    const brought = steps.filter((s) => s.stage === last && s.op === 'COPY').flatMap((s) => {
      const words = s.args.split(/\s+/);
      return words[0]!.startsWith('--from') ? [words.at(-1)!.replace(/^\.\//, '')] : words.slice(0, -1);
    });
    expect(brought.filter((p) => !/^package(-lock)?\.json$/.test(p)).sort()).toEqual([...pkg.files].sort());
    const workdir = steps.filter((s) => s.stage === last && s.op === 'WORKDIR').at(-1)!.args;
    const [runtime, script] = json('ENTRYPOINT');
    expect(runtime).toBe('node');
    expect(script).toBe(join(workdir, pkg.bin[Object.keys(pkg.bin)[0]!]!));
    // The CMD's port is the one the image exposes.
    const cmd = json('CMD');
    expect(steps.find((s) => s.stage === last && s.op === 'EXPOSE')!.args).toBe(cmd[cmd.indexOf('--port') + 1]);
  });

  it('its ENTRYPOINT and CMD, with the image\'s ENV and the env file, serve a team on PostgreSQL and stop cleanly on SIGTERM', async () => {
    const base = mkdtempSync(join(root, 'container-'));
    const workdir = steps.filter((s) => s.stage === last && s.op === 'WORKDIR').at(-1)!.args;
    // The image's /app holds this repository's bin, dist, data, assets and production modules; the
    // rest of its absolute paths (the mounted /tls, the state volume) live under a temp root.
    const map = (p: string) => (p.startsWith(`${workdir}/`) ? join(REPO_ROOT, p.slice(workdir.length + 1)) : under(base)(p));
    const argv = [...json('ENTRYPOINT'), ...json('CMD')];
    const port = await closedPort();
    argv[argv.indexOf('--port') + 1] = String(port);
    const mapped = argv.map(map);
    mapped[0] = process.execPath;
    const cert = mapped[mapped.indexOf('--tls-cert') + 1]!;
    mkdirSync(join(cert, '..'), { recursive: true });
    selfSignedCert(join(cert, '..'), 'IP:127.0.0.1,DNS:gw.example');

    const storeUrl = await freshDatabase();
    const env: NodeJS.ProcessEnv = { PATH: SYSTEMD_PATH, HOME: map('/home/node') };
    for (const s of steps.filter((x) => x.stage === last && x.op === 'ENV')) {
      for (const pair of s.args.split(/\s+/)) {
        const [k, ...v] = pair.split('=');
        env[k!] = map(v.join('='));
      }
    }
    for (const [k, v] of filledEnvFile(storeUrl)) env[k] = v;
    env.GATEWAY_OPENAI_BASE_URL = mock.origin;
    const stateDir = env.GATEWAY_HOME!;
    expect(stateDir.startsWith(base)).toBe(true);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 }); // the image makes it (RUN mkdir), the volume keeps it

    const { child, output } = await serve(mapped, env, port, cert);
    await useAsATeam({ port, ca: cert, stateDir, storeUrl });
    expect(output()).toContain('gw1'); // the daemon's name from the env file
    expect(output()).not.toContain(STORE_PASSWORD);
    expect(await stopLikeTheSupervisor(child, 20), output()).toBe(0);
  }, 60_000);
});
