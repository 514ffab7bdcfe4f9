// `gateway keys create|set --fail-closed`, and the admin API's `failClosed`: what a key's limits do
// in team mode while the shared store is unreachable (refused, instead of served on a daemon's
// share). Stored with the key's limits, shown with them, and refused on a key without limits.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempHome, runCli } from '../helpers/cli.js';
import { startDashboardGateway } from '../dashboard/harness.js';

describe('keys --fail-closed', () => {
  const home = makeTempHome();
  afterAll(() => home.cleanup());
  const cli = (args: string[]) => runCli(args, { home: home.dir });
  const stored = (name: string) => (JSON.parse(readFileSync(join(home.dir, 'keys.json'), 'utf8')) as { keys: Array<{ name: string; limits?: unknown }> }).keys.find((k) => k.name === name)?.limits;

  it('create keeps it with the limits and says it; set turns it off and on; list and show say it', async () => {
    const r = await cli(['keys', 'create', '--name', 'ci', '--rpm', '60', '--fail-closed', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).limits).toEqual({ rpm: 60, failClosed: true });
    expect(stored('ci')).toEqual({ rpm: 60, failClosed: true });
    expect((await cli(['keys', 'list'])).stdout).toMatch(/ci .*60 rpm · fail-closed/);
    expect((await cli(['keys', 'show', 'ci'])).stdout).toMatch(/fail-closed\s+refused while the shared store is unreachable/);

    const off = await cli(['keys', 'set', 'ci', '--no-fail-closed']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toBe(`Key ${JSON.parse(r.stdout).id} ("ci") limits: 60 rpm.\n`);
    expect(stored('ci')).toEqual({ rpm: 60 });
    expect((await cli(['keys', 'set', 'ci', '--fail-closed'])).code).toBe(0);
    expect(stored('ci')).toEqual({ rpm: 60, failClosed: true });
  });

  it('is refused on a key without limits, naming the flag', async () => {
    const r = await cli(['keys', 'create', '--name', 'plain', '--fail-closed']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("error: --fail-closed only says what a key's limits do while the shared store is unreachable, and this key has no limits; give it a budget, rpm, tpm or concurrency too\n");
    expect(stored('plain')).toBeUndefined();
  });
});

it('the admin API takes failClosed with a key\'s limits, and refuses anything but true or false', async () => {
  const gw = await startDashboardGateway();
  try {
    const auth = { authorization: `Bearer ${gw.daemon.adminToken}` };
    const created = await gw.raw('POST', '/admin/keys', { headers: auth, body: { name: 'team', budget: '5/day', failClosed: true } });
    expect(created.status).toBe(201);
    expect(created.json.record.limits).toEqual({ budget: { usd: 5, period: 'day' }, failClosed: true });
    const id = created.json.record.id as string;
    const bad = await gw.raw('PATCH', `/admin/keys/${id}`, { headers: auth, body: { failClosed: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toBe('failClosed must be true or false, got "yes"');
    const off = await gw.raw('PATCH', `/admin/keys/${id}`, { headers: auth, body: { failClosed: false } });
    expect(off.json.key.limits).toEqual({ budget: { usd: 5, period: 'day' } });
  } finally {
    await gw.close();
  }
});
