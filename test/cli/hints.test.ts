// Printed hints work as printed: they name the command the way the user launched it — `gateway`
// when that is this CLI on the PATH, `npx gateway` when npm launched it (a clone, where `gateway`
// is not on the PATH), else `node <script>`. The end-to-end cases run the printed command itself.
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { commandName, type Launch } from '../../src/cli/invocation.js';
import { GATEWAY_BIN, makeTempHome, REPO_ROOT } from '../helpers/cli.js';

const tmp = makeTempHome('gateway-hints-');
afterAll(() => tmp.cleanup());

// A `gateway` link to this CLI (a global install), and someone else's `gateway`.
const ours = join(tmp.dir, 'global-bin');
const theirs = join(tmp.dir, 'other-bin');
mkdirSync(ours);
mkdirSync(theirs);
symlinkSync(GATEWAY_BIN, join(ours, 'gateway'));
writeFileSync(join(theirs, 'gateway'), '#!/bin/sh\necho another program\n');
chmodSync(join(theirs, 'gateway'), 0o755);

const launch = (over: Partial<Launch> & { PATH?: string; npm?: boolean }): Launch => ({
  env: { PATH: over.PATH ?? '/usr/bin:/bin', ...(over.npm ? { npm_command: 'exec' } : {}) },
  script: over.script ?? GATEWAY_BIN,
  cwd: over.cwd ?? REPO_ROOT,
  platform: 'linux',
});

describe('the command name', () => {
  it('is `gateway` when the first gateway on the PATH is this CLI', () => {
    expect(commandName(launch({ PATH: `${ours}:/usr/bin` }))).toBe('gateway');
    expect(commandName(launch({ PATH: `${ours}:/usr/bin`, npm: true }))).toBe('gateway');
  });

  it('is not `gateway` when that name runs another program', () => {
    expect(commandName(launch({ PATH: `${theirs}:${ours}` }))).toBe('node bin/gateway.js');
  });

  it('is `npx gateway` when npm launched it, whose own node_modules/.bin on the PATH is not the shell\'s', () => {
    const npxBin = join(tmp.dir, 'cache', 'node_modules', '.bin');
    mkdirSync(npxBin, { recursive: true });
    symlinkSync(GATEWAY_BIN, join(npxBin, 'gateway'));
    expect(commandName(launch({ PATH: `${npxBin}:/usr/bin`, npm: true, script: join(npxBin, 'gateway') }))).toBe('npx gateway');
    expect(commandName(launch({ npm: true }))).toBe('npx gateway');
  });

  it('is `node <script>` otherwise: relative inside the current directory, else absolute and quoted when needed', () => {
    expect(commandName(launch({}))).toBe('node bin/gateway.js');
    expect(commandName(launch({ cwd: '/' }))).toBe(`node ${GATEWAY_BIN}`);
    expect(commandName(launch({ cwd: '/', script: "/opt/my tools/it's/bin/gateway.js" }))).toBe(`node '/opt/my tools/it'\\''s/bin/gateway.js'`);
  });
});

describe('a printed hint, run as printed', () => {
  // No `gateway` on this PATH and no npm variables: a clone run with node.
  const plainEnv = (home: string) => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEWAY_') && !k.startsWith('npm_'))),
    PATH: `${join(process.execPath, '..')}:/usr/bin:/bin`,
    GATEWAY_HOME: home,
    GATEWAY_PORT: '0',
    // Never the user's keychain.
    GATEWAY_KEYCHAIN_STORE: 'secret-service',
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home, 'no-bus-here')}`,
  });

  it('`node <script> status` names `node <script> start`, and that command starts the gateway', () => {
    const home = makeTempHome();
    const env = plainEnv(home.dir);
    try {
      const status = spawnSync(process.execPath, [GATEWAY_BIN, 'status'], { cwd: home.dir, env, encoding: 'utf8' });
      expect(status.status).toBe(3);
      const hint = /start it with: (.+)\)\n$/.exec(status.stdout)?.[1];
      expect(hint).toBe(`node ${GATEWAY_BIN} start`);
      const started = spawnSync('sh', ['-c', hint!], { cwd: home.dir, env, encoding: 'utf8', timeout: 20_000 });
      expect(started.stdout, started.stderr).toMatch(/^gateway running at http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)\n$/);
      // Every hint of that run uses the same form.
      expect(started.stderr).toBe(`logs: node ${GATEWAY_BIN} logs -f   stop: node ${GATEWAY_BIN} stop\n`);
      expect(spawnSync(process.execPath, [GATEWAY_BIN, 'status'], { cwd: home.dir, env }).status).toBe(0);
    } finally {
      spawnSync(process.execPath, [GATEWAY_BIN, 'stop'], { cwd: home.dir, env, timeout: 20_000 });
      home.cleanup();
    }
  });

  it('`npx gateway` in the clone names `npx gateway …`, which runs this CLI there', () => {
    const home = makeTempHome();
    const env = plainEnv(home.dir);
    try {
      const r = spawnSync('npx', ['--no-install', 'gateway', 'status'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 });
      expect(r.stdout, r.stderr).toBe('gateway is not running (start it with: npx gateway start)\n');
      expect(r.status).toBe(3);
      const again = spawnSync('sh', ['-c', 'npx --no-install gateway --version'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 });
      expect(again.stdout.trim()).toBe((JSON.parse(spawnSync(process.execPath, ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout) as { version: string }).version);
    } finally { home.cleanup(); }
  });
});
