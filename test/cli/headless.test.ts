// A machine without any keychain (an SSH box, a container, CI) whose provider keys come from
// GATEWAY_*_API_KEY: start, chat and run work with nothing stored (chat and run get short-lived keys
// from the daemon, ended when they exit), env says in one line how to do without a keychain, and
// doctor calls this a warning rather than a failure. The real CLI against a real background daemon.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { baseEnv, GATEWAY_BIN, makeTempHome, REPO_ROOT, runCli, type CliResult } from '../helpers/cli.js';
import { MOCK_TEXT, startMockProvider, type MockProvider } from '../helpers/mock-provider.js';

const home = makeTempHome();
let mock: MockProvider;
let anthropic: MockProvider;
let env: Record<string, string>;
const noKeychain = (dir: string) => ({
  GATEWAY_KEYCHAIN_STORE: 'secret-service',
  DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-bus-here')}`,
  GATEWAY_KEYCHAIN_SERVICE: 'model-gateway-test-headless',
});
const cli = (args: string[], input?: string) => runCli(args, { home: home.dir, input, env });
let url = '';

interface Row { id: string; name: string; status: string }
const keyRows = async (): Promise<Row[]> => JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as Row[];
const activeSessionKeys = async () => (await keyRows()).filter((k) => /^(chat|run)\./.test(k.name) && k.status === 'active');

