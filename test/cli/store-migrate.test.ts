// `gateway store migrate`, as a user moves a laptop to team mode: a laptop daemon (`gateway start`,
// no store) used for real against mock providers (keys of every kind, a budget set after the key
// had spent, a stored Responses answer), then stopped and copied into a real PostgreSQL database
// with the real CLI. A team daemon started on that database in another state directory accepts the
// laptop's keys and refuses its revoked one, shows the laptop's usage, continues its conversation
// and holds its key to the budget the laptop had spent; the laptop's files are untouched; a second
// run copies nothing; a running daemon and a bad store URL are refused in one line, without the
// password; and the laptop's own directory started on the store counts no request twice.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageGroup, UsageTotals } from '../../src/daemon/observe/usage/queries.js';
import { UsageStore, type UsageRow } from '../../src/daemon/observe/usage/store.js';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { closedPort } from '../helpers/ports.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { anthropicScript, FINAL_TEXT } from '../helpers/scripted-providers.js';
import { until } from '../helpers/wait.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

/** The test server's password (set once it runs): no error may show it. */
let PASSWORD = '';
const model = 'anthropic/claude-sonnet-4-5';

let postgres: TestPostgres;
let storeUrl = '';
let laptop: GatewayProcess;
const keys = { app: '', ci: '', old: '', admin: '', session: '' };
let answerId = '';
/** What the laptop's daemon said before it stopped. */
let laptopUsage: { totals: UsageTotals; rows: UsageGroup[] };
let laptopSpent = 0;
let laptopKeys: Array<Record<string, unknown>> = [];
/** The first migration's counts. */
let first: { keys: Counts; usage: Counts; limits: Counts; responses: Counts };
interface Counts { copied: number; already: number }

let team: { home: { dir: string; cleanup(): void }; url: string; pid: number; cli(args: string[], env?: Record<string, string | undefined>): Promise<CliResult> } | undefined;

const createDatabase = (name: string): Promise<string> => postgres.database(name);

async function query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: storeUrl });
  await c.connect();
  try { return (await c.query<R>(text, values)).rows; } finally { await c.end(); }
}

/** The provider mocks' addresses and keys, as the laptop daemon has them. */
function providerEnv(): Record<string, string> {
  const m = laptop.mocks;
  return {
    GATEWAY_ANTHROPIC_BASE_URL: m.anthropic.origin, GATEWAY_OPENAI_BASE_URL: m.openai.origin, GATEWAY_GEMINI_BASE_URL: m.gemini.origin,
    GATEWAY_ANTHROPIC_API_KEY: m.anthropic.key, GATEWAY_OPENAI_API_KEY: m.openai.key, GATEWAY_GEMINI_API_KEY: m.gemini.key,
    GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/no-bus-here',
  };
}

