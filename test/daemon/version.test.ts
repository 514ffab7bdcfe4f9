// The version lives in package.json alone: the CLI's --version and the daemon's /admin/status
// both report what it says.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { makeTempHome, runCli } from '../helpers/cli.js';

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('one version', () => {
  let gw: TestGateway;
  beforeAll(async () => { gw = await startTestGateway(); });
  afterAll(async () => { await gw.close(); });

  it('the daemon reports package.json\'s version', async () => {
    const r = await fetch(`${gw.url}/admin/status`, { headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
    expect(((await r.json()) as { version: string }).version).toBe(packageVersion);
  });

  it('gateway --version prints package.json\'s version', async () => {
    const home = makeTempHome();
    try {
      const r = await runCli(['--version'], { home: home.dir });
      expect(r.stdout.trim()).toBe(packageVersion);
    } finally { home.cleanup(); }
  });
});
