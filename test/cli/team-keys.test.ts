// Team mode's keys, as a team runs them: three real daemons (`gateway start --store`, one state
// directory each, A, B and C) on one PostgreSQL database, in front of mock providers on loopback,
// and the CLI run with each daemon's state directory. A key made through one daemon works on the
// others; a revocation, a limits change, a session key and an admin key reach every daemon by the
// store's notification (each daemon's periodic re-read is set to a day, so nothing else could have
// brought them); a daemon that missed notifications re-reads every key when it is back; while the
// database is down every daemon keeps serving the keys it had; the CLI of a stopped daemon acts on
// the database itself; and a dump of the database holds no key, only hashes.
//
// The times a revocation and a creation took to reach the other daemons are printed (for the
// report), never asserted: the test proves the mechanism, a notification, by the backstop's length.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import pg from 'pg';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/daemon/server.js';
import { hashKey, KeyStore } from '../../src/daemon/store/keys.js';
import { staticSecrets } from '../../src/daemon/store/secrets.js';
import { PgKeyRecords } from '../../src/daemon/store/pg-keys.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { makeTempHome, runCli, type CliResult } from '../helpers/cli.js';
import { MOCK_TEXT, startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until as waitUntil } from '../helpers/wait.js';

const DATABASE = 'team_keys';
const NAMES = ['A', 'B', 'C'] as const;
type Name = (typeof NAMES)[number];

interface Daemon {
  name: Name;
  home: string;
  url: string;
  pid: number;
  cli(args: string[], extra?: Record<string, string | undefined>): Promise<CliResult>;
  adminToken(): string;
}

let postgres: TestPostgres;
let storeUrl = '';
let openaiMock: MockProvider;
let anthropicMock: MockProvider;
const homes: { dir: string; cleanup(): void }[] = [];
const d = {} as Record<Name, Daemon>;
/** Every key this file made that stays in the store (proxy and admin): the dump must hold each one's hash and never the key. */
const plaintexts: string[] = [];
/** Keys that were made and then deleted (session keys): never in the dump either. */
const gone: string[] = [];
/** The key of the first test, active throughout. */
let teamKey = '';

