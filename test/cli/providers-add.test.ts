// `gateway providers add|list|test|remove` run as a user runs them (the spawned CLI), with the real
// keychain (gnome-keyring under dbus-run-session, see scripts/test.sh; a unique service name per
// run) and without one (--insecure-storage), against loopback mock servers; and a running daemon
// that picks up a provider added, changed or removed at once, without a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKeychain } from '../../src/daemon/store/keychain.js';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { MOCK_TEXT, startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { closedPort } from '../helpers/ports.js';

const SERVICE = `model-gateway-test-${process.pid}-${randomBytes(3).toString('hex')}`;
const home = makeTempHome();
const env = { GATEWAY_KEYCHAIN_SERVICE: SERVICE };
const cli = (args: string[], input?: string, extra: Record<string, string | undefined> = {}) => runCli(args, { home: home.dir, input, env: { ...env, ...extra } });
const keychain = openKeychain({ env: { ...process.env, ...env } });

const probe = JSON.parse((await cli(['providers', 'list', '--json'])).stdout) as { keychain: { available: boolean; name: string; error?: string } };
const skip = !probe.keychain.available && !process.env.CI;
if (skip) console.warn(`keychain tests skipped: no keychain answers here (${probe.keychain.error}); run them with npm test, or set CI=1 to make this a failure`);

let router: MockProvider; // OpenAI Chat under /api, with a key
let other: MockProvider; // a second OpenAI Chat server, for a changed base URL
let local: MockProvider; // a local server that takes no key
let downPort = 0;
let daemonUrl = '';
const outputs: string[] = [];
const record = (r: CliResult) => { outputs.push(r.stdout, r.stderr); return r; };

beforeAll(async () => {
  [router, other, local] = await Promise.all([
    startMockProvider('openai', { mount: '/api', key: `sk-or-${randomBytes(16).toString('hex')}` }),
    startMockProvider('openai', { key: `sk-other-${randomBytes(16).toString('hex')}` }),
    startMockProvider('openai', { requireKey: false }),
  ]);
  downPort = await closedPort();
});

afterAll(async () => {
  await cli(['stop']);
  if (!skip) for (const p of ['router', 'hot']) await keychain.delete(p).catch(() => false);
  await Promise.all([router, other, local].map((m) => m?.close()));
  home.cleanup();
});

type Row = { provider: string; source: string; protocol: string; baseUrl: string; quirks: string | null; keyless: boolean; configured: boolean; origin: string | null; last4: string | null; envVar: string | null; headers: string[] };
const listed = async (): Promise<Row[]> => (JSON.parse(record(await cli(['providers', 'list', '--json'])).stdout) as { providers: Row[] }).providers;

