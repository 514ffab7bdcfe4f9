// A budget lives in the usage database, not in the daemon's memory: a real daemon (`gateway
// start`) under load is killed with SIGKILL and started again, and the key's spend is what its
// answered requests cost, counted once, and never passes the budget.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KeyStore } from '../../src/daemon/store/keys.js';
import { migrate } from '../../src/daemon/observe/usage/schema.js';
import { openDatabase } from '../../src/daemon/store/sqlite.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

const PRICE = { input: 10, output: 100 }; // USD per million tokens
const ACTUAL = (12 * PRICE.input + 5 * PRICE.output) / 1e6; // the mock's 12 in, 5 out
const BUDGET = 0.06;

let gw: GatewayProcess;
beforeAll(async () => { gw = await startGatewayProcess({}, { usage: { prices: { 'openai/gpt-lim': PRICE } } }); });
afterAll(async () => { await gw?.close(); });

async function load(url: string, key: string, workers: number, until: () => boolean): Promise<{ ok: number[]; budget: number }> {
  const out = { ok: [] as number[], budget: 0 };
  await Promise.all(Array.from({ length: workers }, async () => {
    while (!until()) {
      try {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
        });
        await res.text();
        if (res.status === 200) out.ok.push(Date.now());
        else if (res.headers.get('x-gateway-limit') === 'budget') { out.budget++; return; }
      } catch {
        return; // the daemon is gone
      }
    }
  }));
  return out;
}

it('SIGKILL mid-load, then a restart: no overspend, no request counted twice', async () => {
  const { key, record } = new KeyStore(gw.dir).create({ name: 'crash', limits: { budget: { usd: BUDGET, period: 'day' } } });
  // The daemon watches keys.json: wait until the key works.
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await r.text();
    if (r.status === 200) break;
    await new Promise((res) => setTimeout(res, 25));
  }

  let killed = false;
  const first = load(gw.url, key, 8, () => killed);
  while (gw.mocks.openai.requests.length < 25) await new Promise((r) => setTimeout(r, 5));
  const killedAt = Date.now();
  process.kill(gw.pid, 'SIGKILL');
  killed = true;
  const before = await first;
  while (gw.alive()) await new Promise((r) => setTimeout(r, 20));

  const restartedAt = Date.now();
  const again = await gw.cli(['start', '--port', '0']);
  const url = /gateway running at (http:\/\/127\.0\.0\.1:\d+)/.exec(again.stdout)?.[1];
  expect(url, again.stdout + again.stderr).toBeTruthy();
  const after = await load(url!, key, 8, () => false);
  expect(after.budget).toBeGreaterThan(0); // it ran until the budget refused
  // The key's spend as the running daemon states it in a refusal.
  const refusal = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-lim', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 }),
  });
  const message = ((await refusal.json()) as { error: { message: string } }).error.message;
  await gw.cli(['stop']); // writes what is still queued

  const db = await openDatabase(join(gw.dir, 'usage.db'), { setup: migrate });
  const count = (from: number, to: number) => db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(usd), 0) AS usd FROM limit_spend WHERE key_id = ? AND at >= ? AND at < ?').get(record.id, from, to) as { n: number; usd: number };
  const firstRun = count(0, restartedAt);
  const secondRun = count(restartedAt, Number.MAX_SAFE_INTEGER);
  db.close();
  const total = firstRun.usd + secondRun.usd;
  console.log(`crash test: ${before.ok.length} answered before the kill (${firstRun.n} settled), ${after.ok.length} after the restart (${secondRun.n} settled); $${total.toFixed(6)} of $${BUDGET}`);
  // Before the kill: every request answered more than the ledger's write delay before it is
  // settled; a kill loses at most that last moment's settlements, and those still in flight.
  expect(firstRun.n).toBeGreaterThanOrEqual(before.ok.filter((t) => t < killedAt - 250).length);
  expect(firstRun.n).toBeLessThanOrEqual(before.ok.length + 8);
  // After the restart, with a clean stop: each answered request exactly once.
  expect(secondRun.n).toBe(after.ok.length);
  expect(total).toBeCloseTo((firstRun.n + secondRun.n) * ACTUAL, 10);
  expect(total).toBeLessThanOrEqual(BUDGET);
  // What the daemon charged the key was the ledger: the usage history's rows of the same requests were not added again.
  expect(message).toContain(`has used $${total.toFixed(4)} of its $0.06/day budget`);
});
