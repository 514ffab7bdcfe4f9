// `node bench/ab.ts [--reps N] [--seconds S] [--path /openai/v1/chat/completions] [--model gpt-5.4] [--body JSON] [--bare] [--telemetry] [--limited] [--dir BUILD]…`:
// a quick check while working on the hot path — the floor and the daemon, pinned as in the bench,
// alternating at c=1, 16 and 64, printing req/s, server CPU per request and daemon/floor ratios.
// With `--dir` (repeatable) the daemons of those builds (a `dist/` of another commit) run in turn
// beside the floor, so two builds are compared in the same run. With `--telemetry` the build runs
// three times: telemetry off, the default (/metrics on), and on with /metrics scraped every second
// and OTLP export to a sink (#23); `--sample R` traces that share of requests.
// With `--limited` each daemon also runs with its key that has a budget and rate limits no request
// reaches (#21). With `--store` each build runs twice, on SQLite and in team mode (#22) on its own
// database of a throwaway PostgreSQL (core 1), both with the limited key only.
// `--conc 16,64` picks the concurrencies. Not the benchmark of record (`npm run bench` is): no interference checks, no report file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDaemon } from './build.ts';
import { BENCH_DIR, cpuUs, log, median, pinSelf, runWrk, startServer, stopAll, type WrkStep } from './lib.ts';
import { startPostgres } from './postgres.ts';

const argv = process.argv.slice(2);
const arg = (name: string, def: string) => { const i = argv.indexOf(name); return i === -1 ? def : argv[i + 1]!; };
const REPS = Number(arg('--reps', '3'));
const SECONDS = Number(arg('--seconds', '2'));
const PATH = arg('--path', '/openai/v1/chat/completions');
const MODEL = arg('--model', 'gpt-5.4');

