// The key store boundary (store/key-records.ts), held to one contract by both of its stores: the
// laptop's keys.json and the PostgreSQL store daemons share. The same records, name rules, lookups,
// limits, revocations and session keys, and on PostgreSQL: a change is announced to every listener
// with the key's id only once it is committed, and two daemons creating one name at once make one key.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileKeyRecords, type KeyRecords } from '../../src/daemon/store/key-records.js';
import { hashKey, keyStatus } from '../../src/daemon/store/keys.js';
import { KEYS_CHANNEL, PgKeyRecords } from '../../src/daemon/store/pg-keys.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';

let postgres: TestPostgres;
let storeUrl = '';
const opened: SharedStore[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  const admin = new pg.Pool({ connectionString: postgres.url, max: 1 });
  await admin.query('CREATE DATABASE key_records');
  await admin.end();
  storeUrl = postgres.url.replace(/\/postgres$/, '/key_records');
}, 120_000);

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  postgres?.destroy();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function openShared(name: string): Promise<SharedStore> {
  const s = await SharedStore.open({ store: parseStoreUrl(storeUrl), daemonId: name, log: () => {} });
  opened.push(s);
  return s;
}

const file = async (): Promise<KeyRecords> => {
  const dir = mkdtempSync(join(tmpdir(), 'key-records-'));
  dirs.push(dir);
  return new FileKeyRecords(dir);
};
const postgresStore = async (): Promise<KeyRecords> => {
  const shared = await openShared('contract');
  await shared.query('TRUNCATE keys');
  return new PgKeyRecords(shared);
};

const T0 = new Date('2026-11-27T10:00:00Z');
const LEASE = 600_000;

describe.each([['keys.json', file], ['postgres', postgresStore]] as const)('%s', (_name, make) => {
  let store: KeyRecords;
  beforeAll(async () => { store = await make(); });

  it('creates proxy and admin keys whose records hold only a hash, and gives them back as made', async () => {
    const proxy = await store.create({ name: 'ci', expiresAt: new Date('2027-01-01T00:00:00Z'), models: ['openai/gpt-5.4', 'claude-*'], limits: { rpm: 5, budget: { usd: 10, period: 'week' }, tz: 'Europe/Berlin' } }, T0);
    const admin = await store.createAdmin({}, T0);
    expect(proxy.key).toMatch(/^sk-proxy-[A-Za-z0-9_-]{43}$/);
    expect(admin.key).toMatch(/^sk-gwadmin-[A-Za-z0-9_-]{43}$/);
    expect(proxy.record).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}$/), name: 'ci', hash: hashKey(proxy.key), createdAt: T0.toISOString(), expiresAt: '2027-01-01T00:00:00.000Z',
      models: ['openai/gpt-5.4', 'claude-*'], revokedAt: null, limits: { rpm: 5, budget: { usd: 10, period: 'week' }, tz: 'Europe/Berlin' },
    });
    expect(admin.record).toEqual({ id: expect.any(String), name: `admin-${admin.record.id}`, hash: hashKey(admin.key), createdAt: T0.toISOString(), expiresAt: null, models: null, revokedAt: null, admin: true });
    const all = await store.list();
    expect(all).toEqual([proxy.record, admin.record]);
    expect(JSON.stringify(all)).not.toContain(proxy.key.slice('sk-proxy-'.length));
    expect(await store.get(proxy.record.id)).toEqual(proxy.record);
    expect(await store.get('00000000')).toBeUndefined();
  });

  it('a name is refused while an active key has it, and a bad name always; find prefers the id, then the active key of a name', async () => {
    await expect(store.create({ name: 'ci' })).rejects.toThrow('an active key named "ci" already exists; revoke it or pick another --name');
    await expect(store.create({ name: 'no spaces' })).rejects.toThrow(/key name "no spaces" must be 1-64 letters/);
    const old = (await store.find('ci'))!;
    await store.revoke('ci');
    const again = await store.create({ name: 'ci' });
    expect((await store.find('ci'))?.id).toBe(again.record.id);
    expect((await store.find(old.id))?.revokedAt).not.toBeNull();
    await store.revoke(again.record.id);
    expect((await store.find('ci'))?.id).toBe(old.id); // no active one: the first of that name
    expect(await store.find('nobody')).toBeUndefined();
  });

  it('limits change by patch, an admin key takes none, a revocation is kept once made', async () => {
    const { record } = await store.create({ name: 'lim', limits: { rpm: 5 } });
    expect((await store.setLimits('lim', { tpm: 1000 })).limits).toEqual({ rpm: 5, tpm: 1000 });
    expect((await store.setLimits(record.id, { rpm: null, tpm: null })).limits).toBeUndefined();
    expect((await store.get(record.id))?.limits).toBeUndefined();
    const admin = (await store.list()).find((k) => k.admin)!;
    await expect(store.setLimits(admin.id, { rpm: 1 })).rejects.toThrow(/an admin key has no models or limits/);
    await expect(store.setLimits('nobody', { rpm: 1 })).rejects.toThrow('no key with id or name "nobody"');
    const first = await store.revoke('lim', new Date('2026-11-27T11:00:00Z'));
    expect(first.revokedAt).toBe('2026-11-27T11:00:00.000Z');
    expect((await store.revoke(record.id, new Date('2026-11-27T12:00:00Z'))).revokedAt).toBe('2026-11-27T11:00:00.000Z');
    expect(keyStatus((await store.get(record.id))!)).toBe('revoked');
  });

  it('session keys: renewed while live, never once revoked, removed at their end, and stale ones dropped by the next', async () => {
    const s1 = await store.createSession('chat', LEASE, T0);
    expect(s1.record).toMatchObject({ name: `chat.${s1.record.id}`, session: true, expiresAt: new Date(T0.getTime() + LEASE).toISOString() });
    const until = new Date(T0.getTime() + 2 * LEASE);
    expect((await store.renewSession(s1.record.id, until))?.expiresAt).toBe(until.toISOString());
    const plain = (await store.list()).find((k) => !k.session && !k.admin)!;
    expect(await store.renewSession(plain.id, until)).toBeUndefined();
    expect(await store.removeSession(plain.id)).toBe(false);
    await store.revoke(s1.record.id);
    expect(await store.renewSession(s1.record.id, until)).toBeUndefined();

    const s2 = await store.createSession('run', LEASE, T0);
    expect(await store.removeSession(s2.record.id)).toBe(true);
    expect(await store.get(s2.record.id)).toBeUndefined();
    expect(await store.removeSession(s2.record.id)).toBe(false);

    // One lapsed over a lease ago, one revoked: both go when the next session key is made; a live one stays.
    const lapsed = await store.createSession('run', LEASE, T0);
    const live = await store.createSession('run', LEASE, new Date(T0.getTime() + 2 * LEASE));
    await store.createSession('chat', LEASE, new Date(T0.getTime() + 2 * LEASE + 1));
    const ids = (await store.list()).map((k) => k.id);
    expect(ids).not.toContain(s1.record.id);
    expect(ids).not.toContain(lapsed.record.id);
    expect(ids).toContain(live.record.id);
  });
});

