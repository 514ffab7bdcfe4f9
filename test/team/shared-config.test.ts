// Team mode's shared routing and providers, as a team runs it: real daemons started with the CLI
// (one GATEWAY_HOME each, as on separate machines: each its own keychain service and environment)
// on one PostgreSQL database, against mock providers. The first daemon seeds the team's config from
// its config.json and the others take it; an alias, a fallback or a provider set through one
// daemon's CLI is served by the others, by notification (the backstop is an hour, so nothing else
// can bring it); a provider's key never leaves its machine, nor reaches the database; edits on two
// daemons at once both stay, the same setting's last writer wins; a change with a problem is not
// published, a bad document in the store is not applied (not even in part); a lost notification
// is made up by the backstop, and by the listening connection coming back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

interface Daemon { name: string; home: string; env: Record<string, string>; url: string; pid: number }

const secret = (tag: string) => `sk-${tag}-${randomBytes(16).toString('hex')}`;
const BOX_KEY = { a: secret('box-a'), b: secret('box-b'), c: secret('box-c'), cSpare: secret('box-c-spare') };
const homes: Array<{ dir: string; cleanup(): void }> = [];
const daemons: Record<string, Daemon> = {};
const outputs: string[] = [];
let postgres: TestPostgres;
let url = '';
let admin: pg.Pool;
let openai: MockProvider;
let anthropic: MockProvider;
let box: MockProvider;
let proxyKey = '';
/** Propagation times measured for the report: name → ms. */
const timings: Record<string, number> = {};

function daemonEnv(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    GATEWAY_OPENAI_BASE_URL: openai.origin, GATEWAY_OPENAI_API_KEY: openai.key,
    GATEWAY_ANTHROPIC_BASE_URL: anthropic.origin, GATEWAY_ANTHROPIC_API_KEY: anthropic.key,
    GATEWAY_DAEMON_ID: name,
    // An hour: within a test, only a notification (or a reconnection) brings a change.
    GATEWAY_CONFIG_RECHECK_SECONDS: '3600',
    // Each daemon its own keychain, as on its own machine.
    GATEWAY_KEYCHAIN_SERVICE: `model-gateway-test-team-${name}-${process.pid}-${randomBytes(3).toString('hex')}`,
    ...extra,
  };
}

function newHome(name: string, extra: Record<string, string> = {}): Daemon {
  const h = makeTempHome(`gateway-team-${name}-`);
  homes.push(h);
  const d: Daemon = { name, home: h.dir, env: daemonEnv(name, extra), url: '', pid: 0 };
  daemons[name] = d;
  return d;
}

async function cli(d: Daemon, args: string[], o: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  const r = await runCli(args, { home: d.home, env: { ...d.env, ...o.env }, ...(o.input !== undefined ? { input: o.input } : {}), timeoutMs: 30_000 });
  outputs.push(r.stdout, r.stderr);
  return r;
}

async function start(d: Daemon): Promise<void> {
  const r = await cli(d, ['start', '--port', '0', '--store', url]);
  expect(r.code, r.stderr).toBe(0);
  const m = /^gateway running at (http:\/\/\S+) \(pid (\d+)\)$/m.exec(r.stdout);
  expect(m, r.stdout).not.toBeNull();
  d.url = m![1]!;
  d.pid = Number(m![2]);
}

const file = (d: Daemon, name: string) => join(d.home, name);
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;
const logOf = (d: Daemon) => (existsSync(file(d, 'daemon.log')) ? readFileSync(file(d, 'daemon.log'), 'utf8') : '');
/** The daemon writes its log in batches: a line is waited for. */
const logged = (d: Daemon) => expect.poll(() => logOf(d), { timeout: 10_000 });
const handEdit = (d: Daemon, edit: (c: Record<string, any>) => void) => {
  const c = existsSync(file(d, 'config.json')) ? readJson(file(d, 'config.json')) : {};
  edit(c);
  writeFileSync(file(d, 'config.json'), JSON.stringify(c, null, 2), { mode: 0o600 });
};