async function main(): Promise<void> {
  pinSelf(1);
  const dirs = argv.flatMap((a, i) => (argv[i - 1] === '--dir' ? [a] : []));
  if (dirs.length === 0) dirs.push(buildDaemon(argv.includes('--no-build')).dir);
  const mock = await startServer<{ port: number }>('mock', 1, [process.execPath, join(BENCH_DIR, 'fast-mock.ts'), '0']);
  const origin = `http://127.0.0.1:${mock.info.port}`;
  const floor = await startServer<{ port: number; pid: number }>('floor', 0, [process.execPath, join(BENCH_DIR, 'floor.ts'), origin]);
  const daemons = [];
  const telemetry = argv.includes('--telemetry');
  const sink = telemetry ? await startServer<{ port: number }>('otlp sink', 1, [process.execPath, join(BENCH_DIR, 'otlp-sink.ts')]) : undefined;
  // Off, the default (/metrics on and not scraped, no OTLP), and on (scraped, OTLP traces and metrics).
  const sampled = argv.includes('--sample') ? `,${arg('--sample', '1')}` : '';
  const store = argv.includes('--store') ? await startPostgres(1) : undefined;
  const databases = store ? await (async () => {
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: store.url });
    await c.connect();
    const urls: string[] = [];
    for (let i = 0; i < dirs.length; i++) { await c.query(`CREATE DATABASE ab${i}`); urls.push(store.url.replace(/\/postgres$/, `/ab${i}`)); }
    await c.end();
    return urls;
  })() : [];
  const variants = store ? [['SQLite', undefined], ['PostgreSQL', '--store']] : telemetry ? [['telemetry off', '--telemetry=off'], ['telemetry default', undefined], ['telemetry on', `--telemetry=on,http://127.0.0.1:${sink!.info.port}${sampled}`]] : [[undefined, undefined]];
  // --nopush: also the same with traces only (no OTLP metrics push), to tell the two costs apart.
  if (telemetry && argv.includes('--nopush')) variants.push(['telemetry on, no metrics push', `--telemetry=on,http://127.0.0.1:${sink!.info.port},${sampled.slice(1)},nometrics`]);
  for (const [i, dir] of dirs.entries()) {
    for (const [label, flag] of variants) {
      const arg = flag === '--store' ? `--store=${databases[i]}` : flag;
      const d = await startServer<{ port: number; pid: number; proxyKey: string; limitedKey?: string }>(`daemon${i}${label ? ` ${label}` : ''}`, 0, [process.execPath, join(BENCH_DIR, 'daemon-process.ts'), dir, origin, ...(argv.includes('--bare') ? ['--bare'] : []), ...(arg ? [arg] : [])]);
      const name = [dirs.length === 1 ? 'daemon' : dir, label].filter(Boolean).join(', ');
      if (store) { daemons.push({ name, port: d.info.port, pid: d.info.pid, path: PATH, headers: { authorization: `Bearer ${d.info.limitedKey}` } }); continue; }
      daemons.push({ name, port: d.info.port, pid: d.info.pid, path: PATH, headers: { authorization: `Bearer ${d.info.proxyKey}` } });
      if (argv.includes('--limited') && d.info.limitedKey) daemons.push({ name: `${name} (limited key)`, port: d.info.port, pid: d.info.pid, path: PATH, headers: { authorization: `Bearer ${d.info.limitedKey}` } });
    }
  }
  // The "on" daemon is scraped every second, as a Prometheus would.
  const on = daemons.find((d) => d.name.endsWith('telemetry on'));
  const scraper = on ? setInterval(() => { void fetch(`http://127.0.0.1:${on.port}/metrics`).then((r) => r.text(), () => {}); }, 1000) : undefined;
  const bodyFile = join(BENCH_DIR, 'results', '.ab-body.json');
  // --body: the daemon's request body as given (another door's shape); the model still comes from --model.
  const body = argv.includes('--body') ? { ...JSON.parse(arg('--body', '{}')), model: MODEL } : { model: MODEL, messages: [{ role: 'system', content: 'You are a terse assistant.' }, { role: 'user', content: 'Say hello in five words.' }], max_tokens: 64 };
  writeFileSync(bodyFile, JSON.stringify(body));
  const targets: Array<Pick<WrkStep, 'port' | 'path' | 'headers'> & { name: string; pid: number }> = [
    { name: 'floor', port: floor.info.port, pid: floor.info.pid, path: MODEL.startsWith('claude') ? '/v1/messages' : '/v1/chat/completions', headers: {} },
    ...daemons,
  ];
  for (const t of targets) await runWrk({ ...t, bodyFile, connections: 16, seconds: 2 }, 1);
  for (const c of argv.includes('--conc') ? arg('--conc', '16').split(',').map(Number) : [1, 16, 64]) {
    const res: Record<string, { rps: number[]; cpu: number[] }> = Object.fromEntries(targets.map((t) => [t.name, { rps: [], cpu: [] }]));
    for (let rep = 0; rep < REPS; rep++) {
      for (const t of targets) {
        const cpu0 = cpuUs(t.pid);
        const r = await runWrk({ ...t, bodyFile, connections: c, seconds: SECONDS }, 1);
        if (r.errors) log(`${t.name}: ${r.errors} errors`);
        res[t.name]!.rps.push(r.rps);
        res[t.name]!.cpu.push((cpuUs(t.pid) - cpu0) / r.requests);
      }
    }
    const f = res.floor!;
    for (const t of daemons) {
      const d = res[t.name]!;
      const ratios = d.rps.map((x, i) => x / f.rps[i]!);
      log(`c=${c}: floor ${median(f.rps).toFixed(0)} req/s ${median(f.cpu).toFixed(0)} µs/req · ${t.name} ${median(d.rps).toFixed(0)} req/s ${median(d.cpu).toFixed(0)} µs/req · ratio ${(median(ratios) * 100).toFixed(0)}% (${ratios.map((x) => (x * 100).toFixed(0)).join(' ')})`);
    }
    // Team mode: each build's PostgreSQL daemon beside its SQLite one, paired per repetition.
    for (let i = 0; store && i + 1 < daemons.length; i += 2) {
      const [lite, team] = [res[daemons[i]!.name]!, res[daemons[i + 1]!.name]!];
      const ratios = team.rps.map((x, r) => x / lite.rps[r]!);
      log(`c=${c}: ${daemons[i + 1]!.name} / SQLite ${(median(ratios) * 100).toFixed(0)}% (${ratios.map((x) => (x * 100).toFixed(0)).join(' ')}), CPU/req ${median(lite.cpu).toFixed(0)} → ${median(team.cpu).toFixed(0)} µs`);
    }
  }
  if (scraper) clearInterval(scraper);
  await stopAll();
  store?.destroy();
}

main().catch(async (e) => { log(`failed: ${(e as Error).stack ?? e}`); await stopAll(); process.exit(1); });
