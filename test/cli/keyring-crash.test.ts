// The private D-Bus session the suite runs in (scripts/keyring-session.sh, started by scripts/test.sh)
// keeps an unlocked keychain when its gnome-keyring-daemon crashes, as it sometimes does mid-suite:
// the bus restarts the daemon unlocked, on the same keyring files, instead of the system's locked
// one (after which every write failed with "unlock prompt was dismissed").
//
// This file starts a session of its own, nested, and kills only that session's daemon (the pid the
// bus names as the owner of org.freedesktop.secrets): killing the suite's shared daemon would fail
// whatever keychain call another test file, running in parallel, has in flight.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeychain, type Keychain } from '../../src/daemon/store/keychain.js';
import { REPO_ROOT } from '../helpers/cli.js';

const SECRETS = 'org.freedesktop.secrets';
const tools = ['dbus-run-session', 'dbus-send', 'gnome-keyring-daemon'].every((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0);
// As the keychain tests: a machine without the tools runs nothing here, unless under CI.
const run = process.platform === 'linux' && (tools || Boolean(process.env.CI));

let session: ChildProcessWithoutNullStreams;
let sessionErr = '';
let address = '';
let keychain: Keychain;
const daemons: number[] = []; // every pid that held the Secret Service name in the session

function busCall(method: 'NameHasOwner' | 'GetConnectionUnixProcessID'): string {
  const r = spawnSync('dbus-send', ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', `org.freedesktop.DBus.${method}`, `string:${SECRETS}`], {
    encoding: 'utf8', env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address },
  });
  return r.stdout;
}
const hasOwner = () => busCall('NameHasOwner').includes('boolean true');
function ownerPid(): number {
  const pid = Number(/uint32 (\d+)/.exec(busCall('GetConnectionUnixProcessID'))?.[1]);
  expect(pid, 'no process holds org.freedesktop.secrets in the test session').toBeGreaterThan(0);
  daemons.push(pid);
  return pid;
}
/** Running: not gone, and not a zombie (an orphan the container's init has not reaped is dead). */
function running(pid: number): boolean {
  try { return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'; } catch { return false; }
}

describe.runIf(run)('the test session keyring, after gnome-keyring-daemon crashed', () => {
  beforeAll(async () => {
    // The session lives while its command (cat) has stdin open: until afterAll, or this process dies.
    // CI=1: a keyring that does not come up unlocked fails the session instead of being a warning.
    session = spawn('bash', [join(REPO_ROOT, 'scripts', 'keyring-session.sh'), 'sh', '-c', 'echo "$DBUS_SESSION_BUS_ADDRESS"; exec cat >/dev/null'], {
      env: { ...process.env, CI: '1' },
    });
    session.stderr.setEncoding('utf8').on('data', (d: string) => { sessionErr += d; });
    address = await new Promise<string>((resolve, reject) => {
      let out = '';
      session.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      session.on('exit', (code) => reject(new Error(`the keyring session ended (${code}) before it started: ${sessionErr}`)));
    });
    keychain = openKeychain({
      // Pinned to the Secret Service: a fallback to the kernel keyring would pass without it. The
      // long timeout only covers a slow restart on a busy machine; it decides nothing.
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address, GATEWAY_KEYCHAIN_STORE: 'secret-service', GATEWAY_KEYCHAIN_SERVICE: `model-gateway-test-${process.pid}-${randomBytes(3).toString('hex')}` },
      timeoutMs: 20_000,
    });
  });

  afterAll(() => {
    if (session?.exitCode === null) session.stdin.end();
  });

  const first = randomBytes(12).toString('hex');
  const second = randomBytes(12).toString('hex');

  it('stores a new entry and still holds the one stored before the crash', async () => {
    await keychain.set('before-crash', first);
    const crashed = ownerPid();
    // Only ever this session's keyring: the pid its bus names, checked to be gnome-keyring-daemon.
    expect(readFileSync(`/proc/${crashed}/cmdline`, 'utf8')).toContain('gnome-keyring-daemon');
    process.kill(crashed, 'SIGTRAP'); // what a GLib g_error() does to it: "trap int3" in dmesg
    await expect.poll(hasOwner, { timeout: 10_000, interval: 20 }).toBe(false);

    await keychain.set('after-crash', second);
    expect(await keychain.get('before-crash')).toBe(first);
    expect(await keychain.get('after-crash')).toBe(second);
    expect(ownerPid()).not.toBe(crashed); // a new daemon answered, started by the bus
  });

  it('leaves no gnome-keyring-daemon running once the session ends', async () => {
    if (hasOwner()) ownerPid();
    expect(daemons.length).toBeGreaterThan(0);
    const ended = new Promise<number | null>((resolve) => session.on('exit', resolve));
    session.stdin.end();
    expect(session.exitCode ?? await ended, sessionErr).toBe(0);
    await expect.poll(() => daemons.filter(running), { timeout: 10_000, interval: 50 }).toEqual([]);
  });
});