describe('postgres: notifications and two daemons at once', () => {
  it('each change is announced with its key\'s id, after its commit; a refused change announces nothing', async () => {
    const writer = new PgKeyRecords(await openShared('writer'));
    const listener = await openShared('listener');
    const heard: string[] = [];
    listener.on(KEYS_CHANNEL, (id) => heard.push(id));
    // The listener's LISTEN is in place once it hears its own notification.
    while (!heard.includes('ready')) {
      await listener.notify(KEYS_CHANNEL, 'ready');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Each change is heard once its commit is; what else is heard (a late 'ready', the session keys
    // of earlier tests that a new session key sweeps away, announced too) is no change of these keys.
    const times = (id: string) => heard.filter((x) => x === id).length;
    const heardOnce = (id: string, before: number) => until(`the announcement of ${id}`, () => times(id) === before + 1, 10_000, 5);

    const { record } = await writer.create({ name: 'announced' });
    await heardOnce(record.id, 0);
    await writer.setLimits('announced', { rpm: 2 });
    await heardOnce(record.id, 1);
    await expect(writer.create({ name: 'announced' })).rejects.toThrow(/already exists/);
    await writer.revoke('announced');
    await heardOnce(record.id, 2); // and not a fourth time: the refused creation announced nothing
    const session = await writer.createSession('chat', LEASE);
    await heardOnce(session.record.id, 0);
    await writer.removeSession(session.record.id);
    await heardOnce(session.record.id, 1);
    expect(heard.filter((x) => x === record.id || x === session.record.id)).toEqual([record.id, record.id, record.id, session.record.id, session.record.id]);
  });

  it('two daemons creating the same name at once make one key; the other is told the name is taken', async () => {
    const [a, b] = [new PgKeyRecords(await openShared('a')), new PgKeyRecords(await openShared('b'))];
    for (let round = 0; round < 10; round++) {
      const results = await Promise.allSettled([a.create({ name: `race-${round}` }), b.create({ name: `race-${round}` })]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { message: expect.stringMatching(/already exists/) } });
    }
    const names = (await a.list()).map((k) => k.name).filter((n) => n.startsWith('race-'));
    expect(names).toHaveLength(10);
  });

  it('the table refuses anything but a hash in place of one', async () => {
    const shared = await openShared('raw');
    await expect(shared.query("INSERT INTO keys (id, name, hash, created_at) VALUES ('0badc0de', 'raw', 'sk-proxy-plaintext', now())")).rejects.toThrow(/keys_hash_check/);
  });
});