async function chat(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

async function ok(r: Promise<Response>): Promise<void> {
  const res = await r;
  expect(res.status, await res.text()).toBe(200);
}

async function created(r: Promise<CliResult>): Promise<string> {
  const done = await r;
  expect(done.code, done.stderr).toBe(0);
  return done.stdout.trim();
}

const usageOf = async (cli: (args: string[]) => Promise<CliResult>, by = 'model') =>
  JSON.parse((await cli(['usage', '--since', '1d', '--by', by, '--json'])).stdout) as { totals: UsageTotals; rows: UsageGroup[] };

const waitFor = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => until(what, probe, 30_000, 100);

/** Every file of a directory (names and contents), to see that nothing was written. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out[name] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return out;
}

/** The counts a human report gives for one kind. */
function countsIn(stdout: string, label: string): Counts {
  const m = new RegExp(`^  ${label}\\s+copied (\\d+), already there (\\d+)`, 'm').exec(stdout);
  if (!m) throw new Error(`no "${label}" line in:\n${stdout}`);
  return { copied: Number(m[1]), already: Number(m[2]) };
}

beforeAll(async () => {
  postgres = await startPostgres();
  PASSWORD = postgres.password;
  storeUrl = await createDatabase('laptop_move');
  laptop = await startGatewayProcess();
  laptop.mocks.anthropic.setHandler(anthropicScript);
  keys.app = await created(laptop.cli(['keys', 'create', '--name', 'app']));
  keys.ci = await created(laptop.cli(['keys', 'create', '--name', 'ci', '--models', 'openai/gpt-4o', '--expires', '30d', '--rpm', '100']));
  keys.old = await created(laptop.cli(['keys', 'create', '--name', 'old']));
  keys.admin = await created(laptop.cli(['keys', 'create', '--admin', '--name', 'ops']));
  expect((await laptop.cli(['keys', 'revoke', 'old'])).code).toBe(0);
  // A session key as `gateway chat` gets one: the admin route with the daemon's token.
  const session = await fetch(`${laptop.url}/admin/session-keys`, {
    method: 'POST', headers: { authorization: `Bearer ${laptop.adminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ purpose: 'chat' }),
  });
  expect(session.status).toBe(201);
  keys.session = ((await session.json()) as { key: string }).key;

  // The app key spends before it has a budget (the laptop counts that too), then with one.
  await ok(chat(laptop.url, keys.app));
  // Its row written first: the laptop reads a key's spend from before its budget from the history.
  await waitFor('the first row is written', async () => ((await usageOf(laptop.cli)).totals.requests === 1 ? true : undefined));
  expect((await laptop.cli(['keys', 'set', 'app', '--budget', '5/day'])).code).toBe(0);
  await ok(chat(laptop.url, keys.app));
  await ok(chat(laptop.url, keys.app));
  await ok(chat(laptop.url, keys.ci));
  await ok(chat(laptop.url, keys.session));
  expect((await chat(laptop.url, keys.old)).status).toBe(401);
  const answer = await new OpenAI({ baseURL: `${laptop.url}/v1`, apiKey: keys.app, maxRetries: 0 }).responses.create({ model, input: 'My name is Ada.' });
  expect(answer.output_text).toBe(FINAL_TEXT);
  answerId = answer.id;

  // Six requests (the revoked key's 401 is no key's request); rows are written in batches.
  laptopUsage = await waitFor('the laptop has written every row', async () => {
    const u = await usageOf(laptop.cli);
    return u.totals.requests === 6 ? u : undefined;
  });
  laptopSpent = (JSON.parse((await laptop.cli(['keys', 'show', 'app', '--json'])).stdout) as { standing: { budget: { spent: number } } }).standing.budget.spent;
  expect(laptopSpent).toBeGreaterThan(0);
  laptopKeys = JSON.parse((await laptop.cli(['keys', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
  expect(laptopKeys).toHaveLength(5);
}, 120_000);

afterAll(async () => {
  if (team) {
    await team.cli(['stop']).catch(() => undefined);
    try { process.kill(team.pid, 'SIGKILL'); } catch { /* stopped */ }
    team.home.cleanup();
  }
  await laptop?.close();
  postgres?.destroy();
}, 60_000);

describe('gateway store migrate', () => {
  it('refuses while the laptop\'s daemon runs, before touching the store', async () => {
    const r = await laptop.cli(['store', 'migrate', '--to', storeUrl]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: the gateway is running (pid ${laptop.pid}, ${laptop.url}); stop it first (gateway stop): the copy is made of a stopped daemon's state, so that nothing changes under it\n`);
    expect(await query('SELECT to_regclass(\'keys\') AS t')).toEqual([{ t: null }]);
    const stopped = await laptop.cli(['stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
  });

  it('a store it cannot use is one line that never shows the password, and copies nothing', async () => {
    const closed = await closedPort();
    const cases: Array<[string, RegExp]> = [
      [`postgres://gw:${PASSWORD}@127.0.0.1:${closed}/laptop_move`, new RegExp(`^error: the store at gw@127\\.0\\.0\\.1:${closed}/laptop_move: connection refused \\(is PostgreSQL running there\\?\\)$`)],
      [`postgres://gw:${PASSWORD}@127.0.0.1:${postgres.port}/no_such_db`, /^error: the store at gw@127\.0\.0\.1:\d+\/no_such_db: database "no_such_db" does not exist; create it first \(createdb\)$/],
      [`postgress://gw:${PASSWORD}@127.0.0.1/x`, /^error: the store URL must start with postgres:\/\/ \(got postgress:\/\/…\); only PostgreSQL is supported as a shared store$/],
      [`gw:${PASSWORD}@127.0.0.1/x`, /^error: the store URL/],
    ];
    for (const [url, pattern] of cases) {
      for (const r of [await laptop.cli(['store', 'migrate', '--to', url]), await laptop.cli(['store', 'migrate'], { GATEWAY_STORE_URL: url })]) {
        expect(r.code, url).not.toBe(0);
        expect(r.stdout).toBe('');
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines, r.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(pattern);
        expect(r.stderr).not.toContain(PASSWORD);
      }
    }
    const none = await laptop.cli(['store', 'migrate']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('error: give the store to copy into: --to postgres://user:password@host:5432/database, or set GATEWAY_STORE_URL (which keeps the password out of the process list)\n');
    expect(await query('SELECT to_regclass(\'keys\') AS t')).toEqual([{ t: null }]);
  });

  it('copies keys, usage, the budget\'s spend and stored answers into the store, and leaves the laptop\'s files as they were', async () => {
    const before = files(laptop.dir);
    const r = await laptop.cli(['store', 'migrate', '--to', storeUrl]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const requests = laptopUsage.totals.requests;
    first = {
      keys: countsIn(r.stdout, 'keys'), usage: countsIn(r.stdout, 'usage rows'),
      limits: countsIn(r.stdout, 'limit ledger'), responses: countsIn(r.stdout, 'responses'),
    };
    expect(first.keys).toEqual({ copied: 5, already: 0 });
    expect(first.usage).toEqual({ copied: requests, already: 0 });
    expect(first.limits.copied).toBeGreaterThan(0);
    expect(first.limits.already).toBe(0);
    expect(first.responses).toEqual({ copied: 1, already: 0 });
    expect(r.stdout).toContain(`Copied ${laptop.dir} into the store gw@127.0.0.1:${postgres.port}/laptop_move (schema version `);
    // Every row names the daemon that served it (the laptop's, started with --port 0).
    expect(r.stdout).toMatch(new RegExp(`^  usage rows    copied ${requests}, already there 0\n`, 'm'));
    expect(r.stdout).toContain(`Nothing in ${laptop.dir} was changed`);
    expect(r.stdout).toContain(`GATEWAY_STORE_URL='postgres://gw@127.0.0.1:${postgres.port}/laptop_move' gateway start`);
    expect(files(laptop.dir)).toEqual(before);

    // Only hashes: no key's plaintext anywhere in the database.
    const dump = postgres.dump('laptop_move');
    for (const key of Object.values(keys)) {
      expect(dump).not.toContain(key);
      expect(dump).toContain(createHash('sha256').update(key).digest('hex'));
    }
  });

  it('a team daemon on the store shows the laptop\'s usage and holds the laptop\'s key to the budget it had spent', async () => {
    const home = makeTempHome('gateway-team-');
    const cli = (args: string[], extra: Record<string, string | undefined> = {}) =>
      runCli(args, { home: home.dir, env: { ...providerEnv(), GATEWAY_STORE_URL: storeUrl, GATEWAY_DAEMON_ID: 'team-1', ...extra }, timeoutMs: 30_000 });
    const started = await cli(['start', '--port', '0']);
    const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(started.stdout);
    if (!m) throw new Error(`the team daemon did not start: ${started.stdout}${started.stderr}`);
    team = { home, url: m[1]!, pid: Number(m[2]), cli };

    // Its usage history reads the laptop's rows from the store: the same totals, served by the laptop's daemon.
    const usage = await waitFor('the team daemon has read the laptop\'s rows', async () => {
      const u = await usageOf(cli);
      return u.totals.requests === laptopUsage.totals.requests ? u : undefined;
    });
    expect(usage.totals).toEqual(laptopUsage.totals);
    expect(usage.rows).toEqual(laptopUsage.rows);
    const byDaemon = await usageOf(cli, 'daemon');
    expect(byDaemon.rows.map((r) => [r.label, r.requests])).toEqual([[`${hostname()}:${new URL(laptop.url).port}`, laptopUsage.totals.requests]]);

    // The keys as the laptop listed them (last use aside, which is each daemon's own).
    const listed = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    const comparable = (list: Array<Record<string, unknown>>) => list.map(({ lastUsedAt: _, standing: __, ...k }) => k).sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(comparable(listed)).toEqual(comparable(laptopKeys));

    const spent = (JSON.parse((await cli(['keys', 'show', 'app', '--json'])).stdout) as { standing: { budget: { spent: number } } }).standing.budget.spent;
    expect(spent).toBeCloseTo(laptopSpent, 9);
    // A budget of what was spent and a hundredth of a cent more: the next request cannot fit.
    expect((await cli(['keys', 'set', 'app', '--budget', `${laptopSpent + 0.0001}/day`])).code).toBe(0);
    const upstream = laptop.mocks.openai.requests.length;
    const refused = await chat(team.url, keys.app);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-gateway-limit')).toBe('budget');
    expect(laptop.mocks.openai.requests.length).toBe(upstream);
    expect((await cli(['keys', 'set', 'app', '--budget', '5/day'])).code).toBe(0);
  });

  it('the team daemon accepts the laptop\'s keys, refuses its revoked one and continues its conversation', async () => {
    const t = team!;
    await ok(chat(t.url, keys.app));
    await ok(chat(t.url, keys.ci));
    await ok(chat(t.url, keys.session));
    const revoked = await chat(t.url, keys.old);
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as { error: { message: string } }).error.message).toMatch(/revoked/);
    // The admin key opens the team daemon's admin API as on the laptop.
    const remote = await t.cli(['--url', t.url, 'keys', 'show', 'ci', '--json'], { GATEWAY_ADMIN_KEY: keys.admin });
    expect(remote.code, remote.stderr).toBe(0);
    expect(JSON.parse(remote.stdout)).toMatchObject({ name: 'ci', models: ['openai/gpt-4o'], limits: { rpm: 100 }, status: 'active' });

    const next = await new OpenAI({ baseURL: `${t.url}/v1`, apiKey: keys.app, maxRetries: 0 }).responses.create({ model, input: 'What is my name?', previous_response_id: answerId });
    expect(next.previous_response_id).toBe(answerId);
    const sent = JSON.parse(laptop.mocks.anthropic.requests.at(-1)!.body.toString('utf8')) as { messages: Array<{ role: string; content: unknown }> };
    const text = (c: unknown) => (typeof c === 'string' ? c : (c as Array<{ text?: string }>).map((p) => p.text ?? '').join(''));
    expect(sent.messages.map((m) => `${m.role}: ${text(m.content)}`)).toEqual(['user: My name is Ada.', `assistant: ${FINAL_TEXT}`, 'user: What is my name?']);
  });

  it('run again (the store in GATEWAY_STORE_URL), it copies nothing twice', async () => {
    const r = await laptop.cli(['store', 'migrate', '--json'], { GATEWAY_STORE_URL: storeUrl });
    expect(r.code, r.stderr).toBe(0);
    const again = JSON.parse(r.stdout) as { store: string; keys: Counts & { refused: unknown[] }; usage: Counts; limits: Counts; responses: Counts & { expired: number } };
    expect(again.store).toBe(`gw@127.0.0.1:${postgres.port}/laptop_move`);
    expect(again.keys).toEqual({ copied: 0, already: first.keys.copied, refused: [] });
    expect(again.usage).toEqual({ copied: 0, already: first.usage.copied, daemon: `${hostname()}:${new URL(laptop.url).port}`, unnamed: 0, rollups: { copied: 0, already: 0 } });
    expect(again.limits).toEqual({ copied: 0, already: first.limits.copied });
    expect(again.responses).toEqual({ copied: 0, already: first.responses.copied, expired: 0 });
    // The key's limits as the team changed them stay.
    const [app] = await query<{ limits: unknown }>('SELECT limits FROM keys WHERE name = $1', ['app']);
    expect(app!.limits).toEqual({ budget: { usd: 5, period: 'day' } });
  });

  it('the laptop used again meanwhile: another run copies only what is new, and the team\'s budget holds it at once', async () => {
    const t = team!;
    const spentOn = async (cli: (args: string[]) => Promise<CliResult>) =>
      (JSON.parse((await cli(['keys', 'show', 'app', '--json'])).stdout) as { standing: { budget: { spent: number } } }).standing.budget.spent;
    // The team has served the key this period: the store keeps the key's spend so far beside it.
    const before = await spentOn(t.cli);
    expect(before).toBeGreaterThan(laptopSpent);
    await laptop.restart();
    for (let i = 0; i < 10; i++) await ok(chat(laptop.url, keys.app));
    const laptopNow = await waitFor('the laptop has written and settled the ten', async () =>
      ((await usageOf(laptop.cli)).totals.requests === laptopUsage.totals.requests + 10 ? spentOn(laptop.cli) : undefined));
    expect((await laptop.cli(['stop'])).code).toBe(0);
    const r = await laptop.cli(['store', 'migrate', '--json', '--to', storeUrl]);
    expect(r.code, r.stderr).toBe(0);
    const again = JSON.parse(r.stdout) as { keys: Counts; usage: Counts; limits: Counts; responses: Counts };
    expect(again.keys).toMatchObject({ copied: 0, already: first.keys.copied });
    expect(again.usage).toMatchObject({ copied: 10, already: first.usage.copied });
    expect(again.limits).toEqual({ copied: 10, already: first.limits.copied });
    expect(again.responses).toMatchObject({ copied: 0, already: first.responses.copied });
    const after = await spentOn(t.cli);
    expect(after).toBeCloseTo(before + (laptopNow - laptopSpent), 9);
    // Not only reported: the next reservation counts it (a budget of the same day just above it
    // refuses, saying so), though the store had kept the key's spend in this period beside it.
    expect((await t.cli(['keys', 'set', 'app', '--budget', `${after + 0.00001}/day`])).code).toBe(0);
    const refused = await chat(t.url, keys.app);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(`proxy key "app" has used $${after.toFixed(4)} of its`);
    expect((await t.cli(['keys', 'set', 'app', '--budget', '5/day'])).code).toBe(0);
  });

  it('the laptop\'s own directory started on the store counts every request once', async () => {
    const r = await laptop.cli(['start', '--port', '0', '--store', storeUrl]);
    const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(r.stdout);
    if (!m) throw new Error(`the laptop did not start on the store: ${r.stdout}${r.stderr}`);
    laptop.pid = Number(m[2]);
    laptop.url = m[1]!;
    // The store's count is read again each time: the team daemon's last rows may still be on their way to it.
    const inStore = async () => ((await query<{ n: number }>('SELECT count(*)::int AS n FROM usage_requests')) as [{ n: number }])[0].n;
    await waitFor('the laptop has read the team daemon\'s rows', async () => {
      const here = (await usageOf(laptop.cli)).totals.requests;
      return here === await inStore() ? true : undefined;
    });
    expect(await inStore()).toBeGreaterThan(laptopUsage.totals.requests);
    await ok(chat(laptop.url, keys.app));
    expect((await chat(laptop.url, keys.old)).status).toBe(401);
  });
});

describe('usage rows recorded before daemons were named', () => {
  const home = makeTempHome('gateway-old-laptop-');
  afterAll(() => home.cleanup());

  it('go into the store as this machine\'s daemon\'s', async () => {
    const url = await createDatabase('old_laptop');
    const row = (requestId: string, startedAt: number, daemon?: string): UsageRow => ({
      requestId, startedAt, keyId: 'k1', keyName: 'app', mode: 'native', provider: 'openai', model: 'gpt-4o', requestedModel: null,
      method: 'POST', path: '/openai/v1/chat/completions', stream: false, status: 200, errorCode: null, errorMessage: null, durationMs: 12,
      ttfbMs: 5, requestBytes: 100, outputBytes: 200, inputTokens: 10, outputTokens: 5, cachedTokens: null, cacheWriteTokens: null,
      cacheWrite1hTokens: null, reasoningTokens: null, cost: 0.001, cacheSaved: null, session: null, route: null, waitedMs: null, keyLabel: null,
      ...(daemon ? { daemon } : {}),
    });
    // As the usage history keeps them: two rows from before daemons were named, then one that names its daemon.
    const store = await UsageStore.open(join(home.dir, 'usage.db'));
    store.insert([row('req_old1', Date.now() - 3_600_000), row('req_old2', Date.now() - 1_800_000), row('req_new', Date.now() - 60_000, 'my-laptop:8080')]);
    store.close();
    const r = await runCli(['store', 'migrate', '--to', url], { home: home.dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('  usage rows    copied 3, already there 0 (2 recorded before daemons were named, as my-laptop:8080\'s)\n');
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query<{ request_id: string; daemon: string; seq: string }>('SELECT request_id, daemon, seq FROM usage_requests ORDER BY seq');
    await c.end();
    expect(rows.map((x) => [x.request_id, x.daemon])).toEqual([['req_old1', 'my-laptop:8080'], ['req_old2', 'my-laptop:8080'], ['req_new', 'my-laptop:8080']]);
  });
});

describe('history the laptop keeps only as rollups (older than its raw rows\' retention)', () => {
  const laptopHome = makeTempHome('gateway-rollups-laptop-');
  const teamHome = makeTempHome('gateway-rollups-team-');
  let teamPid = 0;
  afterAll(async () => {
    await runCli(['stop'], { home: teamHome.dir }).catch(() => undefined);
    try { process.kill(teamPid, 'SIGKILL'); } catch { /* stopped */ }
    laptopHome.cleanup();
    teamHome.cleanup();
  });

  const DAY = 86_400_000;
  const HOUR = 3_600_000;
  const row = (requestId: string, startedAt: number, over: Partial<UsageRow> = {}): UsageRow => ({
    requestId, startedAt, keyId: 'k1', keyName: 'app', mode: 'native', provider: 'openai', model: 'gpt-4o', requestedModel: null,
    method: 'POST', path: '/openai/v1/chat/completions', stream: false, status: 200, errorCode: null, errorMessage: null, durationMs: 120,
    ttfbMs: 40, requestBytes: 100, outputBytes: 200, inputTokens: 1000, outputTokens: 50, cachedTokens: 200, cacheWriteTokens: null,
    cacheWrite1hTokens: null, reasoningTokens: null, cost: 0.01, cacheSaved: 0.001, session: null, route: null, waitedMs: null, keyLabel: null,
    daemon: 'old-laptop', ...over,
  });
  const usage = async (home: string, by: string) =>
    JSON.parse((await runCli(['usage', '--since', '90d', '--by', by, '--json'], { home })).stdout) as { totals: UsageTotals; rows: UsageGroup[] };

  it('goes to the store once, and a team daemon\'s history then equals the laptop\'s, month by month', async () => {
    const url = await createDatabase('rollup_history');
    const now = Date.now();
    // The hour the laptop's retention cut through: one of its rows pruned, one kept.
    const cut = Math.floor((now - 30 * DAY) / HOUR) * HOUR + HOUR / 2;
    const store = await UsageStore.open(join(laptopHome.dir, 'usage.db'));
    store.insert([
      row('r60', now - 60 * DAY, { model: 'gpt-5.4', status: 500, cost: null, ttfbMs: null }),
      row('r45a', now - 45 * DAY), row('r45b', now - 45 * DAY + 1000, { keyId: 'k2', keyName: 'ci', durationMs: 900 }),
      row('r45c', now - 45 * DAY + 2000, { daemon: null }), // recorded before daemons were named
      row('cut-early', cut - 60_000), row('cut-late', cut + 60_000),
      row('r2', now - 2 * DAY, { model: 'gpt-5.4' }), row('r1', now - DAY),
    ]);
    const pruned = store.prune(cut, now - 400 * DAY);
    expect(pruned.requests).toBe(5);
    store.close();
    const laptopByModel = await usage(laptopHome.dir, 'model');
    const laptopByKey = await usage(laptopHome.dir, 'key');
    expect(laptopByModel.totals.requests).toBe(8);

    const r = await runCli(['store', 'migrate', '--json', '--to', url], { home: laptopHome.dir });
    expect(r.code, r.stderr).toBe(0);
    const copied = JSON.parse(r.stdout) as { usage: Counts & { rollups: Counts } };
    expect(copied.usage).toMatchObject({ copied: 3, already: 0 });
    expect(copied.usage.rollups.copied).toBeGreaterThan(0);
    expect(copied.usage.rollups.already).toBe(0);

    const started = await runCli(['start', '--port', '0'], { home: teamHome.dir, env: { GATEWAY_STORE_URL: url, GATEWAY_DAEMON_ID: 'team-1' } });
    const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(started.stdout);
    if (!m) throw new Error(`the team daemon did not start: ${started.stdout}${started.stderr}`);
    teamPid = Number(m[2]);
    const team = await waitFor('the team daemon has the laptop\'s whole history', async () => {
      const u = await usage(teamHome.dir, 'model');
      return u.totals.requests === laptopByModel.totals.requests ? u : undefined;
    });
    expect(team.totals).toEqual(laptopByModel.totals);
    expect(team.rows).toEqual(laptopByModel.rows);
    expect((await usage(teamHome.dir, 'key')).rows).toEqual(laptopByKey.rows);
    // All of it the laptop's, the rows recorded before daemons were named too.
    expect((await usage(teamHome.dir, 'daemon')).rows.map((g) => [g.label, g.requests])).toEqual([['old-laptop', 8]]);

    // The laptop pruned further, and copied again: nothing twice, though its rows now hold less.
    const again = await UsageStore.open(join(laptopHome.dir, 'usage.db'));
    expect(again.prune(now - 3 * DAY, now - 400 * DAY).requests).toBe(1);
    again.close();
    const second = await runCli(['store', 'migrate', '--json', '--to', url], { home: laptopHome.dir });
    expect(second.code, second.stderr).toBe(0);
    expect((JSON.parse(second.stdout) as { usage: Counts & { rollups: Counts } }).usage).toMatchObject({
      copied: 0, already: 2, rollups: { copied: 0, already: copied.usage.rollups.copied },
    });
    await runCli(['stop'], { home: teamHome.dir });
    const restarted = await runCli(['start', '--port', '0'], { home: teamHome.dir, env: { GATEWAY_STORE_URL: url, GATEWAY_DAEMON_ID: 'team-1' } });
    teamPid = Number(/\(pid (\d+)\)/.exec(restarted.stdout)?.[1] ?? 0);
    expect((await usage(teamHome.dir, 'model')).totals).toEqual(laptopByModel.totals);

    // The laptop itself on the store: those totals are its own already, and not added again.
    const own = await runCli(['start', '--port', '0', '--store', url], { home: laptopHome.dir, env: { GATEWAY_DAEMON_ID: 'old-laptop' } });
    expect(own.code, own.stderr).toBe(0);
    try {
      await waitFor('the laptop has pulled from the store', async () => ((await usage(laptopHome.dir, 'daemon')).rows.length > 0 ? true : undefined));
      // Its pull of the store's rows and totals is done when a row the team daemon serves arrives.
      const key = await runCli(['keys', 'create', '--name', 'probe'], { home: teamHome.dir, env: { GATEWAY_STORE_URL: url } });
      expect(key.code, key.stderr).toBe(0);
      const teamUrl = `http://127.0.0.1:${/127\.0\.0\.1:(\d+)/.exec(restarted.stdout)![1]}`;
      expect((await chat(teamUrl, key.stdout.trim())).status).toBeGreaterThan(0);
      const mine = await waitFor('the laptop has the team daemon\'s request', async () => {
        const u = await usage(laptopHome.dir, 'daemon');
        return u.rows.some((g) => g.label === 'team-1') ? u : undefined;
      });
      expect(mine.rows.find((g) => g.label === 'old-laptop')?.requests).toBe(8);
    } finally {
      await runCli(['stop'], { home: laptopHome.dir });
    }
  }, 120_000);
});

describe('a key the store has another key in the way of', () => {
  const laptopHome = makeTempHome('gateway-clash-laptop-');
  const teamHome = makeTempHome('gateway-clash-team-');
  afterAll(() => { laptopHome.cleanup(); teamHome.cleanup(); });

  it('is left out and named, the rest copied, and the exit code says so', async () => {
    const url = await createDatabase('name_clash');
    // The team already has an active key named "app" (made with the CLI on the store itself).
    const teams = await runCli(['keys', 'create', '--name', 'app'], { home: teamHome.dir, env: { GATEWAY_STORE_URL: url } });
    expect(teams.code, teams.stderr).toBe(0);
    const mine = await runCli(['keys', 'create', '--name', 'app', '--json'], { home: laptopHome.dir });
    const other = await runCli(['keys', 'create', '--name', 'other'], { home: laptopHome.dir });
    expect([mine.code, other.code]).toEqual([0, 0]);
    const id = (JSON.parse(mine.stdout) as { id: string }).id;

    const r = await runCli(['store', 'migrate', '--to', url], { home: laptopHome.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {2}keys\s+copied 1, already there 0, 1 not copied \(below\)$/m);
    expect(r.stderr).toBe(`error: key ${id} ("app") was not copied: the store has another active key named "app"; revoke one of them, or rename, then run this again\n`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query<{ name: string; hash: string }>('SELECT name, hash FROM keys ORDER BY seq');
    await c.end();
    expect(rows.map((k) => [k.name, k.hash])).toEqual([
      ['app', createHash('sha256').update(teams.stdout.trim()).digest('hex')],
      ['other', createHash('sha256').update(other.stdout.trim()).digest('hex')],
    ]);
  });
});
