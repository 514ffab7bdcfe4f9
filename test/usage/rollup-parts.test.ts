// The history a laptop keeps only as rollups, copied by `store migrate` as rollup parts
// (usage_rollups) and added by every other daemon to its own: sequences of migrations and daemons
// that must leave each team daemon's history equal to the laptop's, counted once.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { copyLaptopState } from '../../src/cli/store-migrate.js';
import { usageGroups, usageTotals } from '../../src/daemon/observe/usage/queries.js';
import { UsageStore, type UsageRow } from '../../src/daemon/observe/usage/store.js';
import { TeamHistory } from '../../src/daemon/observe/usage/team-history.js';
import { SharedStore } from '../../src/daemon/store/shared-store.js';
import { parseStoreUrl } from '../../src/daemon/store/store-url.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { until } from '../helpers/wait.js';

const DAY = 86_400_000;
const now = Date.now();
const range = { since: now - 90 * DAY, until: now };

let postgres: TestPostgres;
let dir: string;
beforeAll(async () => { postgres = await startPostgres(); }, 120_000);
afterAll(() => { postgres?.destroy(); });
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'gateway-rollup-parts-')); });
afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

const row = (requestId: string, startedAt: number, daemon: string | null): UsageRow => ({
  requestId, startedAt, keyId: 'k1', keyName: 'app', mode: 'native', provider: 'openai', model: 'gpt-4o', requestedModel: null,
  method: 'POST', path: '/openai/v1/chat/completions', stream: false, status: 200, errorCode: null, errorMessage: null, durationMs: 120,
  ttfbMs: 40, requestBytes: 100, outputBytes: 200, inputTokens: 1000, outputTokens: 50, cachedTokens: null, cacheWriteTokens: null,
  cacheWrite1hTokens: null, reasoningTokens: null, cost: 0.01, cacheSaved: null, session: null, route: null, waitedMs: null, keyLabel: null,
  limit: null, daemon,
});

/** A laptop's state directory whose usage.db holds `rows`, its raw rows pruned before `rawBefore`. */
async function laptopWith(rows: UsageRow[], rawBefore: number): Promise<string> {
  const home = join(dir, 'laptop');
  mkdirSync(home, { recursive: true });
  const store = await UsageStore.open(join(home, 'usage.db'));
  store.insert(rows);
  store.prune(rawBefore, now - 400 * DAY);
  store.close();
  return home;
}

async function requestsIn(path: string): Promise<number> {
  const store = await UsageStore.open(path);
  try { return usageTotals(store.db, range).requests; } finally { store.close(); }
}

/** `store migrate` of `home` into `url`, as the CLI runs it. */
async function migrate(url: string, home: string, env: NodeJS.ProcessEnv = {}) {
  const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'migrate@test', log: () => {}, poolSize: 2 });
  try { return await copyLaptopState(home, shared, env, now); } finally { await shared.close(); }
}

/** A daemon named `name` on the store with its usage.db at `path`: pulls once, returns its requests over 90 days. */
async function daemonPull(url: string, name: string, path: string): Promise<{ requests: number; byDaemon: Array<[string, number]> }> {
  const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: name, log: () => {} });
  const store = await UsageStore.open(path);
  const team = new TeamHistory({ store, shared, daemon: name, log: () => {}, retentionDays: () => 30, backstopMs: 3_600_000 });
  try {
    await team.pull();
    return { requests: usageTotals(store.db, range).requests, byDaemon: usageGroups(store.db, range, 'daemon').map((g) => [g.group, g.requests]) };
  } finally {
    await team.close(); store.close(); await shared.close();
  }
}

describe('store migrate run again', () => {
  it('with GATEWAY_DAEMON_ID set this time: the older history is not added a second time', async () => {
    const url = await postgres.database('again_named');
    // One request 60 days ago (only in the rollups now) and one 10 days ago (a raw row).
    const home = await laptopWith([row('r60', now - 60 * DAY, 'lap:8080'), row('r10', now - 10 * DAY, 'lap:8080')], now - 30 * DAY);
    expect(await requestsIn(join(home, 'usage.db'))).toBe(2);

    const first = await migrate(url, home);
    expect(first.usage.daemon).toBe('lap:8080');
    expect(first.usage.rollups.copied).toBeGreaterThan(0);
    // The second run names the laptop otherwise (GATEWAY_DAEMON_ID now set, or its port changed).
    const second = await migrate(url, home, { GATEWAY_DAEMON_ID: 'alice' });
    expect(second.usage.rollups.copied).toBe(0);

    const team = await daemonPull(url, 'team-1', join(dir, 'team-1.db'));
    expect(team.requests).toBe(2);
    expect(team.byDaemon).toEqual([['lap:8080', 2]]);
  }, 60_000);

  it('after the laptop ran on the store and read another daemon\'s history: that history is not copied back as the laptop\'s', async () => {
    const url = await postgres.database('again_team');
    const home = await laptopWith([row('r10', now - 10 * DAY, 'lap:8080')], now - 30 * DAY);
    await migrate(url, home);
    // Another daemon served a request 20 days ago; the laptop, now on the store as lap:8080, read it.
    const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'team-2', log: () => {} });
    try {
      await shared.query('SELECT usage_push($1::json)', [JSON.stringify([row('t20', now - 20 * DAY, 'team-2')])]);
    } finally { await shared.close(); }
    expect((await daemonPull(url, 'lap:8080', join(home, 'usage.db'))).requests).toBe(2);
    // The laptop's retention is shorter (7 days): its rows of that day are gone, its rollups stay.
    const laptop = await UsageStore.open(join(home, 'usage.db'));
    laptop.prune(now - 7 * DAY, now - 400 * DAY);
    laptop.close();

    await migrate(url, home);
    const team = await daemonPull(url, 'team-1', join(dir, 'team-1.db'));
    expect(team.byDaemon).toEqual([['lap:8080', 1], ['team-2', 1]]);
  }, 60_000);
});

