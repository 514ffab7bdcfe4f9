// Scratch: a team daemon's and a laptop daemon's CPU while idle after load (periodic background work).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, cpuUs, log, runWrk, sleep, startServer, stopAll } from './lib.ts';
import { startPostgres } from './postgres.ts';

const pg = await startPostgres(1);
const mock = await startServer<{ port: number }>('mock', 1, [process.execPath, join(BENCH_DIR, 'fast-mock.ts'), '0']);
const origin = `http://127.0.0.1:${mock.info.port}`;
const script = [process.execPath, join(BENCH_DIR, 'daemon-process.ts'), join(BENCH_DIR, '.build'), origin];
const bodyFile = join(BENCH_DIR, 'results', '.idle-body.json');
writeFileSync(bodyFile, JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }], max_tokens: 64 }));
for (const [name, extra] of [['sqlite', []], ['pg', [`--store=${pg.url}`]]] as const) {
  const d = await startServer<{ port: number; pid: number; limitedKey: string }>(name, 0, [...script, ...extra]);
  const step = { port: d.info.port, path: '/openai/v1/chat/completions', bodyFile, headers: { authorization: `Bearer ${d.info.limitedKey}` } };
  for (const c of [1, 16]) {
    const a = cpuUs(d.info.pid);
    const r = await runWrk({ ...step, connections: c, seconds: 3 }, 1);
    const b = cpuUs(d.info.pid);
    log(`${name} c=${c}: ${Math.round(r.rps)} req/s, ${((b - a) / (r.rps * 3)).toFixed(1)} µs/req`);
  }
  await sleep(300);
  const i0 = cpuUs(d.info.pid);
  await sleep(5000);
  log(`${name} idle after load: ${((cpuUs(d.info.pid) - i0) / 5000).toFixed(2)} ms CPU per s`);
}
await stopAll();
pg.destroy();
