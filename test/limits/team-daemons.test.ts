// Per-key limits across three real daemons (`gateway start --store …`) on one real PostgreSQL:
// with the store up, an rpm limit and a budget hit by concurrent streams hold across the three;
// with PostgreSQL stopped under load, each daemon serves on its share of each limit, refuses the
// key set to fail closed, says it is degraded (status, the monitor's events, the dashboard), and
// once PostgreSQL is back the shared counters hold every request served, counted once.
// The keys are made in the shared store before the daemons start (team-daemons.ts).
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribeEvents } from '../../src/cli/events-client.js';
import type { StoreStatusView } from '../../src/daemon/store/store-health.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTeam, until, type Team, type TeamDaemon } from '../helpers/team-daemons.js';

// USD per million tokens: a request of the mock's (12 in, 5 out) costs 12×10 + 5×100 = 620 µUSD.
const PRICE = { input: 10, output: 100 };
const ACTUAL = (12 * PRICE.input + 5 * PRICE.output) / 1e6;
const MODEL = 'openai/gpt-lim';

const KEYS = {
  rpm: { rpm: 9 },
  budget: { budget: { usd: 0.02, period: 'day' as const } },
  load: { budget: { usd: 100, period: 'day' as const } },
  shareRpm: { rpm: 30 },
  shareBudget: { budget: { usd: 0.03, period: 'day' as const } },
  closed: { rpm: 1000, failClosed: true },
};

let postgres: TestPostgres;
let url: string;
let team: Team & { keys: Record<keyof typeof KEYS, { key: string; id: string }> };
let db: pg.Pool;

beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.database('team_limits');
  team = await startTeam({ url, count: 3, keys: KEYS, config: { usage: { prices: { [MODEL]: PRICE } } } }) as typeof team;
  db = new pg.Pool({ connectionString: url, max: 2 });
  db.on('error', () => {}); // the server is stopped on purpose below
  // A joining daemon is told to the others at once: each counts three alive.
  await until('three daemons alive on each', async () => (await Promise.all(team.daemons.map((d) => d.store()))).every((s) => s.daemons === 3));
}, 120_000);
afterAll(async () => {
  await db?.end();
  await team?.close();
  postgres?.destroy();
});

interface Answer { status: number; limit: string | null; body: { error?: { message: string; type: string } } }