describe('a daemon of the parts\' own name', () => {
  it('moves its cursor past them, so its later pulls do not read them again', async () => {
    const url = await postgres.database('own_parts');
    const home = await laptopWith([row('r60', now - 60 * DAY, 'lap:8080'), row('r61', now - 61 * DAY, 'lap:8080')], now - 30 * DAY);
    const copied = (await migrate(url, home)).usage.rollups.copied;
    expect(copied).toBeGreaterThan(0);
    const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'lap:8080', log: () => {} });
    const store = await UsageStore.open(join(home, 'usage.db'));
    const team = new TeamHistory({ store, shared, daemon: 'lap:8080', log: () => {}, retentionDays: () => 30, backstopMs: 3_600_000 });
    try {
      await team.pull();
      expect(usageTotals(store.db, range).requests).toBe(2); // its own, not added again
      // Each pull reads usage_rollups after the cursor: every part the store holds is behind it.
      const { rows: [r] } = await shared.query<{ id: string; top: number }>('SELECT (SELECT id FROM usage_store) AS id, max(seq)::float8 AS top FROM usage_rollups');
      expect(store.pulledUpTo(`${r!.id}/rollups`)).toBe(r!.top);
    } finally {
      await team.close(); store.close(); await shared.close();
    }
  }, 60_000);
});

describe('the laptop joining the team under another name', () => {
  it('knows the parts of the names its history carried as its own, at its first pull and at later ones', async () => {
    const url = await postgres.database('renamed_laptop');
    const home = await laptopWith([row('r60', now - 60 * DAY, 'lap:8080'), row('r61', now - 61 * DAY, 'lap:8080'), row('r1', now - DAY, 'lap:8080')], now - 30 * DAY);
    expect((await migrate(url, home)).usage.rollups.copied).toBeGreaterThan(0);
    // GATEWAY_DAEMON_ID set only now: the laptop runs on the store as "alice".
    const first = await daemonPull(url, 'alice', join(home, 'usage.db'));
    expect(first.requests).toBe(3);
    expect(first.byDaemon).toEqual([['lap:8080', 3]]);
    // Another laptop's history arrives later: it is added, and the first laptop's is still its own.
    const bob = join(dir, 'bob');
    mkdirSync(bob);
    const bobStore = await UsageStore.open(join(bob, 'usage.db'));
    bobStore.insert([row('o50', now - 50 * DAY, 'bob:8080'), row('o2', now - 2 * DAY, 'bob:8080')]);
    bobStore.prune(now - 30 * DAY, now - 400 * DAY);
    bobStore.close();
    await migrate(url, bob);
    const again = await daemonPull(url, 'alice', join(home, 'usage.db'));
    expect(again.byDaemon).toEqual([['lap:8080', 3], ['bob:8080', 2]]);
    // A fresh daemon takes the whole team's history, each part once.
    expect((await daemonPull(url, 'team-1', join(dir, 'team-1.db'))).byDaemon).toEqual([['lap:8080', 3], ['bob:8080', 2]]);
  }, 60_000);
});

describe('when a daemon reads usage_rollups', () => {
  it('not for the rows another daemon pushed (a query more per push of any daemon), but on store migrate\'s notice', async () => {
    const url = await postgres.database('rows_only');
    const lines: string[] = [];
    const shared = await SharedStore.open({ store: parseStoreUrl(url), daemonId: 'team-1', log: () => {} });
    const store = await UsageStore.open(join(dir, 'team-1.db'));
    // The backstop out of the way: what is read below is read for a notification.
    const team = new TeamHistory({ store, shared, daemon: 'team-1', log: (l) => lines.push(l), retentionDays: () => 30, backstopMs: 3_600_000 }).start();
    try {
      await team.pull(); // the first pull (the start's) reads the parts too
      // Were usage_rollups read for another daemon's rows, that pull would fail and say so.
      await shared.query('ALTER TABLE usage_rollups RENAME TO usage_rollups_away');
      try {
        await shared.query('SELECT usage_push($1::json)', [JSON.stringify([row('t1', now - DAY, 'team-2')])]);
        await until('the pushed row is read', async () => (usageTotals(store.db, range).requests === 1 ? true : undefined), 10_000, 20);
        await team.pull();
        expect(lines).toEqual([]);
      } finally {
        await shared.query('ALTER TABLE usage_rollups_away RENAME TO usage_rollups');
      }
      // store migrate's parts: read as they commit.
      await migrate(url, await laptopWith([row('r60', now - 60 * DAY, 'lap:8080')], now - 30 * DAY));
      await until('the laptop\'s older history is read', async () => (usageTotals(store.db, range).requests === 2 ? true : undefined), 10_000, 20);
      expect(usageGroups(store.db, range, 'daemon').map((g) => [g.group, g.requests])).toEqual([['lap:8080', 1], ['team-2', 1]]);
    } finally {
      await team.close(); store.close(); await shared.close();
    }
  }, 60_000);
});
