// `gateway keys create|set|show|list` with limits, run as a user runs them: limits written with the
// key, bad values refused naming the flag, and, against a running daemon, a change that holds from
// the very next request and what each key used and has left of its limits.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

function expectUsageError(r: CliResult, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
}

describe('without a daemon', () => {
  const home = makeTempHome();
  afterAll(() => home.cleanup());
  const cli = (args: string[]) => runCli(args, { home: home.dir });
  const stored = () => (JSON.parse(readFileSync(join(home.dir, 'keys.json'), 'utf8')) as { keys: Array<{ name: string; limits?: unknown }> }).keys;

  it('create writes the limits with the key and says them', async () => {
    const r = await cli(['keys', 'create', '--name', 'ci', '--budget', '5/day', '--rpm', '60', '--tpm', '200000', '--concurrency', '4', '--tz', 'Europe/Berlin', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const limits = { budget: { usd: 5, period: 'day' }, rpm: 60, tpm: 200000, concurrency: 4, tz: 'Europe/Berlin' };
    expect(JSON.parse(r.stdout).limits).toEqual(limits);
    expect(stored().find((k) => k.name === 'ci')!.limits).toEqual(limits);
    const plain = await cli(['keys', 'create', '--name', 'total', '--budget', '$12.50']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^sk-proxy-\S+\n$/); // still only the key on stdout
    expect(plain.stderr).toContain('limits: $12.50 total');
  });

  it('refuses a value it cannot use, naming the flag, and writes nothing', async () => {
    const before = stored().length;
    const cases: Array<[string[], RegExp]> = [
      [['--budget', 'abc'], /^error: --budget must be an amount in USD with an optional period: 5\/day.*got "abc"/],
      [['--budget', '5/fortnight'], /--budget must be an amount in USD .*got "5\/fortnight"/],
      [['--budget', '0'], /--budget must be more than 0 USD/],
      [['--rpm', '-1'], /^error: --rpm must be a whole number greater than 0, got "-1"/],
      [['--rpm', '1.5'], /--rpm must be a whole number greater than 0, got "1.5"/],
      [['--tpm', 'lots'], /--tpm must be a whole number/],
      [['--concurrency', '0'], /--concurrency must be a whole number greater than 0/],
      [['--budget', '5/day', '--tz', 'Mars/Base'], /^error: --tz must be an IANA time zone such as UTC or Europe\/Berlin, got "Mars\/Base"/],
      [['--rpm', '5', '--tz', 'UTC'], /--tz sets the calendar a budget's day, week and month follow, and this key has no budget/],
    ];
    for (const [flags, pattern] of cases) expectUsageError(await cli(['keys', 'create', '--name', 'nope', ...flags]), pattern);
    expect(stored().length).toBe(before);
  });

  it('set changes some limits, keeps the others, and --no-… removes one', async () => {
    const r = await cli(['keys', 'set', 'ci', '--budget', '10/week', '--no-rpm', '--no-tz']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Key [0-9a-f]{8} \("ci"\) limits: \$10\.00\/week · 200000 tpm · 4 at once\.\n$/);
    expect(stored().find((k) => k.name === 'ci')!.limits).toEqual({ budget: { usd: 10, period: 'week' }, tpm: 200000, concurrency: 4 });
    await cli(['keys', 'set', 'ci', '--no-budget', '--no-tpm', '--no-concurrency']);
    expect(stored().find((k) => k.name === 'ci')!.limits).toBeUndefined();
    await cli(['keys', 'set', 'ci', '--budget', '5/day', '--rpm', '60', '--tpm', '200000', '--concurrency', '4', '--tz', 'Europe/Berlin']);
  });

  it('set with nothing to change, a bad value or an unknown key is an error', async () => {
    expectUsageError(await cli(['keys', 'set', 'ci']), /nothing to change: give one or more of --budget, --rpm/);
    expectUsageError(await cli(['keys', 'set', 'ci', '--rpm', '1.5']), /--rpm must be a whole number/);
    expectUsageError(await cli(['keys', 'set', 'total', '--no-budget', '--tz', 'UTC']), /--tz sets the calendar/);
    const unknown = await cli(['keys', 'set', 'ghost', '--rpm', '5']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: no key with id or name "ghost"/);
    expect(stored().find((k) => k.name === 'total')!.limits).toEqual({ budget: { usd: 12.5, period: 'total' } });
  });

  it('show and list give the limits, and say the used amounts need the running gateway', async () => {
    const show = await cli(['keys', 'show', 'ci']);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/^id\s+[0-9a-f]{8}$/m);
    expect(show.stdout).toMatch(/^status\s+active$/m);
    expect(show.stdout).toMatch(/^budget\s+\$5\.00\/day \(Europe\/Berlin\) \(used: daemon not running\)$/m);
    expect(show.stdout).toMatch(/^rpm\s+60 requests a minute \(used: daemon not running\)$/m);
    expect(show.stdout).toMatch(/^concurrency\s+4 requests at once \(used: daemon not running\)$/m);
    const json = JSON.parse((await cli(['keys', 'show', 'total', '--json'])).stdout);
    expect(json).toMatchObject({ name: 'total', status: 'active', limits: { budget: { usd: 12.5, period: 'total' } }, standing: null });
    expect(JSON.stringify(json)).not.toMatch(/sk-proxy-|[0-9a-f]{64}/);
    const list = await cli(['keys', 'list']);
    expect(list.stdout).toMatch(/STATUS\s+LIMITS\n/);
    expect(list.stdout).toMatch(/\sci\s.*active\s+\$5\.00\/day \(Europe\/Berlin\) · 60 rpm · 200000 tpm · 4 at once\n/);
    expect(list.stdout).toMatch(/\stotal\s.*active\s+\$12\.50 total\n/);
    expect(list.stderr).toContain('Used amounts of the limits are not shown: daemon not running.');
    expect((await cli(['keys', 'show', 'ghost'])).stderr).toMatch(/no key with id or name "ghost"/);
  });
});

describe('with the gateway running', () => {
  let gw: GatewayProcess;
  let key = '';
  beforeAll(async () => {
    gw = await startGatewayProcess();
    key = (await gw.cli(['keys', 'create', '--name', 'agent'])).stdout.trim();
  }, 60_000);
  afterAll(async () => { await gw?.close(); });

  const call = (model = 'openai/gpt-4o') => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const showJson = async () => JSON.parse((await gw.cli(['keys', 'show', 'agent', '--json'])).stdout) as { limits: unknown; standing: any };

  it('keys set holds the key to a new limit from its very next request', async () => {
    for (let i = 0; i < 3; i++) expect((await call()).status).toBe(200); // no limit yet
    const set = await gw.cli(['keys', 'set', 'agent', '--rpm', '1']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain('The running gateway reloaded.');
    const upstream = gw.mocks.openai.requests.length;
    expect((await call()).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-gateway-limit')).toBe('rpm');
    expect((await refused.json() as { error: { message: string } }).error.message).toMatch(/limited to 1 requests a minute/);
    expect(gw.mocks.openai.requests.length).toBe(upstream + 1);
  });

  it('show and list say what the key used and has left', async () => {
    const show = await gw.cli(['keys', 'show', 'agent']);
    expect(show.stdout).toMatch(/^rpm\s+1 requests a minute: 1 in the last minute, 0 left$/m);
    expect((await showJson()).standing).toEqual({ rpm: { max: 1, used: 1, left: 0 } });
    const list = await gw.cli(['keys', 'list']);
    expect(list.stdout).toMatch(/\sagent\s.*active\s+1 of 1 rpm\n/);
    expect(list.stderr).not.toContain('not shown');
    const rows = JSON.parse((await gw.cli(['keys', 'list', '--json'])).stdout) as Array<{ name: string; standing: unknown }>;
    expect(rows.find((r) => r.name === 'agent')!.standing).toEqual({ rpm: { max: 1, used: 1, left: 0 } });
  });

  it('a budget\'s spend is what the usage history charged the key, and its refusal says so', async () => {
    const set = await gw.cli(['keys', 'set', 'agent', '--no-rpm', '--budget', '5/day']);
    expect(set.code, set.stderr).toBe(0);
    expect((await call()).status).toBe(200);
    const usage = JSON.parse((await gw.cli(['usage', '--by', 'key', '--json'])).stdout) as { rows: Array<{ label: string; cost: number }> };
    const charged = usage.rows.find((r) => r.label === 'agent')!.cost;
    expect(charged).toBeGreaterThan(0);
    const { standing } = await showJson();
    expect(standing.budget.spent).toBeCloseTo(charged, 8);
    expect(standing.budget).toMatchObject({ max: 5, period: 'day', held: 0, resetsAt: expect.stringMatching(/T00:00:00\.000Z$/) });
    const show = await gw.cli(['keys', 'show', 'agent']);
    expect(show.stdout).toMatch(/^budget\s+\$5\.00\/day: \$0\.\d{4} of \$5\.00 today, \$[\d.]+ left, resets \w{3} \d{1,2} 00:00 UTC$/m);

    // A budget smaller than what the next request could cost refuses it before it goes upstream.
    await gw.cli(['keys', 'set', 'agent', '--budget', String(charged + 0.0001)]);
    const upstream = gw.mocks.openai.requests.length;
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-gateway-limit')).toBe('budget');
    expect(gw.mocks.openai.requests.length).toBe(upstream);
    const list = await gw.cli(['keys', 'list']);
    expect(list.stdout).toMatch(/\sagent\s.*active\s+\$0\.\d{4} of \$0\.\d{2,} total\n/);
  });
});