function env(name: string, home: string): Record<string, string> {
  return {
    GATEWAY_OPENAI_BASE_URL: openaiMock.origin, GATEWAY_OPENAI_API_KEY: openaiMock.key,
    GATEWAY_ANTHROPIC_BASE_URL: anthropicMock.origin, GATEWAY_ANTHROPIC_API_KEY: anthropicMock.key,
    // Never the user's keychain: a bus that does not exist.
    GATEWAY_KEYCHAIN_STORE: 'secret-service', DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(home, 'no-bus-here')}`,
    GATEWAY_DAEMON_ID: name,
    // The backstop re-read once a day: whatever reaches a daemon within the test came by notification.
    GATEWAY_KEYS_RECHECK_SECONDS: '86400',
  };
}

async function startDaemonProcess(name: Name): Promise<Daemon> {
  const home = makeTempHome(`gateway-team-${name}-`);
  homes.push(home);
  const cli = (args: string[], extra: Record<string, string | undefined> = {}) => runCli(args, { home: home.dir, env: { ...env(name, home.dir), ...extra }, timeoutMs: 30_000 });
  const started = await cli(['start', '--port', '0', '--store', storeUrl]);
  const m = /gateway running at (http:\/\/127\.0\.0\.1:\d+) \(pid (\d+)\)/.exec(started.stdout);
  if (!m) throw new Error(`daemon ${name} did not start: ${started.stdout}${started.stderr}`);
  return { name, home: home.dir, url: m[1]!, pid: Number(m[2]), cli, adminToken: () => readFileSync(join(home.dir, 'admin-token'), 'utf8').trim() };
}

/** Waits for `probe` to give a value (it is tried again every 10 ms); fails after `timeoutMs`. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> => waitUntil(what, probe, timeoutMs, 10);

interface Reply { status: number; body: any; at: number }

async function chat(url: string, key: string): Promise<Reply> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  let body: unknown;
  try { body = JSON.parse(text); } catch { body = text; }
  return { status: res.status, body, at: Date.now() };
}

/** Until `url` accepts `key` (an answer that is not a 401): the time it first did. */
function acceptedBy(url: string, key: string, what: string): Promise<number> {
  return until(what, async () => { const r = await chat(url, key); return r.status === 401 ? undefined : (expect(r.status).toBe(200), r.at); });
}

/** Until `url` refuses `key` with a 401: that answer. */
function refusedBy(url: string, key: string, what: string): Promise<Reply> {
  return until(what, async () => { const r = await chat(url, key); return r.status === 401 ? r : undefined; });
}

async function createKey(on: Daemon, args: string[]): Promise<string> {
  const r = await on.cli(['keys', 'create', ...args]);
  expect(r.code, r.stderr).toBe(0);
  const key = r.stdout.trim();
  plaintexts.push(key);
  return key;
}

beforeAll(async () => {
  postgres = await startPostgres();
  const admin = new pg.Pool({ connectionString: postgres.url, max: 1 });
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();
  storeUrl = postgres.url.replace(/\/postgres$/, `/${DATABASE}`);
  [openaiMock, anthropicMock] = await Promise.all([startMockProvider('openai'), startMockProvider('anthropic')]);
  // One after another: each start waits for its daemon, the first migrates the schema.
  for (const name of NAMES) d[name] = await startDaemonProcess(name);
}, 180_000);

afterAll(async () => {
  for (const name of NAMES) {
    const daemon = d[name];
    if (!daemon) continue;
    await daemon.cli(['stop']).catch(() => undefined);
    try { process.kill(daemon.pid, 'SIGKILL'); } catch { /* stopped */ }
  }
  await Promise.all([openaiMock?.close(), anthropicMock?.close()]);
  postgres?.destroy();
  for (const h of homes) h.cleanup();
});

describe('three daemons on one store', () => {
  it('a key made on A with the CLI works on B through the OpenAI SDK, is listed on C, and is in no keys.json', async () => {
    const key = await createKey(d.A, ['--name', 'team-app']);
    teamKey = key;
    const returned = Date.now();
    expect(key).toMatch(/^sk-proxy-/);
    // B hears of it by the store's notification (its periodic re-read is a day away).
    const known = await acceptedBy(d.B.url, key, 'B accepts the key made on A');
    const shown = await d.A.cli(['keys', 'show', 'team-app', '--json']);
    const createdAt = Date.parse((JSON.parse(shown.stdout) as { createdAt: string }).createdAt);
    console.log(`team keys: created through A at ${new Date(createdAt).toISOString()}: first accepted by B ${known - createdAt} ms later (${known - returned} ms from the creating CLI's exit)`);
    const client = new OpenAI({ baseURL: `${d.B.url}/v1`, apiKey: key, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'openai/gpt-5.4', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBe(MOCK_TEXT);
    // The provider got the provider's key, never the proxy key.
    expect(openaiMock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${openaiMock.key}`);

    // A name is taken team-wide, and the CLI says so as it does on a laptop.
    const taken = await d.B.cli(['keys', 'create', '--name', 'team-app']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toBe('error: an active key named "team-app" already exists; revoke it or pick another name\n');

    const listed = await d.C.cli(['keys', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string; status: string }[]).find((k) => k.name === 'team-app')).toMatchObject({ status: 'active' });
    for (const name of NAMES) expect(existsSync(join(d[name].home, 'keys.json'))).toBe(false);
  });

  it('a key revoked on C is refused on A and B with a 401 in the door\'s shape, by notification', async () => {
    const key = await createKey(d.A, ['--name', 'doomed']);
    await acceptedBy(d.B.url, key, 'B accepts the key');
    // A and B answer the key without pause; the first 401 each gives is when the revocation reached it.
    const first: Partial<Record<'A' | 'B', Reply>> = {};
    const running: Promise<void>[] = [];
    const deadline = Date.now() + 15_000;
    // The cheapest authenticated request (the model list, no provider call), so the first refusal is seen within a few ms.
    const watch = (name: 'A' | 'B') => {
      let served!: () => void;
      running.push(new Promise<void>((resolve) => { served = resolve; }));
      return (async () => {
        while (!first[name] && Date.now() < deadline) {
          const res = await fetch(`${d[name].url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
          const r: Reply = { status: res.status, body: await res.json(), at: Date.now() };
          if (r.status === 401) first[name] = r;
          else expect(r.status).toBe(200);
          served();
        }
      })();
    };
    const watching = Promise.all([watch('A'), watch('B')]);
    await Promise.all(running); // both are answering the key before it is revoked
    const r = await d.C.cli(['keys', 'revoke', 'doomed']);
    const cliReturned = Date.now();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Revoked key [0-9a-f]{8} \("doomed"\)\./);
    await watching;
    const shown = await d.C.cli(['keys', 'show', 'doomed', '--json']);
    const revokedAt = Date.parse((JSON.parse(shown.stdout) as { revokedAt: string }).revokedAt);
    for (const name of ['A', 'B'] as const) {
      const refusal = first[name];
      expect(refusal, `${name} never refused the revoked key`).toBeDefined();
      expect(refusal!.body).toMatchObject({ error: { code: 'key_revoked' } });
      // The Chat door's refusal, in OpenAI's shape.
      expect((await chat(d[name].url, key)).body).toEqual({ error: { message: expect.stringMatching(/revoked/), type: 'invalid_request_error', param: null, code: 'key_revoked' } });
      console.log(`team keys: revoked through C at ${new Date(revokedAt).toISOString()}: first refused by ${name} ${refusal!.at - revokedAt} ms later (${refusal!.at - cliReturned} ms from the revoking CLI's exit)`);
    }
    // The Messages door refuses it in Anthropic's shape, through Anthropic's SDK.
    const anthropic = new Anthropic({ baseURL: d.B.url, apiKey: key, maxRetries: 0 });
    const refused = await anthropic.messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((refused as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringMatching(/revoked/) } });
  });

  it('an admin key made on B acts on C (gateway --url), signs in to A\'s dashboard, and once revoked on A is refused by C', async () => {
    const adminKey = await createKey(d.B, ['--admin', '--name', 'ops']);
    expect(adminKey).toMatch(/^sk-gwadmin-/);
    const adminKeys = (url: string) => fetch(`${url}/admin/keys`, { headers: { authorization: `Bearer ${adminKey}` } });
    await until('C takes the admin key made on B', async () => { const r = await adminKeys(d.C.url); await r.text(); return r.status === 200 ? true : undefined; });

    // Another machine's CLI: an empty state directory, the admin key in the environment.
    const elsewhere = makeTempHome('gateway-team-ops-');
    homes.push(elsewhere);
    const ops = (args: string[]) => runCli(['--url', d.C.url, ...args], { home: elsewhere.dir, env: { GATEWAY_ADMIN_KEY: adminKey } });
    const listed = await ops(['keys', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as { name: string; admin?: boolean; status: string }[];
    expect(rows.find((k) => k.name === 'ops')).toMatchObject({ admin: true, status: 'active' });
    expect(rows.find((k) => k.name === 'team-app')).toMatchObject({ status: 'active' });
    const made = await ops(['keys', 'create', '--name', 'from-ops']);
    expect(made.code, made.stderr).toBe(0);
    const fromOps = made.stdout.trim();
    plaintexts.push(fromOps);
    await acceptedBy(d.A.url, fromOps, 'A accepts the key made through C with the admin key');

    // The dashboard of A signs in with it.
    await until('A takes the admin key', async () => { const r = await adminKeys(d.A.url); await r.text(); return r.status === 200 ? true : undefined; });
    const signIn = await fetch(`${d.A.url}/dashboard/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key: adminKey }).toString(), redirect: 'manual' });
    await signIn.text();
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.getSetCookie()[0]?.split(';', 1)[0] ?? '';
    expect(cookie).not.toBe('');
    const page = await fetch(`${d.A.url}/dashboard/keys`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('from-ops');

    // Revoked on A: C refuses it, and A's dashboard session ends with it.
    const revoked = await d.A.cli(['keys', 'revoke', 'ops']);
    expect(revoked.code, revoked.stderr).toBe(0);
    await until('C refuses the revoked admin key', async () => { const r = await adminKeys(d.C.url); await r.text(); return r.status === 401 ? true : undefined; });
    const refused = await ops(['keys', 'list']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the admin key in GATEWAY_ADMIN_KEY: admin key "ops" has been revoked/);
    const after = await fetch(`${d.A.url}/dashboard/keys`, { headers: { cookie } });
    await after.text();
    expect(after.status).toBe(401);
  });

  it('a session key of A works on B until A ends it; a limits change made on C holds on B', async () => {
    const session = await fetch(`${d.A.url}/admin/session-keys`, {
      method: 'POST', headers: { authorization: `Bearer ${d.A.adminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ purpose: 'run' }),
    });
    expect(session.status).toBe(201);
    const { id, key } = await session.json() as { id: string; key: string };
    gone.push(key);
    await acceptedBy(d.B.url, key, 'B accepts A\'s session key');
    const ended = await fetch(`${d.A.url}/admin/session-keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${d.A.adminToken()}` } });
    expect(await ended.json()).toEqual({ ended: true });
    const refusal = await refusedBy(d.B.url, key, 'B refuses the ended session key');
    expect(refusal.body).toMatchObject({ error: { code: 'invalid_api_key' } });

    const key2 = await createKey(d.A, ['--name', 'limited']);
    await acceptedBy(d.B.url, key2, 'B accepts the key');
    const set = await d.C.cli(['keys', 'set', 'limited', '--rpm', '1']);
    expect(set.code, set.stderr).toBe(0);
    // Until B holds the key to one request a minute its requests pass; then one more is all it lets through.
    const limited = await until('B holds the key to its new rpm', async () => { const r = await chat(d.B.url, key2); return r.status === 429 ? r : (expect(r.status).toBe(200), undefined); });
    expect(limited.body).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
  });

  it('`gateway env` of a team daemon makes its client key in the store: it works on the others, and its revocation forgets the held copy', async () => {
    const printed = await d.A.cli(['env', 'openai', '--insecure-storage']);
    expect(printed.code, printed.stderr).toBe(0);
    const key = /^export OPENAI_API_KEY='(sk-proxy-[^']+)'$/m.exec(printed.stdout)?.[1];
    expect(key).toBeDefined();
    plaintexts.push(key!);
    await acceptedBy(d.C.url, key!, 'C accepts the client key of A\'s env');
    // Asked again, env gives the same key (its plaintext held here matches the store's record).
    const again = await d.A.cli(['env', 'openai', '--insecure-storage']);
    expect(again.stdout).toContain(key!);
    const revoked = await d.A.cli(['keys', 'revoke', 'env']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toMatch(/Deleted its stored plaintext/);
    expect(readFileSync(join(d.A.home, 'insecure-secrets.json'), 'utf8')).not.toContain(key!);
    await refusedBy(d.C.url, key!, 'C refuses the revoked client key');
  });

  it('a daemon whose listening connection dropped re-reads every key when it is back: a revocation it missed applies', async () => {
    const key = await createKey(d.B, ['--name', 'missed']);
    await acceptedBy(d.A.url, key, 'A accepts the key');
    const direct = await SharedStore.open({ store: parseStoreUrl(storeUrl), daemonId: 'test', log: () => {} });
    try {
      const listeners = async () => (await direct.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'model-gateway A listener'")).rows[0]!.n;
      expect(await listeners()).toBe(1);
      await direct.query("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = 'model-gateway A listener'");
      await new PgKeyRecords(direct).revoke('missed');
      // A had no listening connection when the revocation was committed: its notification went to B and C only.
      expect(await listeners()).toBe(0);
      await refusedBy(d.B.url, key, 'B refuses the key');
      const refusal = await refusedBy(d.A.url, key, 'A, back on the store, refuses the key');
      expect(refusal.body).toMatchObject({ error: { code: 'key_revoked' } });
      await until('A listens again', async () => ((await listeners()) === 1 ? true : undefined));
    } finally {
      await direct.close();
    }
  });

  it('while the database is down every daemon keeps serving the keys it had; a key change is a 503; then changes flow again', async () => {
    postgres.stop();
    try {
      // A reload meanwhile cannot read the store: the daemon keeps the keys it had rather than none.
      const reload = await fetch(`${d.A.url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${d.A.adminToken()}` } });
      expect(reload.status).toBe(200);
      for (const name of NAMES) expect((await chat(d[name].url, teamKey)).status, name).toBe(200);
      const create = await fetch(`${d.A.url}/admin/keys`, {
        method: 'POST', headers: { authorization: `Bearer ${d.A.adminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'while-down' }),
      });
      expect(create.status).toBe(503);
      expect(await create.json()).toMatchObject({ error: { code: 'store_unavailable', message: expect.stringMatching(/^the store at gw@127\.0\.0\.1:\d+\/team_keys: /) } });
    } finally {
      postgres.start();
    }
    const after = await until('B can create keys again', async () => {
      const r = await d.B.cli(['keys', 'create', '--name', 'after-outage']);
      return r.code === 0 ? r.stdout.trim() : undefined;
    }, 30_000);
    plaintexts.push(after);
    await acceptedBy(d.A.url, after, 'A accepts a key made after the outage');
    await acceptedBy(d.C.url, after, 'C accepts a key made after the outage');
  });

  it('the CLI of a stopped daemon acts on the store itself: its key works on the others at once, its revocation too', async () => {
    const stopped = await d.C.cli(['stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    const key = await createKey(d.C, ['--name', 'offline']);
    await acceptedBy(d.A.url, key, 'A accepts the key made with C\'s CLI while C is stopped');
    const listed = await d.C.cli(['keys', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/offline/);
    const revoked = await d.C.cli(['keys', 'revoke', 'offline']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).not.toMatch(/reloaded/);
    await refusedBy(d.B.url, key, 'B refuses the key revoked with C\'s CLI');
    expect(existsSync(join(d.C.home, 'keys.json'))).toBe(false);
  });

  it('a pg_dump of the database holds each key\'s hash and never a key', () => {
    const dump = postgres.dump(DATABASE);
    expect(plaintexts.length).toBeGreaterThanOrEqual(9);
    for (const key of plaintexts) expect(dump).toContain(hashKey(key));
    for (const key of [...plaintexts, ...gone]) {
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.replace(/^sk-(proxy|gwadmin)-/, '')); // nor its secret part alone
    }
  });
});

describe('the backstop', () => {
  it('a change that sent no notification (a hand edit of the table) is read at the next periodic re-read', async () => {
    const shared = await SharedStore.open({ store: parseStoreUrl(storeUrl), daemonId: 'backstop', log: () => {} });
    const home = makeTempHome('gateway-team-backstop-');
    homes.push(home);
    const daemon = await startDaemon({
      port: 0, stateDir: home.dir, shared, keysRecheckMs: 200,
      secrets: staticSecrets({ openai: openaiMock.key }), origins: { openai: openaiMock.origin },
    });
    try {
      const { key } = await new PgKeyRecords(shared).create({ name: 'hand-edited' });
      await acceptedBy(daemon.url, key, 'the daemon accepts the key');
      await acceptedBy(d.A.url, key, 'A accepts the key');
      await shared.query("UPDATE keys SET revoked_at = now() WHERE name = 'hand-edited'");
      const refusal = await refusedBy(daemon.url, key, 'the periodic re-read finds the revocation');
      expect(refusal.body).toMatchObject({ error: { code: 'key_revoked' } });
      // A, whose re-read is a day away, heard nothing: the edit sent no notification.
      expect((await chat(d.A.url, key)).status).toBe(200);
    } finally {
      await daemon.close(1000);
      await shared.close();
    }
  });

  it('a laptop\'s keys.json is not served in team mode, and the log says where keys live now', async () => {
    const home = makeTempHome('gateway-team-laptop-');
    homes.push(home);
    const { key } = new KeyStore(home.dir).create({ name: 'laptop-key' });
    const shared = await SharedStore.open({ store: parseStoreUrl(storeUrl), daemonId: 'laptop', log: () => {} });
    const lines: string[] = [];
    const daemon = await startDaemon({
      port: 0, stateDir: home.dir, shared, log: (l) => lines.push(l),
      secrets: staticSecrets({ openai: openaiMock.key }), origins: { openai: openaiMock.origin },
    });
    try {
      expect(lines).toContain(`warning: team mode: the 1 key(s) in keys.json are not used; keys live in the store at gw@127.0.0.1:${postgres.port}/${DATABASE} now`);
      const r = await chat(daemon.url, key);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: { code: 'invalid_api_key' } });
      expect((await chat(daemon.url, teamKey)).status).toBe(200);
    } finally {
      await daemon.close(1000);
      await shared.close();
    }
  });
});