async function chat(d: Daemon, model: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${d.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: await res.json() };
}

/** The upstream model `model` is served as on `d` (what the provider answered with), or the error status. */
async function servedAs(d: Daemon, model: string): Promise<string> {
  const r = await chat(d, model);
  return r.status === 200 ? String(r.body.model) : `status ${r.status}`;
}

/** When the store's current version was written (PostgreSQL's clock: this machine's). */
async function storeWrite(): Promise<number> {
  const { rows } = await admin.query<{ at: Date }>('SELECT updated_at AS at FROM shared_config');
  return rows[0]!.at.getTime();
}

/** Waits until `model` is served on `d` as `upstream`; returns when that was first seen (ms since the epoch). */
async function waitServed(d: Daemon, model: string, upstream: string, timeout = 10_000): Promise<number> {
  await expect.poll(() => servedAs(d, model), { timeout, interval: 5 }).toBe(upstream);
  return Date.now();
}

/** GET /admin/status of `d`, with its admin token (as the CLI on its machine asks). */
async function status(d: Daemon): Promise<{ routing: { retries: number } }> {
  const res = await fetch(`${d.url}/admin/status`, { headers: { authorization: `Bearer ${readFileSync(file(d, 'admin-token'), 'utf8').trim()}` } });
  return (await res.json()) as { routing: { retries: number } };
}

beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.database('team_config');
  admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on('error', () => { /* its idle connections end while the server is stopped */ });
  [openai, anthropic, box] = await Promise.all([
    startMockProvider('openai'), startMockProvider('anthropic'),
    // An added provider that takes any key and records which one it got.
    startMockProvider('openai', { requireKey: false }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(daemons).filter((d) => d.pid).map((d) => cli(d, ['stop'])));
  // The keychain entries C stored (its own service), removed with the provider.
  if (daemons.c) await cli(daemons.c, ['providers', 'remove', 'box']);
  for (const d of Object.values(daemons)) if (d.pid) try { process.kill(d.pid, 'SIGKILL'); } catch { /* stopped */ }
  await admin?.end();
  await Promise.all([openai?.close(), anthropic?.close(), box?.close()]);
  postgres?.destroy();
  for (const h of homes) h.cleanup();
  if (Object.keys(timings).length) console.log(`propagation (ms): ${JSON.stringify(timings)}`);
});

