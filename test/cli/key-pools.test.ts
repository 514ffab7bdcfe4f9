// Key pools from the CLI, as a user manages them: `providers set --add [--label]`, `providers keys
// [--json] [--remove]`, in the real keychain (gnome-keyring under dbus-run-session, a unique
// service per run) and in the 0600 insecure file; GATEWAY_<P>_API_KEY=k1,k2 through a real
// daemon started by `gateway start`. A key never appears in any output: at most its last four.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

const keyOf = (tag: string) => `sk-${tag}-${randomBytes(20).toString('hex')}`;
const outputs: string[] = [];
const record = (r: CliResult) => { outputs.push(r.stdout, r.stderr); return r; };
const homes: { cleanup(): void }[] = [];
afterAll(() => { for (const h of homes) h.cleanup(); });
function home() { const h = makeTempHome(); homes.push(h); return h.dir; }

interface KeysJson { provider: string; from: 'gateway' | 'storage'; keys: { label: string; masked: string; state: string | null; origin: string; until?: number; status?: number }[] }

describe('a pool in the real keychain', async () => {
  const dir = home();
  const env = { GATEWAY_KEYCHAIN_SERVICE: `model-gateway-test-${process.pid}-${randomBytes(3).toString('hex')}` };
  const cli = async (args: string[], input?: string) => record(await runCli(args, { home: dir, input, env }));
  const probe = JSON.parse((await cli(['providers', 'list', '--json'])).stdout) as { keychain: { available: boolean; name: string; error?: string } };
  const skip = !probe.keychain.available && !process.env.CI;
  const K = { def: keyOf('default'), two: keyOf('second'), work: keyOf('work'), work2: keyOf('work-again') };
  afterAll(async () => { if (!skip) await cli(['providers', 'remove', 'openai']); });

  it.skipIf(skip)('set, set --add and set --add --label build the pool in order: default, key2, work', async () => {
    expect((await cli(['providers', 'set', 'openai', '--stdin'], K.def)).code).toBe(0);
    const add = await cli(['providers', 'set', 'openai', '--add', '--stdin'], K.two);
    expect(add.code).toBe(0);
    expect(add.stdout).toBe(`Stored the openai key "key2" (…${K.two.slice(-4)}) in ${probe.keychain.name}; its pool: default, key2.\n`);
    expect((await cli(['providers', 'set', 'openai', '--add', '--label', 'work', '--stdin'], K.work)).code).toBe(0);
    const j = JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson;
    expect(j).toEqual({
      provider: 'openai', from: 'storage', keys: [
        { label: 'default', masked: `…${K.def.slice(-4)}`, state: null, origin: 'keychain' },
        { label: 'key2', masked: `…${K.two.slice(-4)}`, state: null, origin: 'keychain' },
        { label: 'work', masked: `…${K.work.slice(-4)}`, state: null, origin: 'keychain' },
      ],
    });
    const list = JSON.parse((await cli(['providers', 'list', '--json'])).stdout) as { providers: { provider: string; keys: number; origin: string }[] };
    expect(list.providers.find((p) => p.provider === 'openai')).toMatchObject({ keys: 3, origin: 'keychain' });
  });

  it.skipIf(skip)('a duplicate label is refused before the key is read; --label alone replaces that key', async () => {
    const dup = await cli(['providers', 'set', 'openai', '--add', '--label', 'work', '--stdin'], K.work2);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^error: the openai pool already has a key labelled "work"; replace it: gateway providers set openai --label work/);
    const unknown = await cli(['providers', 'set', 'openai', '--label', 'nope', '--stdin'], K.work2);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('has no key labelled "nope"');
    expect((await cli(['providers', 'set', 'openai', '--add', '--label', 'env1', '--stdin'], K.work2)).stderr).toMatch(/names a key from the environment/);
    expect((await cli(['providers', 'set', 'openai', '--label', 'work', '--stdin'], K.work2)).code).toBe(0);
    const j = JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson;
    expect(j.keys.map((k) => `${k.label}${k.masked}`)).toEqual([`default…${K.def.slice(-4)}`, `key2…${K.two.slice(-4)}`, `work…${K.work2.slice(-4)}`]);
  });

  it.skipIf(skip)('providers keys prints a masked table; --remove deletes one key from the keychain', async () => {
    const t = await cli(['providers', 'keys', 'openai']);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(new RegExp(`^LABEL\\s+KEY\\s+STATE\\s+ORIGIN\\ndefault\\s+…${K.def.slice(-4)}\\s+-\\s+keychain\\nkey2\\s+`));
    expect(t.stdout).toContain('The gateway is not running');
    const r = await cli(['providers', 'keys', 'openai', '--remove', 'key2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Removed the openai key "key2" from the keychain.\n');
    expect((JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson).keys.map((k) => k.label)).toEqual(['default', 'work']);
    const again = await cli(['providers', 'keys', 'openai', '--remove', 'key2']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: no openai key labelled "key2" is stored/);
  });

  it.skipIf(skip)('providers remove deletes the whole pool', async () => {
    const r = await cli(['providers', 'remove', 'openai']);
    expect(r.stdout).toBe('Removed the openai keys (default, work) from the keychain.\n');
    expect((JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson).keys).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, 'key-pools.json'), 'utf8'))).toEqual({});
  });

  it.skipIf(skip)('no key appeared in any output or state file', () => {
    for (const text of outputs) for (const k of Object.values(K)) expect(text).not.toContain(k.slice(-8));
    for (const f of ['key-pools.json', 'config.json']) {
      let text = '';
      try { text = readFileSync(join(dir, f), 'utf8'); } catch { continue; }
      for (const k of Object.values(K)) expect(text).not.toContain(k);
    }
  });
});