async function ask(d: TeamDaemon, key: string): Promise<Answer> {
  const res = await fetch(`${d.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
  });
  return { status: res.status, limit: res.headers.get('x-gateway-limit'), body: (await res.json()) as Answer['body'] };
}

/**
 * The requests a key's claims stand for (a lease's row for all admitted under it), their spend, and
 * the claims still open. A voided claim (admitted and expired at 0: a lease or a reservation whose
 * call failed as the store went away, released once it was back) stands for nothing.
 */
async function claims(keyId: string): Promise<{ n: number; usd: number; open: number }> {
  const { rows } = await db.query<{ n: string; usd: number | null; open: string }>(
    'SELECT coalesce(sum(requests), 0) AS n, sum(usd) AS usd, count(*) FILTER (WHERE NOT settled) AS open FROM limit_claims WHERE key_id = $1 AND at <> 0', [keyId]);
  return { n: Number(rows[0]!.n), usd: rows[0]!.usd ?? 0, open: Number(rows[0]!.open) };
}

describe('with PostgreSQL up', () => {
  it('an rpm limit holds across three daemons: 30 requests at once, 10 on each, and exactly 9 are served', async () => {
    const before = team.openai.requests.length;
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => ask(team.daemons[i % 3]!, team.keys.rpm.key)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(9);
    expect(answers.filter((a) => a.status === 429 && a.limit === 'rpm')).toHaveLength(21);
    expect(team.openai.requests.length - before).toBe(9);
  });

  it('a budget hit by concurrent streams spread over three daemons settles at or under it, each stream counted once', async () => {
    const clients = team.daemons.map((d) => new OpenAI({ baseURL: `${d.url}/v1`, apiKey: team.keys.budget.key, maxRetries: 0 }));
    const stream = async (c: OpenAI): Promise<boolean> => {
      try {
        const s = await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, stream: true });
        for await (const _chunk of s) { /* read to the end */ }
        return true;
      } catch (e) {
        if (e instanceof OpenAI.APIError && e.status === 429 && e.headers?.get('x-gateway-limit') === 'budget') return false;
        throw e;
      }
    };
    let served = 0;
    for (let wave = 0; wave < 40; wave++) {
      const ok = (await Promise.all(Array.from({ length: 24 }, (_, i) => stream(clients[i % 3]!)))).filter(Boolean).length;
      served += ok;
      if (ok === 0) break; // what is left is less than one stream's worst case
    }
    expect(served).toBeGreaterThan(0);
    // Settlements go in batches, and a lease closes its books after its last request: wait for them.
    const spent = await until('every claim of the budget key settled', async () => {
      const c = await claims(team.keys.budget.id);
      return c.open === 0 ? c : undefined;
    });
    console.log(`budget across three daemons: ${served} streams served, $${spent.usd.toFixed(6)} of $0.02`);
    expect(spent).toMatchObject({ n: served, open: 0 });
    expect(spent.usd).toBeCloseTo(served * ACTUAL, 10);
    expect(spent.usd).toBeLessThanOrEqual(0.02 + 1e-9);
  });
});

it('PostgreSQL stopped for a few seconds under load: each daemon serves on its share, refuses the fail-closed key, says it is degraded, and afterwards the shared counters hold every request served, once', async () => {
  const [a, b, c] = team.daemons as [TeamDaemon, TeamDaemon, TeamDaemon];
  // Load on one key throughout: before, across and after the outage.
  let loading = true;
  const served = new Map<TeamDaemon, number>(team.daemons.map((d) => [d, 0]));
  const other: Answer[] = [];
  const load = Promise.all(team.daemons.flatMap((d) => [0, 1].map(async () => {
    while (loading) {
      const r = await ask(d, team.keys.load.key);
      if (r.status === 200) served.set(d, served.get(d)! + 1);
      else other.push(r);
    }
  })));
  // What the monitor hears: the daemon's store health as events.
  const heard: StoreStatusView[] = [];
  const sub = subscribeEvents({ dir: a.dir, onEvent: () => {}, onStatus: () => {}, onStore: (s) => heard.push(s) });
  try {
    await until('load on every daemon', () => team.daemons.every((d) => served.get(d)! >= 3));
    await until('the monitor to hear the store connected', () => heard.some((s) => s.connected));

    postgres.stop();
    const downAt = Date.now();
    let onShares = 0;
    try {
      await until('every daemon degraded', async () => (await Promise.all(team.daemons.map((d) => d.store()))).every((s) => !s.connected));
      const status = await b.cli(['status']);
      expect(status.stdout).toMatch(/ {2}store {5}gw@127\.0\.0\.1:\d+\/team_limits, degraded: store unreachable since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n/);
      expect(status.stdout).not.toContain(postgres.password);
      await until('the monitor to hear it degraded', () => heard.some((s) => !s.connected));
      const link = (await c.cli(['dashboard', '--no-open'])).stdout.trim();
      const signIn = await fetch(link, { redirect: 'manual' });
      await signIn.text();
      const cookie = signIn.headers.getSetCookie()[0]!.split(';', 1)[0]!;
      const page = await (await fetch(`${c.url}/dashboard/keys`, { headers: { cookie } })).text();
      expect(page).toMatch(/<div class="degraded" role="alert"><div class="wrap"><strong>degraded: store unreachable since \S+Z<\/strong>/);

      // rpm 30 among three daemons alive: 10 a minute on each, its window starting empty.
      for (const d of team.daemons) {
        const answers: Answer[] = [];
        for (let i = 0; i < 12; i++) answers.push(await ask(d, team.keys.shareRpm.key));
        expect(answers.filter((x) => x.status === 200)).toHaveLength(10);
        expect(answers[11]).toMatchObject({ status: 429, limit: 'rpm' });
        expect(answers[11]!.body.error!.message).toContain('is limited to 10 requests a minute on this gateway daemon while the shared store is unreachable (its share of 30, with 3 daemons running)');
      }
      // A budget this daemon never asked about: a third of it on each.
      for (const d of team.daemons) {
        let ok = 0;
        let refusal: Answer | undefined;
        for (let i = 0; i < 40 && !refusal; i++) {
          const r = await ask(d, team.keys.shareBudget.key);
          if (r.status === 200) ok++;
          else refusal = r;
        }
        expect(refusal).toMatchObject({ status: 429, limit: 'budget' });
        expect(refusal!.body.error!.message).toContain('may spend $0.0100 on this gateway daemon while the shared store is unreachable (its share of its $0.03/day budget, with 3 daemons running)');
        expect(ok).toBeGreaterThan(0);
        expect(ok * ACTUAL).toBeLessThanOrEqual(0.01 + 1e-9);
        onShares += ok;
      }
      // Set to fail closed: refused in the door's own shape, saying why.
      for (const d of team.daemons) {
        const r = await ask(d, team.keys.closed.key);
        expect(r).toMatchObject({ status: 503, limit: 'store', body: { error: { type: 'server_error' } } });
        expect(r.body.error!.message).toMatch(/^proxy key "closed" is set to fail closed, and the gateway's shared store \(gw@127\.0\.0\.1:\d+\/team_limits\) is unreachable since \S+, so its limits cannot be checked/);
      }
      const beforeReturn = await claims(team.keys.shareBudget.id).catch(() => undefined);
      expect(beforeReturn).toBeUndefined(); // the store really is away
      // Each daemon tried to reach it again meanwhile, and kept serving.
      await until('every daemon to have probed in vain', async () => (await Promise.all(team.daemons.map((d) => d.store()))).every((s) => s.lastError?.includes('connection refused')));
      console.log(`outage: ${onShares} requests on budget shares; PostgreSQL stopped for ${Date.now() - downAt} ms`);
    } finally {
      postgres.start();
    }

    await until('every daemon connected and written back', async () => (await Promise.all(team.daemons.map((d) => d.store()))).every((s) => s.connected && s.unreconciled === 0));
    await until('the monitor to hear it connected again', () => heard.at(-1)?.connected === true);
    loading = false;
    await load;
    await until('every settlement written back', async () => (await Promise.all(team.daemons.map((d) => d.store()))).every((s) => s.unreconciled === 0) && (await claims(team.keys.load.id)).open === 0);

    // Every request served of the loaded key, across the outage, is in the shared counters once.
    const total = [...served.values()].reduce((x, y) => x + y, 0);
    expect(other).toEqual([]);
    const loaded = await claims(team.keys.load.id);
    expect(loaded).toMatchObject({ n: total, open: 0 });
    expect(loaded.usd).toBeCloseTo(total * ACTUAL, 10);
    // The counter the budget decides by (limit_keys.spent) says the same: nothing lost, nothing twice.
    const { rows: [counter] } = await db.query<{ spent: number }>('SELECT spent FROM limit_keys WHERE key_id = $1', [team.keys.load.id]);
    expect(counter!.spent).toBeCloseTo(total * ACTUAL, 10);
    expect(await claims(team.keys.shareRpm.id)).toMatchObject({ n: 30, open: 0 });
    const budget = await claims(team.keys.shareBudget.id);
    expect(budget).toMatchObject({ n: onShares, open: 0 });
    expect(budget.usd).toBeCloseTo(onShares * ACTUAL, 10);
    expect(await claims(team.keys.closed.id)).toMatchObject({ n: 0 });
    // And they decide again: the minute's 30 requests were counted, so the next is refused by the shared window.
    const next = await ask(a, team.keys.shareRpm.key);
    expect(next).toMatchObject({ status: 429, limit: 'rpm' });
    expect(next.body.error!.message).toContain('is limited to 30 requests a minute and made 30 in the last minute');
    console.log(`load across the outage: ${total} requests served by three daemons, each counted once`);
  } finally {
    loading = false;
    await load.catch(() => undefined);
    sub.close();
    await sub.done;
  }
}, 120_000);
