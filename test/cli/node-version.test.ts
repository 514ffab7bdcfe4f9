// One minimum Node version (package.json engines.node), checked by `gateway`, `gateway doctor` and
// `npm test`: a too-old Node gets one line saying what is needed and how to get it, and nothing
// runs on it. The old Node is the system one (/usr/bin/node, Node 20 on these machines and on CI).
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { howToGetNode, nodeVersionProblem, parseMinimum, requiredRange, satisfies } from '../../bin/node-check.js';
import { checkNode } from '../../src/cli/doctor-checks.js';
import { GATEWAY_BIN, makeTempHome, REPO_ROOT } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

describe('the minimum comes from package.json engines.node', () => {
  it('reads the range there', () => {
    expect(requiredRange()).toBe(pkg.engines.node);
    expect(parseMinimum(pkg.engines.node)).toHaveLength(3);
  });

  it('compares whole versions, not only the major', () => {
    expect(satisfies('22.12.0', '>=22.19.0')).toBe(false);
    expect(satisfies('v22.18.9', '>=22.19.0')).toBe(false);
    expect(satisfies('20.20.2', '>=22.19.0')).toBe(false);
    expect(satisfies('22.19.0', '>=22.19.0')).toBe(true);
    expect(satisfies('22.20.1', '>=22.19.0')).toBe(true);
    expect(satisfies('23.0.0', '>=22.19.0')).toBe(true);
    expect(satisfies('24.1.0', '>=22.19.0')).toBe(true);
    expect(satisfies('22.19.0', '>=22')).toBe(true);
  });

  it('refuses a range it cannot check instead of passing everything', () => {
    expect(() => parseMinimum('^22.19.0')).toThrow(/engines\.node must be ">=X\.Y\.Z"/);
  });

  it('the message names the need, the version found and how to get one', () => {
    expect(nodeVersionProblem('gateway', '22.19.0', '>=22.19.0')).toBeUndefined();
    const msg = nodeVersionProblem('gateway', '22.12.0', '>=22.19.0');
    expect(msg).toBe(`gateway needs Node.js >=22.19.0 (package.json engines.node); this is v22.12.0. ${howToGetNode()}`);
    // In a clone the repo's own script is the way; the hint is a command that works as printed.
    expect(howToGetNode(REPO_ROOT)).toBe('Get one: export PATH="$(bash scripts/ensure-node.sh):$PATH"');
    expect(howToGetNode('/')).toBe(`Get one: export PATH="$(bash ${join(REPO_ROOT, 'scripts', 'ensure-node.sh')}):$PATH"`);
  });

  it('doctor judges a Node by the same rule as the CLI', () => {
    expect(checkNode('22.12.0')).toMatchObject({ ok: false, detail: `v22.12.0 is too old: gateway needs ${pkg.engines.node}` });
    expect(checkNode('22.12.0').fix).toMatch(/ensure-node\.sh/);
    expect(checkNode('24.0.0')).toMatchObject({ ok: true, detail: `v24.0.0 (needs ${pkg.engines.node})` });
  });
});

// The system Node of these machines (and CI's) is older than the minimum.
const OLD_NODE = '/usr/bin/node';
const oldVersion = existsSync(OLD_NODE) ? spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim() : '';
const haveOld = oldVersion !== '' && !satisfies(oldVersion, pkg.engines.node);
if (!haveOld && !process.env.CI) console.warn(`old-Node tests skipped: ${OLD_NODE} is missing or new enough (${oldVersion || 'none'}); set CI=1 to make this a failure`);

describe.skipIf(!haveOld && !process.env.CI)(`on a too-old Node (${OLD_NODE} ${oldVersion})`, () => {
  it('the system Node is too old (else this block proves nothing)', () => {
    expect(haveOld, `${OLD_NODE} is ${oldVersion || 'missing'}`).toBe(true);
  });

  it('gateway exits 1 with one line: the minimum, this version, how to get one', () => {
    const home = makeTempHome();
    try {
      const r = spawnSync(OLD_NODE, [GATEWAY_BIN, 'status'], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, GATEWAY_HOME: home.dir }, timeout: 20_000 });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: gateway needs Node.js ${pkg.engines.node} (package.json engines.node); this is v${oldVersion}. Get one: export PATH="$(bash scripts/ensure-node.sh):$PATH"\n`);
    } finally { home.cleanup(); }
  });

  it('npm test stops at once with one line instead of running the suite on it', () => {
    // Only the old Node's directory on the PATH, as on a fresh machine. The filter matches no test
    // file, so that a broken check costs a build, never a recursive run of this suite.
    const r = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'test.sh'), 'no-such-test-file-xyz'], {
      cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000,
      env: { HOME: process.env.HOME, PATH: `/usr/bin:/bin`, GATEWAY_TEST_IN_DBUS: '1' },
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: npm test needs Node.js ${pkg.engines.node} (package.json engines.node); this is v${oldVersion}. Get one: export PATH="$(bash scripts/ensure-node.sh):$PATH"\n`);
  });

  it('ensure-node.sh prints a directory whose node is new enough, not the old one', () => {
    const r = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'ensure-node.sh')], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, PATH: `/usr/bin:/bin` } });
    expect(r.status, r.stderr).toBe(0);
    const dir = r.stdout.trim();
    expect(dir).not.toBe('/usr/bin');
    const v = spawnSync(join(dir, 'node'), ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    expect(satisfies(v, pkg.engines.node)).toBe(true);
  });
});