describe('three daemons on one database', () => {
  let A: Daemon;
  let B: Daemon;
  let C: Daemon;

  it('the first daemon seeds the empty store from its config.json; the others take the team\'s over their own', async () => {
    A = newHome('a');
    B = newHome('b', { GATEWAY_BOX_API_KEY: BOX_KEY.b });
    C = newHome('c');
    handEdit(A, (c) => { c.aliases = { seeded: 'openai/gpt-seeded' }; c.bodyLimitBytes = 2_000_000; });
    handEdit(B, (c) => { c.aliases = { mine: 'anthropic/claude-mine' }; c.bodyLimitBytes = 3_000_000; });
    await start(A);
    // A proxy key made through A is the team's (keys live in the store).
    proxyKey = (await cli(A, ['keys', 'create', '--name', 'team'])).stdout.trim();
    expect(proxyKey).toMatch(/^sk-proxy-/);
    await logged(A).toContain('store: the team\'s config starts from this daemon\'s config.json as version 1');
    await Promise.all([start(B), start(C)]);

    for (const d of [A, B, C]) expect(await servedAs(d, 'seeded'), d.name).toBe('gpt-seeded');
    expect((await chat(B, 'mine')).status).toBe(400);
    // B's files hold the team's sections; its own settings stay its own; the file as it was is kept.
    expect(readJson(file(B, 'config.json'))).toEqual({ aliases: { seeded: 'openai/gpt-seeded' }, bodyLimitBytes: 3_000_000 });
    expect(readJson(file(B, 'config.before-team.json')).aliases).toEqual({ mine: 'anthropic/claude-mine' });
    await logged(B).toMatch(/store: joined the team's config \(version 1\): config\.json's own aliases differed and are now the team's \(the file as it was: .*config\.before-team\.json\)/);
    expect(readJson(file(C, 'config.json'))).toEqual({ aliases: { seeded: 'openai/gpt-seeded' } });
  }, 60_000);

  it('an alias set through A\'s CLI is served by B and C, brought by the notification', async () => {
    // B and C are asked all along, to see when each first serves it.
    const served = Promise.all([waitServed(B, 'fast', 'gpt-fast'), waitServed(C, 'fast', 'gpt-fast')]);
    const r = await cli(A, ['models', 'alias', 'fast', 'openai/gpt-fast']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('The running gateway reloaded.\n');
    const [b, c] = await served;
    const written = await storeWrite();
    timings['alias: store write → served on B'] = b - written;
    timings['alias: store write → served on C'] = c - written;
    // Every reader on C's machine sees the team's alias.
    expect(JSON.parse((await cli(C, ['models', 'aliases', '--json'])).stdout)).toEqual({ seeded: 'openai/gpt-seeded', fast: 'openai/gpt-fast' });
    await logged(B).toContain('store: applied the team\'s config version 2 from a: aliases changed');
    await logged(A).toContain('store: published config.json\'s change to aliases.fast as the team\'s config version 2');
  }, 30_000);

  it('a fallback set through A\'s CLI is served by B and C', async () => {
    openai.setHandler((req) => (req.body.toString().includes('"gpt-down"')
      ? { status: 503, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: null, param: null } }) }
      : undefined));
    // A hand edit, published too: one attempt per target keeps each try quick.
    handEdit(A, (c) => { c.routing = { retries: 0 }; });
    for (const d of [B, C]) await expect.poll(async () => (await status(d)).routing.retries, { timeout: 10_000, interval: 5 }).toBe(0);
    const served = Promise.all([waitServed(B, 'openai/gpt-down', 'anthropic/claude-up'), waitServed(C, 'openai/gpt-down', 'anthropic/claude-up')]);
    expect((await cli(A, ['models', 'fallback', 'openai/gpt-down', 'anthropic/claude-up'])).code).toBe(0);
    const [b, c] = await served;
    const written = await storeWrite();
    timings['fallback: store write → served on B'] = b - written;
    timings['fallback: store write → served on C'] = c - written;
    expect(readJson(file(C, 'config.json')).routing).toEqual({ retries: 0, fallbacks: { 'openai/gpt-down': ['anthropic/claude-up'] } });
  }, 30_000);

  it('a provider added on A is routable on B, whose environment has its key; C gets it once C stores a key of its own', async () => {
    const add = await cli(A, ['providers', 'add', 'box', '--protocol', 'openai-chat', '--base-url', `${box.origin}/v1`], { env: { GATEWAY_BOX_API_KEY: BOX_KEY.a } });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('key from GATEWAY_BOX_API_KEY (set in this environment; nothing stored)');
    timings['provider: store write → served on B'] = (await waitServed(B, 'box/box-model', 'box-model')) - (await storeWrite());
    expect(box.requests.at(-1)!.headers.authorization).toBe(`Bearer ${BOX_KEY.b}`);

    // C knows the provider (the team's) but holds no key for it: the 503 says what to run.
    await expect.poll(async () => (await chat(C, 'box/box-model')).status, { timeout: 10_000, interval: 5 }).toBe(503);
    expect((await chat(C, 'box/box-model')).body.error.message).toMatch(/no .*API key is configured in the gateway; run: gateway providers set box/);
    const set = await cli(C, ['providers', 'set', 'box', '--stdin'], { input: BOX_KEY.c });
    expect(set.code, set.stderr).toBe(0);
    expect(await servedAs(C, 'box/box-model')).toBe('box-model');
    expect(box.requests.at(-1)!.headers.authorization).toBe(`Bearer ${BOX_KEY.c}`);

    // A pool's membership is the team's: the label, never the key (here in C's 0600 secret file).
    const spare = await cli(C, ['providers', 'set', 'box', '--add', '--label', 'spare', '--insecure-storage', '--stdin'], { input: BOX_KEY.cSpare });
    expect(spare.code, spare.stderr).toBe(0);
    await expect.poll(() => existsSync(file(A, 'key-pools.json')) && readJson(file(A, 'key-pools.json')), { timeout: 10_000, interval: 5 }).toEqual({ box: ['spare'] });
    expect(readFileSync(file(A, 'key-pools.json'), 'utf8')).not.toContain(BOX_KEY.cSpare);
  }, 60_000);

  it('the database holds the team\'s config and no provider key', async () => {
    const dump = postgres.dump('team_config');
    expect(dump).toContain(`${box.origin}/v1`);
    expect(dump).toContain('"spare"');
    for (const k of [...Object.values(BOX_KEY), openai.key, anthropic.key]) expect(dump).not.toContain(k);
  }, 30_000);

  it('edits of different settings made on two daemons at once both stay', async () => {
    const [a, b] = await Promise.all([
      cli(A, ['models', 'alias', 'one', 'openai/gpt-one']),
      cli(B, ['models', 'alias', 'two', 'openai/gpt-two']),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    await waitServed(C, 'one', 'gpt-one');
    await waitServed(C, 'two', 'gpt-two');
    for (const d of [A, B]) {
      await expect.poll(() => readJson(file(d, 'config.json')).aliases, { timeout: 10_000, interval: 5 })
        .toMatchObject({ one: 'openai/gpt-one', two: 'openai/gpt-two' });
    }
  }, 30_000);

  it('a daemon leaves its files alone while a CLI command is changing them, and writes the team\'s change once it is done', async () => {
    // What a CLI command holds between reading config.json and writing it back (store/state-lock.ts).
    writeFileSync(file(B, 'config.lock'), '', { mode: 0o600 });
    try {
      expect((await cli(A, ['models', 'alias', 'locked', 'openai/gpt-locked'])).code).toBe(0);
      await waitServed(B, 'locked', 'gpt-locked');
      expect(readJson(file(B, 'config.json')).aliases.locked).toBeUndefined();
    } finally {
      rmSync(file(B, 'config.lock'), { force: true });
    }
    await expect.poll(() => readJson(file(B, 'config.json')).aliases.locked, { timeout: 10_000, interval: 5 }).toBe('openai/gpt-locked');
  }, 30_000);

  it('the cache marks and usage.prices are the team\'s; every other setting stays each machine\'s own', async () => {
    handEdit(A, (c) => {
      c.cache = { ttl: '1h' };
      c.usage = { retentionDays: 7, prices: { 'openai/gpt-one': { input: 1, output: 2 } } };
      c.upstreamTimeoutSeconds = 30;
    });
    for (const d of [B, C]) {
      await expect.poll(() => readJson(file(d, 'config.json')), { timeout: 10_000, interval: 5 })
        .toMatchObject({ cache: { ttl: '1h' }, usage: { prices: { 'openai/gpt-one': { input: 1, output: 2 } } } });
    }
    const b = readJson(file(B, 'config.json'));
    expect(b.usage).toEqual({ prices: { 'openai/gpt-one': { input: 1, output: 2 } } });
    expect(b.upstreamTimeoutSeconds).toBeUndefined();
    expect(b.bodyLimitBytes).toBe(3_000_000);
    expect(readJson(file(A, 'config.json'))).toMatchObject({ usage: { retentionDays: 7 }, upstreamTimeoutSeconds: 30, bodyLimitBytes: 2_000_000 });
  }, 30_000);

  it('a hand edit of config.json is published; a change made while a daemon was stopped is published when it starts, and its last writer wins', async () => {
    const edited = Date.now();
    handEdit(C, (c) => { c.aliases.hand = 'anthropic/claude-hand'; });
    // From the file's write: C's file watch waits 50 ms for the editor to be done.
    timings['hand edit on C → served on A'] = (await waitServed(A, 'hand', 'anthropic/claude-hand')) - edited;
    await logged(C).toContain('store: published config.json\'s change to aliases.hand');

    expect((await cli(A, ['stop'])).code).toBe(0);
    A.pid = 0;
    const offline = await cli(A, ['models', 'alias', 'fast', 'openai/gpt-fast-from-a']);
    expect(offline.code).toBe(0);
    expect(offline.stderr).toContain('warning: the change is not the team\'s yet: the gateway is not running; it publishes the change to the team when it starts');
    // Meanwhile B sets the same alias: A's change, published later, is the last write.
    expect((await cli(B, ['models', 'alias', 'fast', 'openai/gpt-fast-from-b'])).code).toBe(0);
    await waitServed(C, 'fast', 'gpt-fast-from-b');
    await start(A);
    await waitServed(C, 'fast', 'gpt-fast-from-a');
    expect(await servedAs(B, 'fast')).toBe('gpt-fast-from-a');
    await logged(A).toContain('store: published config.json\'s change to aliases.fast as the team\'s config version');
    await logged(A).toContain('it replaced aliases.fast, which another daemon had changed since (last writer wins)');
    // What B did meanwhile and A did not touch stays.
    expect(await servedAs(A, 'two')).toBe('gpt-two');
  }, 60_000);

  it('a change with a problem is not published, and the CLI says so; fixed, it is', async () => {
    handEdit(A, (c) => { c.routing.retries = -1; c.aliases.newer = 'openai/gpt-newer'; });
    await logged(A).toMatch(/store: config\.json's change to .*routing\.retries.* is not published to the team: routing\.retries must be a whole number ≥ 0, not -1; the team's config \(version \d+\) stays/);
    const other = await cli(A, ['models', 'alias', 'other', 'openai/gpt-other']);
    expect(other.code).toBe(0);
    expect(other.stderr).toMatch(/warning: the change is not the team's yet: not published to the team: routing\.retries must be a whole number ≥ 0, not -1/);
    // A serves the team's config, not its own unpublished change.
    expect((await chat(A, 'newer')).status).toBe(400);

    handEdit(A, (c) => { c.routing.retries = 1; });
    await waitServed(B, 'newer', 'gpt-newer');
    expect(await servedAs(B, 'other')).toBe('gpt-other');
    expect((await status(B)).routing.retries).toBe(1);
    expect((await cli(A, ['models', 'alias', 'later', 'openai/gpt-later'])).stderr).toBe('The running gateway reloaded.\n');
  }, 60_000);

  it('a provider key typed by hand into a shared provider entry is not published, and never reaches the database', async () => {
    const typed = { entry: secret('typed-entry'), routing: secret('typed-routing') };
    const before = await admin.query<{ version: string }>('SELECT version FROM shared_config');
    handEdit(A, (c) => { c.providers.box.apiKey = typed.entry; c.routing.providers = { openai: { retries: 1, token: typed.routing } }; });
    await logged(A).toMatch(/store: config\.json's change to .*providers\.box\.apiKey.* is not published to the team: .*providers\.box\.apiKey is not a setting.*routing\.providers\.openai\.token is not a setting/);
    // Refused whole: not even the valid part of the change (routing.providers.openai.retries) is the team's.
    const after = await admin.query<{ version: string; doc: Record<string, any> }>('SELECT version, doc FROM shared_config');
    expect(after.rows[0]!.version).toBe(before.rows[0]!.version);
    expect(after.rows[0]!.doc.routing.providers).toBeUndefined();
    const dump = postgres.dump('team_config');
    expect(dump).toContain(`${box.origin}/v1`);
    for (const k of Object.values(typed)) {
      expect(dump).not.toContain(k);
      for (const d of [A, B, C]) expect(logOf(d), d.name).not.toContain(k);
    }
    handEdit(A, (c) => { delete c.providers.box.apiKey; delete c.routing.providers; });
    expect((await cli(A, ['models', 'alias', 'after-typed', 'openai/gpt-after-typed'])).stderr).toBe('The running gateway reloaded.\n');
    await waitServed(B, 'after-typed', 'gpt-after-typed');
  }, 60_000);

  it('a bad document written into the store is not applied, not even in part; a change of the bad setting from any daemon repairs it', async () => {
    const { rows } = await admin.query<{ version: string; doc: Record<string, any> }>('SELECT version, doc FROM shared_config');
    const good = rows[0]!.doc;
    const bad = { ...good, aliases: { ...good.aliases, fast: 'nowhere/gpt-x', sneaky: 'openai/gpt-sneaky' } };
    await admin.query("UPDATE shared_config SET version = version + 1, doc = $1::json, updated_by = 'psql'", [JSON.stringify(bad)]);
    const v = Number(rows[0]!.version) + 1;
    await admin.query("SELECT pg_notify('gateway_config', $1)", [String(v)]);
    for (const d of [A, B, C]) {
      await logged(d).toContain(`store: the team's config version ${v} (from psql) is not applied: aliases.fast "nowhere/gpt-x" names an unknown provider "nowhere"`);
      expect(await servedAs(d, 'fast'), d.name).toBe('gpt-fast-from-a');
      expect((await chat(d, 'sneaky')).status, d.name).toBe(400);
    }
    expect(readJson(file(C, 'config.json')).aliases.fast).toBe('openai/gpt-fast-from-a');

    expect((await cli(C, ['models', 'alias', 'fast', 'anthropic/claude-fast'])).code).toBe(0);
    await waitServed(A, 'fast', 'anthropic/claude-fast');
    expect(await servedAs(A, 'sneaky')).toBe('gpt-sneaky');
  }, 60_000);

  it('a change made while the store is unreachable is published once it is back', async () => {
    postgres.stop();
    try {
      const r = await cli(A, ['models', 'alias', 'offline', 'openai/gpt-offline']);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('warning: the change is not the team\'s yet: the store is unreachable; the gateway publishes the change once it is back');
    } finally {
      postgres.start();
    }
    // The daemons find the store again (their probes back off to 5 s at most), then A publishes.
    await waitServed(B, 'offline', 'gpt-offline', 30_000);
    await logged(A).toContain('store: published config.json\'s change to aliases.offline');
  }, 60_000);

  it('a change whose notification was lost arrives by the backstop', async () => {
    const D = newHome('d', { GATEWAY_CONFIG_RECHECK_SECONDS: '0.5' });
    await start(D);
    expect(await servedAs(D, 'fast')).toBe('anthropic/claude-fast');
    await admin.query(`UPDATE shared_config SET version = version + 1, doc = (doc::jsonb || jsonb_build_object('aliases', (doc->'aliases')::jsonb || '{"quiet": "openai/gpt-quiet"}'))::json, updated_by = 'psql', updated_at = now()`);
    timings['no notification: store write → served on D (backstop 0.5 s)'] = (await waitServed(D, 'quiet', 'gpt-quiet')) - (await storeWrite());
  }, 60_000);

  it('a daemon whose listening connection was cut reads what it missed when it comes back', async () => {
    await admin.query(`UPDATE shared_config SET version = version + 1, doc = (doc::jsonb || jsonb_build_object('aliases', (doc->'aliases')::jsonb || '{"missed": "openai/gpt-missed"}'))::json, updated_by = 'psql', updated_at = now()`);
    const cut = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'model-gateway b listener'");
    expect(cut.rowCount).toBe(1);
    const cutAt = Date.now();
    timings['listener cut → served on B'] = (await waitServed(B, 'missed', 'gpt-missed')) - cutAt;
  }, 60_000);

  it('no output and no file of the team\'s config holds a provider key', () => {
    const files = Object.values(daemons).flatMap((d) => ['config.json', 'team-config.json', 'key-pools.json', 'daemon.log'].map((f) => file(d, f))).filter((p) => existsSync(p));
    const texts = [...outputs, ...files.map((p) => readFileSync(p, 'utf8'))];
    for (const k of Object.values(BOX_KEY)) for (const t of texts) expect(t).not.toContain(k);
    // And no state lock is left behind by the CLI or a daemon.
    for (const d of Object.values(daemons)) expect(existsSync(file(d, 'config.lock')), d.name).toBe(false);
  });
});