describe('a pool in the insecure file, seen by a running gateway', () => {
  const dir = home();
  let mock: MockProvider;
  let env: Record<string, string>;
  const cli = async (args: string[], input?: string) => record(await runCli(args, { home: dir, input, env }));
  const K = { def: keyOf('file-default'), two: keyOf('file-second') };
  beforeAll(async () => {
    mock = await startMockProvider('openai', { requireKey: false });
    env = { GATEWAY_OPENAI_BASE_URL: mock.origin, GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-bus-here')}` };
    expect((await cli(['start', '--port', '0'])).code).toBe(0);
  });
  afterAll(async () => { await cli(['stop']); await mock.close(); });

  it('--add --insecure-storage writes <provider>#<label> to the 0600 file and lists the label; the gateway reloads and holds both', async () => {
    expect((await cli(['providers', 'set', 'openai', '--stdin', '--insecure-storage'], K.def)).code).toBe(0);
    const add = await cli(['providers', 'set', 'openai', '--add', '--label', 'spare', '--stdin', '--insecure-storage'], K.two);
    expect(add.code).toBe(0);
    expect(add.stderr).toContain('WARNING: the openai key "spare" is stored UNENCRYPTED');
    expect(add.stderr).toContain('The running gateway reloaded.');
    expect(JSON.parse(readFileSync(join(dir, 'insecure-secrets.json'), 'utf8'))).toEqual({ openai: K.def, 'openai#spare': K.two });
    expect(JSON.parse(readFileSync(join(dir, 'key-pools.json'), 'utf8'))).toEqual({ openai: ['spare'] });
    expect(statSync(join(dir, 'key-pools.json')).mode & 0o777).toBe(0o600);
    const j = JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson;
    expect(j).toEqual({
      provider: 'openai', from: 'gateway', keys: [
        { label: 'default', masked: `…${K.def.slice(-4)}`, state: 'ok', origin: 'insecure-file' },
        { label: 'spare', masked: `…${K.two.slice(-4)}`, state: 'ok', origin: 'insecure-file' },
      ],
    });
  });

  it('--remove takes the key out of the running gateway at once', async () => {
    expect((await cli(['providers', 'keys', 'openai', '--remove', 'spare'])).stderr).toContain('The running gateway reloaded.');
    expect((JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson).keys.map((k) => k.label)).toEqual(['default']);
    expect(JSON.parse(readFileSync(join(dir, 'insecure-secrets.json'), 'utf8'))).toEqual({ openai: K.def });
  });
});

describe('GATEWAY_<P>_API_KEY=k1,k2 through a real daemon', () => {
  const dir = home();
  let mock: MockProvider;
  const K = [keyOf('env-one'), keyOf('env-two')] as const;
  let env: Record<string, string>;
  const cli = async (args: string[]) => record(await runCli(args, { home: dir, env }));
  beforeAll(async () => {
    mock = await startMockProvider('openai', { requireKey: false });
    env = {
      GATEWAY_OPENAI_BASE_URL: mock.origin, GATEWAY_OPENAI_API_KEY: `${K[0]},${K[1]}`,
      GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-bus-here')}`,
    };
    expect((await cli(['start', '--port', '0'])).code).toBe(0);
  });
  afterAll(async () => { await cli(['stop']); await mock.close(); });

  it('the daemon holds two keys, env1 and env2, shown masked by providers keys and status', async () => {
    const j = JSON.parse((await cli(['providers', 'keys', 'openai', '--json'])).stdout) as KeysJson;
    expect(j).toEqual({
      provider: 'openai', from: 'gateway', keys: [
        { label: 'env1', masked: `…${K[0].slice(-4)}`, state: 'ok', origin: 'environment' },
        { label: 'env2', masked: `…${K[1].slice(-4)}`, state: 'ok', origin: 'environment' },
      ],
    });
    const s = await cli(['status']);
    expect(s.stdout).toContain(`  keys      openai: env1 …${K[0].slice(-4)} ok, env2 …${K[1].slice(-4)} ok\n`);
    const sj = JSON.parse((await cli(['status', '--json'])).stdout) as { keyPools: Record<string, unknown[]> };
    expect(sj.keyPools.openai).toHaveLength(2);
  });

  it('requests reach the provider with each key in turn, never the whole list', async () => {
    const proxy = (await cli(['keys', 'create', '--name', 'app'])).stdout.trim();
    const before = mock.requests.length;
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${(JSON.parse((await cli(['status', '--json'])).stdout) as { url: string }).url}/openai/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${proxy}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    expect(mock.requests.slice(before).map((r) => r.headers.authorization)).toEqual([K[0], K[1], K[0], K[1]].map((k) => `Bearer ${k}`));
  });

  it('no key appeared in any output', () => {
    for (const text of outputs) for (const k of K) expect(text).not.toContain(k.slice(-8));
  });
});
