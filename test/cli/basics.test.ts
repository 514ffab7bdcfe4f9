// The CLI's surface without a keychain or daemon: help, errors, proxy keys, aliases, doctor.
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { GATEWAY_BIN, makeTempHome, runCli, type CliResult } from '../helpers/cli.js';

const home = makeTempHome();
afterAll(() => home.cleanup());
const cli = (args: string[], input?: string) => runCli(args, { home: home.dir, input });

function expectOneLineError(r: CliResult, pattern: RegExp): void {
  expect(r.code).not.toBe(0);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
}

describe('help', () => {
  const commands: [string[], string[]][] = [
    [[], ['start', 'stop', 'status', 'logs', 'providers', 'keys', 'env', 'run', 'models', 'doctor', '--version']],
    [['providers', 'set'], ['--stdin', '--insecure-storage', '<provider>']],
    [['providers', 'list'], ['--json']],
    [['providers', 'remove'], ['<provider>']],
    [['keys', 'create'], ['--name', '--expires', '--models', '--budget', '--rpm', '--tpm', '--concurrency', '--tz', '--json']],
    [['keys', 'set'], ['<id-or-name>', '--budget', '--no-budget', '--rpm', '--no-rpm', '--tpm', '--no-tpm', '--concurrency', '--no-concurrency', '--tz', '--no-tz']],
    [['keys', 'show'], ['<id-or-name>', '--json']],
    [['keys', 'list'], ['--json']],
    [['keys', 'revoke'], ['<id-or-name>']],
    [['start'], ['--port', '--host', '--foreground', '--upstream-timeout']],
    [['stop'], ['--help']],
    [['status'], ['--json']],
    [['logs'], ['--follow', '--lines']],
    [['env'], ['--key', 'proxy-key:<name>', 'OPENAI_BASE_URL', 'GOOGLE_GEMINI_BASE_URL']],
    [['run'], ['<command...>', 'is a short-lived one', 'Needs a running gateway']],
    [['models', 'alias'], ['<name>', '<target...>', 'tried in order']],
    [['models', 'fallback'], ['<model>', '[target...]', '--remove']],
    [['models', 'fallbacks'], ['--json']],
    [['models', 'unalias'], ['<name>']],
    [['models', 'aliases'], ['--json']],
    [['doctor'], ['--json']],
  ];
  for (const [cmd, mentions] of commands) {
    it(`gateway ${cmd.join(' ')} --help exits 0 and lists its options`, async () => {
      const r = await cli([...cmd, '--help']);
      expect(r.code).toBe(0);
      for (const m of mentions) expect(r.stdout).toContain(m);
    });
  }

  it('--help loads neither the keychain module, ink, react, undici nor conf', () => {
    const hook = 'data:text/javascript,' + encodeURIComponent(
      'import {registerHooks} from "node:module"; registerHooks({resolve(s,c,n){const r=n(s,c); if(/keyring|[\\/]ink[\\/]|[\\/]react[\\/]|undici|[\\/]conf[\\/]/.test(r.url)) process.stderr.write("LOADED "+r.url+"\\n"); return r;}});');
    const r = spawnSync(process.execPath, ['--import', hook, GATEWAY_BIN, '--help'], { encoding: 'utf8', env: { ...process.env, GATEWAY_HOME: home.dir } });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('LOADED');
  });

  it('--version prints the package version', async () => {
    const r = await cli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('bad input is one line on stderr and a non-zero exit', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['providers', 'set', 'mistral', '--stdin'], /mistral.*anthropic, openai, gemini/],
    [['providers', 'frob'], /unknown command 'frob'/],
    [['keys', 'create', '--bogus'], /unknown option '--bogus'/],
    [['keys', 'create', '--expires', '3x'], /--expires takes a duration/],
    [['keys', 'create', '--expires', '0d'], /--expires must be positive/],
    [['keys', 'create', '--expires', '2001-01-01'], /in the past/],
    [['keys', 'create', '--name', 'has space'], /key name "has space"/],
    [['keys', 'create', '--models', ' , '], /--models needs at least one model/],
    [['keys', 'revoke', 'nope'], /no key with id or name "nope"/],
    [['keys', 'revoke'], /missing required argument/],
    [['start', '--port', 'abc'], /'abc' is invalid.*port number/],
    [['start', '--upstream-timeout', '-1'], /positive number of seconds/],
    [['logs', '-n', 'x'], /positive whole number/],
    [['logs'], /no daemon log yet/],
    [['env', 'mistral'], /mistral.*anthropic, openai, gemini, all/],
    [['models', 'alias', 'fast', 'claude-haiku'], /must be <provider>\/<model>/],
    [['models', 'alias', 'a/b', 'openai/gpt-4o'], /alias name "a\/b"/],
    [['models', 'unalias', 'nope'], /no alias named "nope"/],
    [['status', 'extra'], /too many arguments/],
  ];
  for (const [args, pattern] of cases) {
    it(`gateway ${args.join(' ')}`, async () => expectOneLineError(await cli(args), pattern));
  }

  it('an empty or whitespace key is refused before any keychain is touched', async () => {
    expectOneLineError(await cli(['providers', 'set', 'openai', '--stdin'], '\n'), /empty input/);
    expectOneLineError(await cli(['providers', 'set', 'openai', '--stdin'], 'sk-abc def\n'), /whitespace or a line break/);
    expectOneLineError(await cli(['providers', 'set', 'openai', '--stdin'], 'sk-abc\nsk-def\n'), /whitespace or a line break/);
    expectOneLineError(await cli(['providers', 'set', 'openai', '--stdin'], 'sk-proxy-abcdefghijklmnop\n'), /proxy key/);
  });

  it('the hidden prompt needs a terminal and says to use --stdin', async () => {
    expectOneLineError(await cli(['providers', 'set', 'openai']), /no terminal.*--stdin/);
  });
});

describe('keys', () => {
  let jsonKey: { id: string; name: string; key: string; createdAt: string; expiresAt: string | null; models: string[] | null };

  it('create prints only the key on stdout, details on stderr', async () => {
    const r = await cli(['keys', 'create', '--name', 'plain']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sk-proxy-[A-Za-z0-9_-]{43}\n$/);
    expect(r.stderr).toContain('name "plain"');
    expect(r.stderr).not.toContain(r.stdout.trim());
  });

  it('create --json gives id, name, key, createdAt, expiresAt, models, limits', async () => {
    const r = await cli(['keys', 'create', '--name', 'ci', '--expires', '30d', '--models', 'gpt-4o, claude-sonnet-4-5', '--json']);
    expect(r.code).toBe(0);
    jsonKey = JSON.parse(r.stdout);
    expect(Object.keys(jsonKey).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'key', 'limits', 'models', 'name']);
    expect(jsonKey.name).toBe('ci');
    expect(jsonKey.models).toEqual(['gpt-4o', 'claude-sonnet-4-5']);
    const days = (Date.parse(jsonKey.expiresAt!) - Date.parse(jsonKey.createdAt)) / 86_400_000;
    expect(days).toBeCloseTo(30, 3);
  });

  it('a second active key with the same name is refused', async () => {
    expectOneLineError(await cli(['keys', 'create', '--name', 'ci']), /already exists/);
  });

  it('keys.json is 0600 and holds hashes, never keys', () => {
    const path = join(home.dir, 'keys.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(home.dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).not.toContain(jsonKey.key);
  });

  it('list shows metadata and status, never the key or its hash', async () => {
    const r = await cli(['keys', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ID\s+NAME\s+CREATED\s+LAST USED\s+EXPIRES\s+MODELS\s+STATUS/);
    expect(r.stdout).toMatch(new RegExp(`${jsonKey.id}\\s+ci\\s+.*gpt-4o,claude-sonnet-4-5\\s+active`));
    const j = await cli(['keys', 'list', '--json']);
    const rows = JSON.parse(j.stdout) as Record<string, unknown>[];
    expect(rows.map((k) => k.name)).toEqual(['plain', 'ci']);
    const hashes = (JSON.parse(readFileSync(join(home.dir, 'keys.json'), 'utf8')) as { keys: { hash: string }[] }).keys.map((k) => k.hash);
    for (const out of [r.stdout, j.stdout]) {
      expect(out).not.toContain('sk-proxy-');
      for (const h of hashes) expect(out).not.toContain(h);
    }
  });

  it('list shows last use from key-usage.json (written by the daemon)', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(home.dir, 'key-usage.json'), JSON.stringify({ [jsonKey.id]: '2026-01-02T03:04:05.000Z' }), { mode: 0o600 });
    const rows = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as { id: string; lastUsedAt: string | null }[];
    expect(rows.find((k) => k.id === jsonKey.id)!.lastUsedAt).toBe('2026-01-02T03:04:05.000Z');
    expect((await cli(['keys', 'list'])).stdout).toContain('2026-01-02 03:04Z');
  });

  it('revoke by name or id marks it revoked; revoking again is harmless', async () => {
    const r = await cli(['keys', 'revoke', 'ci']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Revoked key ${jsonKey.id}`);
    const again = await cli(['keys', 'revoke', jsonKey.id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already revoked');
    const rows = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as { name: string; status: string }[];
    expect(rows.find((k) => k.name === 'ci')!.status).toBe('revoked');
    // the name is free again
    expect((await cli(['keys', 'create', '--name', 'ci'])).code).toBe(0);
  });
});

describe('models aliases', () => {
  it('alias, list, unalias', async () => {
    expect((await cli(['models', 'alias', 'fast', 'anthropic/claude-haiku-4-5'])).code).toBe(0);
    expect((await cli(['models', 'alias', 'flash', 'google/gemini-2.5-flash'])).code).toBe(0);
    expect((await cli(['models', 'alias', 'fast', 'openai/gpt-4o-mini'])).code).toBe(0); // replaces
    expect(JSON.parse((await cli(['models', 'aliases', '--json'])).stdout)).toEqual({ fast: 'openai/gpt-4o-mini', flash: 'google/gemini-2.5-flash' });
    expect((await cli(['models', 'aliases'])).stdout).toMatch(/flash\s+google\/gemini-2.5-flash/);
    expect(statSync(join(home.dir, 'config.json')).mode & 0o777).toBe(0o600);
    expect((await cli(['models', 'unalias', 'fast'])).code).toBe(0);
    expect(JSON.parse((await cli(['models', 'aliases', '--json'])).stdout)).toEqual({ flash: 'google/gemini-2.5-flash' });
  });
});

describe('doctor', () => {
  it('--json lists every check with ok, title, detail, and a fix for failures', async () => {
    const r = await runCli(['doctor', '--json'], { home: home.dir, env: { HTTPS_PROXY: 'http://user:secret@proxy.example:3128', GATEWAY_PORT: '0' } });
    const checks = JSON.parse(r.stdout) as { id: string; ok: boolean; title: string; detail: string; fix?: string }[];
    expect(checks.map((c) => c.id)).toEqual(expect.arrayContaining(['node', 'state-dir', 'state-files', 'keychain', 'provider-anthropic', 'provider-openai', 'provider-gemini', 'daemon', 'proxy-env']));
    for (const c of checks) if (!c.ok) expect(c.fix).toBeTruthy();
    const proxy = checks.find((c) => c.id === 'proxy-env')!;
    expect(proxy.ok).toBe(false);
    expect(proxy.detail).toContain('HTTPS_PROXY');
    expect(proxy.detail).not.toContain('secret');
    expect(r.code).toBe(1); // a ✗ means a non-zero exit
  });

  it('human output is one ✓/✗ line per check and never shows a provider key', async () => {
    const r = await runCli(['doctor'], { home: home.dir, env: { GATEWAY_OPENAI_API_KEY: 'sk-doctor-secret-0123456789', GATEWAY_PORT: '0' } });
    const lines = r.stdout.trimEnd().split('\n');
    for (const l of lines) expect(l).toMatch(/^[✓!✗] /);
    expect(r.stdout).toMatch(/✓ openai key: set, from the environment \(GATEWAY_OPENAI_API_KEY\)/);
    expect(r.stdout).not.toContain('sk-doctor-secret');
    expect(r.stdout).not.toContain('6789');
  });

  it('flags a secret file other users can read', async () => {
    const { chmodSync } = await import('node:fs');
    chmodSync(join(home.dir, 'keys.json'), 0o644);
    const checks = JSON.parse((await runCli(['doctor', '--json'], { home: home.dir, env: { GATEWAY_PORT: '0' } })).stdout) as { id: string; ok: boolean; fix?: string }[];
    const files = checks.find((c) => c.id === 'state-files')!;
    expect(files.ok).toBe(false);
    expect(files.fix).toContain('chmod 600');
    chmodSync(join(home.dir, 'keys.json'), 0o600);
  });
});

describe('small pieces', () => {
  it('shQuote survives sh for quotes, $, backticks and spaces', async () => {
    const { shQuote } = await import('../../src/cli/common.js');
    const nasty = `it's $HOME \`id\` "x" \\ end`;
    const r = spawnSync('sh', ['-c', `eval "export V=${shQuote(nasty).replace(/["\\$`]/g, '\\$&')}"; printf %s "$V"`], { encoding: 'utf8' });
    expect(r.stdout).toBe(nasty);
  });

  it('logs -f prints lines appended after it started', async () => {
    const { appendFileSync, writeFileSync } = await import('node:fs');
    const { spawn } = await import('node:child_process');
    const log = join(home.dir, 'daemon.log');
    writeFileSync(log, 'one\ntwo\nthree\n');
    expect((await cli(['logs', '-n', '2'])).stdout).toBe('two\nthree\n');
    const child = spawn(process.execPath, [GATEWAY_BIN, 'logs', '-f', '-n', '1'], { env: { ...process.env, GATEWAY_HOME: home.dir } });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
    await expect.poll(() => out, { timeout: 5000 }).toBe('three\n');
    appendFileSync(log, 'four\n');
    await expect.poll(() => out, { timeout: 5000 }).toBe('three\nfour\n');
    child.kill();
  });
});