function oneLineError(r: CliResult, pattern: RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

beforeAll(async () => {
  mock = await startMockProvider('openai');
  anthropic = await startMockProvider('anthropic');
  env = {
    ...noKeychain(home.dir), GATEWAY_PORT: '0', GATEWAY_OPENAI_BASE_URL: mock.origin, GATEWAY_OPENAI_API_KEY: mock.key,
    GATEWAY_ANTHROPIC_BASE_URL: anthropic.origin, GATEWAY_ANTHROPIC_API_KEY: anthropic.key,
  };
});
afterAll(async () => {
  await cli(['stop']);
  await mock.close();
  await anthropic.close();
  home.cleanup();
});

describe('before the gateway runs', () => {
  it('run says in one line to start it, and runs nothing', async () => {
    oneLineError(await cli(['run', '--', 'sh', '-c', 'echo ran']), /^error: the gateway is not running \(start it with: gateway start\)$/);
  });

  it('chat says the same', async () => {
    oneLineError(await cli(['chat', 'hi']), /^error: the gateway is not running \(start it with: gateway start\)$/);
  });
});

describe('with the gateway running', () => {
  beforeAll(async () => {
    const r = await cli(['start']);
    url = /gateway running at (\S+)/.exec(r.stdout)?.[1] ?? '';
    expect(url, r.stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }, 30_000);

  it('status exits 0', async () => {
    expect((await cli(['status'])).code).toBe(0);
  });

  it('run gives the command a working key of its own, ended when it exits', async () => {
    // The command prints its key (a test may), shows the keys the gateway has meanwhile, and exits 7.
    const r = await cli(['run', '--', 'sh', '-c', 'printf "%s\\n" "$OPENAI_API_KEY" "$OPENAI_BASE_URL"; gateway keys list --json; exit 7']);
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).toBe('');
    const [key, base, ...rest] = r.stdout.split('\n');
    expect(key).toMatch(/^sk-proxy-/);
    expect(base).toBe(`${url}/openai/v1`);
    const during = (JSON.parse(rest.join('\n')) as Row[]).filter((k) => k.name.startsWith('run.'));
    expect(during).toEqual([expect.objectContaining({ status: 'active' })]);
    // Ended: gone from keys.json, refused by the gateway.
    expect(await activeSessionKeys()).toEqual([]);
    const client = new OpenAI({ baseURL: base, apiKey: key, maxRetries: 0 });
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(existsSync(join(home.dir, 'insecure-secrets.json'))).toBe(false);
  });

  it('run sets every SDK variable and propagates exit codes and signals', async () => {
    const r = await cli(['run', '--', 'sh', '-c', 'printf "%s %s %s" "$ANTHROPIC_BASE_URL" "$GOOGLE_GEMINI_BASE_URL" "${GEMINI_API_KEY%%_*}"; exit 0']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${url}/anthropic ${url}/gemini sk-proxy-`));
    expect((await cli(['run', '--', 'sh', '-c', 'kill -TERM $$'])).code).toBe(128 + 15);
    const missing = await cli(['run', '--', 'definitely-not-a-command-xyz']);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toBe('error: command not found: definitely-not-a-command-xyz\n');
    expect(await activeSessionKeys()).toEqual([]);
  });

  it('run -m <model> -- claude: Claude Code itself, pointed at the root, answers on a GPT model', async () => {
    // The real Claude Code binary from npm, headless; its HOME a fresh directory (nothing of the user's).
    const claude = join(REPO_ROOT, 'node_modules', '.bin', 'claude');
    const r = await runCli(['run', '-m', 'openai/gpt-5.4', '--', claude, '-p', 'Say hello'], { home: home.dir, env: { ...env, HOME: home.dir }, timeoutMs: 90_000 });
    expect(r.stdout, r.stderr).toContain(MOCK_TEXT);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('is unset for the command'); // nothing of the user's was in the way
    const sent = JSON.parse(mock.requests.at(-1)!.body.toString()) as { model: string; messages: unknown[] };
    expect(sent.model).toBe('gpt-5.4');
    expect(await activeSessionKeys()).toEqual([]);
  }, 120_000);

  it('env claude -m <model> prints Claude Code\'s variables: the root, a bearer token, the model and its background model', async () => {
    const r = await cli(['env', 'claude', '-m', 'openai/gpt-5.4', '--key', 'for-claude', '--insecure-storage']);
    expect(r.code, r.stderr).toBe(0);
    const vars = Object.fromEntries(r.stdout.trim().split('\n').map((l) => /^export (\w+)='(.*)'$/.exec(l)!.slice(1, 3)));
    expect(vars).toEqual({
      ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: expect.stringMatching(/^sk-proxy-/), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      ANTHROPIC_MODEL: 'openai/gpt-5.4', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'openai/gpt-5.4', ANTHROPIC_SMALL_FAST_MODEL: 'openai/gpt-5.4',
    });
  });

  it('run -m <model> -- codex: Codex CLI itself, given the gateway as its Responses provider, answers on a GPT model', async () => {
    // The real Codex binary from npm, `codex exec`; its HOME a fresh directory with no config of its own.
    const codex = join(REPO_ROOT, 'node_modules', '.bin', 'codex');
    const before = mock.requests.length;
    const r = await runCli(['run', '-m', 'openai/gpt-5.4', '--', codex, 'exec', '--skip-git-repo-check', '--color', 'never', 'Say hello'], { home: home.dir, env: { ...env, HOME: home.dir }, timeoutMs: 90_000 });
    expect(r.stdout, r.stderr).toContain(MOCK_TEXT);
    expect(r.code).toBe(0);
    const sent = mock.requests.slice(before);
    expect(sent.map((q) => `${q.method} ${q.url}`)).toEqual(['POST /v1/responses']);
    expect(JSON.parse(sent[0]!.body.toString()).model).toBe('gpt-5.4');
    expect(await activeSessionKeys()).toEqual([]);
  }, 120_000);

  it('env codex -m <model> prints the key variable and the config.toml block naming the gateway', async () => {
    const r = await cli(['env', 'codex', '-m', 'anthropic/claude-sonnet-4-5', '--key', 'for-codex', '--insecure-storage']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^export GATEWAY_API_KEY='sk-proxy-[^']+'$/);
    const block = lines.filter((l) => l.startsWith('# ') && !/^# (codex|or run)/.test(l)).map((l) => l.slice(2));
    expect(block).toEqual([
      'model_provider = "gateway"', 'model = "anthropic/claude-sonnet-4-5"', 'check_for_update_on_startup = false',
      '[model_providers.gateway]', 'name = "gateway"', `base_url = "${url}/v1"`, 'env_key = "GATEWAY_API_KEY"', 'wire_api = "responses"',
      '[analytics]', 'enabled = false', '[features]', 'plugins = false',
    ]);
  });

  it('run -m <model> -- gemini: gemini-cli itself, at the root, answers on a Claude model; the user\'s ~/.gemini is read, never written', async () => {
    // The real gemini-cli from npm, headless. The user's ~/.gemini chose Google sign-in (which would
    // bypass the gateway) and holds a GEMINI.md; run must choose API-key auth for this run only.
    const gemini = join(REPO_ROOT, 'node_modules', '.bin', 'gemini');
    const user = makeTempHome('gateway-gemini-user-');
    const tmp = makeTempHome('gateway-gemini-tmp-');
    try {
      mkdirSync(join(user.dir, '.gemini'));
      const settings = '{\n  // mine\n  "security": { "auth": { "selectedType": "oauth-personal" } },\n  "privacy": { "usageStatisticsEnabled": false }\n}\n';
      writeFileSync(join(user.dir, '.gemini', 'settings.json'), settings);
      writeFileSync(join(user.dir, '.gemini', 'GEMINI.md'), 'The user\'s own memory: zebra-crossing-42.\n');
      const before = anthropic.requests.length;
      const r = await runCli(['run', '-m', 'anthropic/claude-sonnet-4-5', '--', gemini, '--skip-trust', '-p', 'Say hello'], {
        home: home.dir, env: { ...env, HOME: user.dir, TMPDIR: tmp.dir, TERM: 'dumb' }, timeoutMs: 90_000,
      });
      expect(r.stdout, r.stderr).toContain(MOCK_TEXT);
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(/^note:/m);
      const sent = anthropic.requests.slice(before);
      expect(sent.length).toBeGreaterThan(0);
      for (const q of sent) expect(JSON.parse(q.body.toString()).model).toBe('claude-sonnet-4-5');
      expect(sent[0]!.body.toString()).toContain('zebra-crossing-42'); // their GEMINI.md, read through the overlay
      expect(readFileSync(join(user.dir, '.gemini', 'settings.json'), 'utf8')).toBe(settings);
      expect(readdirSync(tmp.dir).filter((n) => n.startsWith('gateway-tool-home-'))).toEqual([]); // the overlay is gone
      expect(await activeSessionKeys()).toEqual([]);
    } finally { user.cleanup(); tmp.cleanup(); }
  }, 120_000);

  it('env gemini -m <model> prints gemini-cli\'s variables (the root, not /gemini) and the settings.json object it needs', async () => {
    const r = await cli(['env', 'gemini', '-m', 'anthropic/claude-sonnet-4-5', '--key', 'for-gemini', '--insecure-storage']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const vars = Object.fromEntries(lines.filter((l) => l.startsWith('export ')).map((l) => /^export (\w+)='(.*)'$/.exec(l)!.slice(1, 3)));
    expect(vars).toEqual({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: expect.stringMatching(/^sk-proxy-/), GEMINI_MODEL: 'anthropic/claude-sonnet-4-5' });
    expect(lines.filter((l) => !l.startsWith('export ') && !l.startsWith('#'))).toEqual([]); // all else is comments: eval-safe
    expect(lines).toContain('# or run it as gateway run -m anthropic/claude-sonnet-4-5 -- gemini, which passes them for you.');
    const block = lines.filter((l) => l.startsWith('# ') && !/^# (gemini|or run)/.test(l)).map((l) => l.slice(2)).join('\n');
    expect(JSON.parse(block)).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    });
    const evaluated = await runCli(['run', '--', 'sh', '-c', `${r.stdout}\nprintf '%s|%s' "$GOOGLE_GEMINI_BASE_URL" "$GEMINI_MODEL"`], { home: home.dir, env });
    expect(evaluated.stdout).toBe(`${url}|anthropic/claude-sonnet-4-5`);
  });

  it('run hides GOOGLE_API_KEY, which @google/genai would prefer over GEMINI_API_KEY', async () => {
    const r = await runCli(['run', '--', 'sh', '-c', 'test -z "$GOOGLE_API_KEY"'], { home: home.dir, env: { ...env, GOOGLE_API_KEY: 'real-google-key' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('GOOGLE_API_KEY is unset for the command');
  });

  it('run still accepts --key and --insecure-storage from earlier versions, and says they are unused', async () => {
    const r = await cli(['run', '--key', 'other', '--insecure-storage', '--', 'sh', '-c', 'test -n "$GEMINI_API_KEY"']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('note: --key is ignored: run uses a short-lived key of its own (for a named key: eval "$(gateway env --key other)")\nnote: --insecure-storage is no longer needed: run stores no key\n');
  });

  it('the key run hands out reaches the provider as the provider key, never as itself', async () => {
    const before = mock.requests.length;
    const script = `const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }) }); process.stdout.write(String(r.status)); process.exit(r.ok ? 0 : 1);`;
    const r = await cli(['run', '--', process.execPath, '--input-type=module', '-e', script]);
    expect(r.stdout, r.stderr).toBe('200');
    expect(r.code).toBe(0);
    const sent = mock.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${mock.key}`);
  });

  it('chat answers with no keychain and no flag, and leaves no key behind', async () => {
    const r = await cli(['chat', '-m', 'openai/gpt-5.4', 'Say hi']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${MOCK_TEXT}\n`);
    expect(r.code).toBe(0);
    expect(await activeSessionKeys()).toEqual([]);
    // It did use a key of its own: the daemon's access log (written in batches) names it.
    await expect.poll(async () => (await cli(['logs'])).stdout, { timeout: 5_000 }).toMatch(/POST \/v1\/chat\/completions unified\/openai model=gpt-5\.4 key=chat\.[0-9a-f]{8} -> 200/);
  });

  it('a run that is killed leaves a key that expires by itself (within its lease, 10 minutes)', async () => {
    const child = spawn(process.execPath, [GATEWAY_BIN, 'run', '--', 'sleep', '20'], { env: { ...baseEnv(), ...env, GATEWAY_HOME: home.dir }, stdio: 'ignore' });
    try {
      await expect.poll(async () => (await activeSessionKeys()).length, { timeout: 10_000, interval: 200 }).toBe(1);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const raw = JSON.parse(readFileSync(join(home.dir, 'keys.json'), 'utf8')) as { keys: { name: string; createdAt: string; expiresAt: string }[] };
      const left = raw.keys.find((k) => k.name.startsWith('run.'))!;
      expect(Date.parse(left.expiresAt) - Date.parse(left.createdAt)).toBeLessThanOrEqual(10 * 60_000);
    } finally {
      child.kill('SIGKILL');
      // The orphaned `sleep` ends by itself; end the leftover key so the next tests start clean.
      for (const k of await activeSessionKeys()) await cli(['keys', 'revoke', k.id]);
    }
  });

  it('env fails in one short line naming both ways out', async () => {
    oneLineError(await cli(['env']), /^error: cannot keep a client key in a keychain: none is usable here \(see: gateway doctor\); set the variables yourself with a key from `gateway keys create`, or re-run with --insecure-storage$/);
  });

  it('doctor: no keychain with provider keys from the environment is a warning, not a failure', async () => {
    const r = await cli(['doctor']);
    expect(r.stdout).toMatch(/^! keychain: none usable here \(.*\); provider keys come from the environment — fine for start, chat and run; gateway env needs --insecure-storage/m);
    expect(r.stdout).not.toMatch(/^✗/m);
    expect(r.code).toBe(0);
    const json = JSON.parse((await cli(['doctor', '--json'])).stdout) as { id: string; ok: boolean; warning?: boolean }[];
    expect(json.find((c) => c.id === 'keychain')).toMatchObject({ ok: true, warning: true });
  });

  it('doctor in a shell without the provider variables reports the keys the running gateway has', async () => {
    // The daemon got GATEWAY_ANTHROPIC_API_KEY and GATEWAY_OPENAI_API_KEY when it started; this shell has neither.
    const shell = { home: home.dir, env: { ...env, GATEWAY_ANTHROPIC_API_KEY: undefined, GATEWAY_OPENAI_API_KEY: undefined } };
    const r = await runCli(['doctor'], shell);
    expect(r.stdout).toMatch(/^✓ anthropic key: set in the running gateway, from its environment \(GATEWAY_ANTHROPIC_API_KEY\)$/m);
    expect(r.stdout).not.toMatch(/^.*anthropic key.*503/m);
    expect(r.code, r.stdout).toBe(0);
    const checks = JSON.parse((await runCli(['doctor', '--json'], shell)).stdout) as { id: string; ok: boolean; detail: string }[];
    expect(checks.find((c) => c.id === 'provider-openai')).toMatchObject({ ok: true, detail: 'set in the running gateway, from its environment (GATEWAY_OPENAI_API_KEY)' });
    // The one it does lack, it says so of.
    expect(checks.find((c) => c.id === 'provider-gemini')).toMatchObject({ ok: true, detail: 'not set in the running gateway (requests to this provider get 503)' });
    // The daemon tells where its keys come from, never the keys.
    const status = (await runCli(['status', '--json'], shell)).stdout;
    expect(JSON.parse(status)).toMatchObject({ providerKeys: { anthropic: 'environment', openai: 'environment', gemini: 'none' } });
    for (const text of [r.stdout, status]) for (const key of [anthropic.key, mock.key]) expect(text).not.toContain(key);
  });

  it('doctor: no keychain and no provider key anywhere is a failure', async () => {
    const other = makeTempHome();
    try {
      const r = await runCli(['doctor', '--json'], { home: other.dir, env: { ...noKeychain(other.dir), GATEWAY_PORT: '0' } });
      const kc = (JSON.parse(r.stdout) as { id: string; ok: boolean; warning?: boolean; fix?: string }[]).find((c) => c.id === 'keychain')!;
      expect(kc.ok).toBe(false);
      expect(kc.warning).toBeUndefined();
      expect(kc.fix).toContain('GATEWAY_<PROVIDER>_API_KEY');
      expect(r.code).toBe(1);
    } finally { other.cleanup(); }
  });
});