describe.skipIf(skip)('providers add / list / test / remove with the real keychain', () => {
  it('add --protocol --base-url --stdin keeps the key in the keychain under the provider\'s name, never in config.json', async () => {
    const r = record(await cli(['providers', 'add', 'router', '--protocol', 'openai-chat', '--base-url', `${router.origin}/api/v1/`, '--header', 'X-Title=gateway test', '--stdin'], router.key + '\n'));
    expect(r.stderr).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Added provider router: openai-chat at ${router.origin}/api/v1; key (…${router.key.slice(-4)}) stored in ${probe.keychain.name}.`);
    expect(r.stdout).toContain(`/router/v1/chat/completions → ${router.origin}/api/v1/chat/completions`);
    expect(await keychain.get('router')).toBe(router.key);
    const config = readFileSync(join(home.dir, 'config.json'), 'utf8');
    expect(config).not.toContain(router.key);
    expect(JSON.parse(config).providers.router).toEqual({ protocol: 'openai-chat', baseUrl: `${router.origin}/api/v1`, headers: { 'x-title': 'gateway test' } });
  });

  it('add --preset for a local server asks for no key', async () => {
    const r = record(await cli(['providers', 'add', 'ollama', '--preset', 'ollama', '--base-url', `${local.origin}/v1`]));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('takes no key: no credential is ever sent to it');
  });

  it('list shows every provider, built-in and added, with protocol, base URL, key source and profile', async () => {
    const rows = await listed();
    expect(rows.map((p) => p.provider)).toEqual(['anthropic', 'openai', 'gemini', 'router', 'ollama']);
    expect(rows.find((p) => p.provider === 'router')).toMatchObject({ source: 'configured', protocol: 'openai-chat', baseUrl: `${router.origin}/api/v1`, configured: true, origin: 'keychain', last4: router.key.slice(-4), envVar: 'GATEWAY_ROUTER_API_KEY', headers: ['x-title'], quirks: null });
    expect(rows.find((p) => p.provider === 'ollama')).toMatchObject({ keyless: true, configured: true, origin: null, quirks: 'ollama', envVar: null });
    expect(rows.find((p) => p.provider === 'openai')).toMatchObject({ source: 'builtin', protocol: 'openai-chat', baseUrl: 'https://api.openai.com' });
    const human = record(await cli(['providers', 'list'])).stdout;
    expect(human).toMatch(new RegExp(`router\\s+configured\\s+keychain\\s+…${router.key.slice(-4)}\\s+openai-chat\\s+${router.origin.replace(/\./g, '\\.')}/api/v1\\s+-\\s+added`));
    expect(human).toMatch(/ollama\s+no key needed\s+-\s+-\s+openai-chat\s+\S+\s+ollama\s+added from preset ollama/);
  });

  it('GATEWAY_<NAME>_API_KEY overrides the stored key', async () => {
    const rows = JSON.parse(record(await cli(['providers', 'list', '--json'], undefined, { GATEWAY_ROUTER_API_KEY: 'sk-from-env-0123456789abcd' })).stdout).providers as Row[];
    expect(rows.find((p) => p.provider === 'router')).toMatchObject({ origin: 'environment', last4: 'abcd' });
  });

  it('test says it works, and names the model that answered', async () => {
    const r = record(await cli(['providers', 'test', 'router']));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ok\s+models list\s+1 model: gpt-5\.4/);
    expect(r.stdout).toContain(`router: works: gpt-5.4 answered`);
    expect(router.requests.at(-1)!.url).toBe('/api/v1/chat/completions');
    expect(router.requests.at(-1)!.headers['x-title']).toBe('gateway test');
    const local0 = record(await cli(['providers', 'test', 'ollama']));
    expect(local0.code).toBe(0);
    expect(local.requests.every((q) => q.headers.authorization === undefined)).toBe(true);
  });

  it('doctor asks each added provider: reachable, key accepted, protocol answering', async () => {
    const r = record(await cli(['doctor', '--json']));
    const checks = JSON.parse(r.stdout) as { id: string; ok: boolean; detail: string }[];
    expect(checks.find((c) => c.id === 'provider-router-works')).toMatchObject({ ok: true, detail: 'works: gpt-5.4 answered' });
    expect(checks.find((c) => c.id === 'provider-ollama-works')).toMatchObject({ ok: true });
    const bad = JSON.parse(record(await cli(['doctor', '--json'], undefined, { GATEWAY_ROUTER_API_KEY: 'sk-wrong-0123456789' })).stdout) as { id: string; ok: boolean; detail: string }[];
    expect(bad.find((c) => c.id === 'provider-router-works')).toMatchObject({ ok: false, detail: expect.stringMatching(/^wrong key/) });
  });

  it('test says plainly: wrong key', async () => {
    const r = record(await cli(['providers', 'test', 'router'], undefined, { GATEWAY_ROUTER_API_KEY: 'sk-wrong-0123456789' }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/router: wrong key: router refused it \(HTTP 401: Incorrect API key/);
  });

  it('test says plainly: the model does not exist', async () => {
    router.setHandler((q) => (q.method === 'POST' ? {
      status: 404, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { message: 'The model `nope-1` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } }),
    } : undefined));
    try {
      const r = record(await cli(['providers', 'test', 'router', '--model', 'nope-1']));
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/router: model does not exist: router has no "nope-1"/);
    } finally { router.setHandler(undefined); }
  });

  it('test says plainly: wrong protocol, and unreachable', async () => {
    expect(record(await cli(['providers', 'add', 'confused', '--protocol', 'anthropic', '--base-url', local.origin, '--no-key'])).code).toBe(0);
    const wrong = record(await cli(['providers', 'test', 'confused']));
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/confused: wrong protocol: \/v1\/messages is not there \(HTTP 404\)/);
    expect(record(await cli(['providers', 'add', 'gone', '--protocol', 'openai-chat', '--base-url', `http://127.0.0.1:${downPort}/v1`, '--no-key'])).code).toBe(0);
    const gone = record(await cli(['providers', 'test', 'gone']));
    expect(gone.code).toBe(1);
    expect(gone.stdout).toMatch(new RegExp(`gone: unreachable: cannot reach gone at http://127\\.0\\.0\\.1:${downPort} \\(ECONNREFUSED\\)`));
    for (const p of ['confused', 'gone']) expect(record(await cli(['providers', 'remove', p])).code).toBe(0);
  });

  it('bad input is one line and changes nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['providers', 'add', 'openai', '--preset', 'groq'], /"openai" is the built-in OpenAI provider/],
      [['providers', 'add', 'x1'], /give --preset <preset>, or both --protocol and --base-url/],
      [['providers', 'add', 'x1', '--protocol', 'openai-chat', '--base-url', 'http://h/v1', '--header', 'Authorization=Bearer sk-x', '--no-key'], /carries a credential/],
      [['providers', 'add', 'x1', '--preset', 'azure', '--stdin'], /needs --resource/],
      [['providers', 'add', 'x1', '--preset', 'nosuch'], /Allowed choices are .*ollama/],
      [['providers', 'set', 'ollama', '--stdin'], /ollama was added with --no-key/],
    ];
    for (const [args, re] of cases) {
      const r = record(await cli(args, 'sk-something-0123456789'));
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(re);
    }
    expect((await listed()).map((p) => p.provider)).toEqual(['anthropic', 'openai', 'gemini', 'router', 'ollama']);
  });

  describe('a running gateway picks providers up at once', () => {
    let proxyKey = '';
    const ask = async (model: string) => {
      const res = await fetch(`${daemonUrl}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };

    it('starts with the providers added so far', async () => {
      const r = record(await cli(['start', '--port', '0']));
      expect(r.code).toBe(0);
      daemonUrl = /gateway running at (http:\/\/\S+)/.exec(r.stdout)![1]!;
      proxyKey = record(await cli(['keys', 'create', '--name', 'app'])).stdout.trim();
      const res = await ask('router/some/model');
      expect(res.status).toBe(200);
      expect(res.body.choices[0].message.content).toBe(MOCK_TEXT);
      expect(router.requests.at(-1)!.headers.authorization).toBe(`Bearer ${router.key}`);
    });

    it('added: usable on the next request', async () => {
      expect((await ask('hot/m')).status).toBe(400);
      const r = record(await cli(['providers', 'add', 'hot', '--protocol', 'openai-chat', '--base-url', `${other.origin}/v1`, '--stdin'], other.key));
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('The running gateway reloaded.');
      const res = await ask('hot/m');
      expect(res.status).toBe(200);
      expect(other.requests.at(-1)!.headers.authorization).toBe(`Bearer ${other.key}`);
    });

    it('changed: the next request goes to the new base URL, with the same key', async () => {
      const before = router.requests.length;
      const r = record(await cli(['providers', 'add', 'hot', '--protocol', 'openai-chat', '--base-url', `${router.origin}/api/v1`, '--stdin'], router.key));
      expect(r.stdout).toContain('Updated provider hot');
      expect((await ask('hot/m')).status).toBe(200);
      expect(router.requests.length).toBe(before + 1);
      expect(router.requests.at(-1)!.url).toBe('/api/v1/chat/completions');
    });

    it('removed: refused on the next request, and its key is gone from the keychain', async () => {
      const r = record(await cli(['providers', 'remove', 'hot']));
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('Removed the hot provider and its key from the keychain.\n');
      const res = await ask('hot/m');
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/model "hot\/m" does not name a provider/);
      expect(await keychain.get('hot')).toBeUndefined();
    });

    it('config.json edited by hand is picked up too', async () => {
      const path = join(home.dir, 'config.json');
      const config = JSON.parse(readFileSync(path, 'utf8'));
      config.providers.handmade = { protocol: 'openai-chat', baseUrl: `${local.origin}/v1`, noKey: true };
      writeFileSync(path, JSON.stringify(config));
      // The daemon watches the file: wait (bounded) for the provider to answer.
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await ask('handmade/m')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(200);
    });
  });

  it('remove deletes the provider and its key', async () => {
    const r = record(await cli(['providers', 'remove', 'router']));
    expect(r.stdout).toContain('Removed the router provider and its key from the keychain.');
    expect(await keychain.get('router')).toBeUndefined();
    expect((await listed()).map((p) => p.provider)).not.toContain('router');
  });

  it('no key was ever printed', () => {
    for (const o of outputs) for (const k of [router.key, other.key]) expect(o).not.toContain(k);
  });
});

describe.runIf(process.platform === 'linux')('providers add without a usable keychain', () => {
  const noKc = makeTempHome();
  afterAll(() => noKc.cleanup());
  const NO_KEYCHAIN = { GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(noKc.dir, 'no-bus-here')}`, GATEWAY_KEYCHAIN_SERVICE: SERVICE };
  const run = (args: string[], input?: string) => runCli(args, { home: noKc.dir, input, env: NO_KEYCHAIN });
  const KEY = `sk-insecure-${randomBytes(16).toString('hex')}`;

  it('fails in one line offering --insecure-storage, and adds nothing', async () => {
    const r = await run(['providers', 'add', 'deepseek', '--preset', 'deepseek', '--stdin'], KEY);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot store the key in a keychain: .*--insecure-storage/);
    const rows = JSON.parse((await run(['providers', 'list', '--json'])).stdout).providers as Row[];
    expect(rows.map((p) => p.provider)).not.toContain('deepseek');
  });

  it('with --insecure-storage: the key in the 0600 file, the provider in config.json, list and remove', async () => {
    const r = await run(['providers', 'add', 'deepseek', '--preset', 'deepseek', '--stdin', '--insecure-storage'], KEY);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/WARNING: .*UNENCRYPTED/);
    expect(r.stdout).toContain('Added provider deepseek: openai-chat at https://api.deepseek.com; key (…');
    const file = join(noKc.dir, 'insecure-secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ deepseek: KEY });
    expect(readFileSync(join(noKc.dir, 'config.json'), 'utf8')).not.toContain(KEY);
    const rows = JSON.parse((await run(['providers', 'list', '--json'])).stdout).providers as Row[];
    expect(rows.find((p) => p.provider === 'deepseek')).toMatchObject({ origin: 'insecure-file', quirks: 'deepseek', baseUrl: 'https://api.deepseek.com', protocol: 'openai-chat' });
    const rm = await run(['providers', 'remove', 'deepseek']);
    expect(rm.stdout).toContain('Removed the deepseek provider and its key from the insecure file.');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({});
  });
});
