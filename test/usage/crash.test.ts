// Crash safety: a real daemon under load is killed with SIGKILL. Every request whose response the
// client had received more than a second before the kill must be in usage.db, the file must pass
// SQLite's integrity check, the rollups must match the raw rows, and the daemon must start again.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UsageStore } from '../../src/daemon/observe/usage/store.js';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js';

let gw: GatewayProcess;
beforeAll(async () => { gw = await startGatewayProcess(); });
afterAll(async () => { await gw?.close(); });

it('SIGKILL mid-load loses at most the last second, and corrupts nothing', async () => {
  const key = (await gw.cli(['keys', 'create', '--name', 'load'])).stdout.trim();
  const completed: Array<{ model: string; at: number }> = [];
  let stop = false;
  const worker = async (w: number) => {
    for (let n = 0; !stop; n++) {
      const model = `load-${w}-${n}`; // unique per request: Gemini carries the model in the path
      try {
        const res = await fetch(`${gw.url}/gemini/v1beta/models/${model}:generateContent`, {
          method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }),
        });
        await res.text();
        if (res.status === 200) completed.push({ model, at: Date.now() });
      } catch {
        return; // the daemon is gone
      }
    }
  };
  const workers = Array.from({ length: 24 }, (_, w) => worker(w));
  // At least 3 s of load and 300 finished requests (a busy CI machine is slower), then the kill.
  const t0 = Date.now();
  while ((Date.now() - t0 < 3000 || completed.length < 300) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 50));
  const killedAt = Date.now();
  process.kill(gw.pid, 'SIGKILL');
  stop = true;
  await Promise.all(workers);
  while (gw.alive()) await new Promise((r) => setTimeout(r, 20));

  const store = await UsageStore.open(join(gw.dir, 'usage.db'));
  expect(store.db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
  const recorded = new Set((store.db.prepare('SELECT model FROM requests').all() as Array<{ model: string }>).map((r) => r.model));
  const mustHave = completed.filter((c) => c.at < killedAt - 1000);
  const missing = mustHave.filter((c) => !recorded.has(c.model));
  const lastSecond = completed.length - mustHave.length;
  const lost = completed.filter((c) => !recorded.has(c.model)).length;
  console.log(`crash test: ${completed.length} requests completed in ${((killedAt - t0) / 1000).toFixed(1)} s, ${recorded.size} recorded; ${lastSecond} in the last second, ${lost} of them lost`);
  expect(completed.length).toBeGreaterThanOrEqual(300);
  expect(missing).toEqual([]);
  const { rows, rolled } = store.db.prepare('SELECT (SELECT COUNT(*) FROM requests) AS rows, (SELECT SUM(requests) FROM hourly) AS rolled').get() as { rows: number; rolled: number };
  expect(rolled).toBe(rows); // rows and their rollups commit together
  store.close();

  // The killed daemon left daemon.json behind; a new start sees the pid is gone and recovers.
  const again = await gw.cli(['start', '--port', '0']);
  expect(again.stdout).toMatch(/gateway running at/);
  const summary = JSON.parse((await gw.cli(['usage', '--since', '1d', '--json'])).stdout) as { totals: { requests: number } };
  expect(summary.totals.requests).toBe(rows);
  await gw.cli(['stop']);
}, 60_000);
