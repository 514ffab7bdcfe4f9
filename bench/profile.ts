// `node bench/profile.ts [--seconds S] [--c N] [--only id,id]`: where the daemon's CPU goes on the bench workload.
// For each scenario a fresh daemon (pinned like in the bench) is warmed up, then V8's CPU profiler
// runs while wrk drives it at concurrency N (64 for the streaming scenarios); the profiles are summarized (self time by file and
// function, inclusive time of the daemon's own functions) into bench/results/profile-<time>.md,
// with the .cpuprofile files beside it (open them in Chrome DevTools or speedscope). A team-mode
// scenario (#22) runs the daemon with --store on a throwaway PostgreSQL (pinned to core 1) that
// tracks its statements, nested ones too (pg_stat_statements), and adds where the server's time went.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDaemon } from './build.ts';
import { BENCH_DIR, cpuUs, log, pinSelf, ROOT, runWrk, sleep, startServer, stopAll, stopChild } from './lib.ts';
import { summarize } from './profile-summary.ts';
import { startPostgres, type BenchPostgres } from './postgres.ts';

const argv = process.argv.slice(2);
const num = (name: string, def: number) => { const i = argv.indexOf(name); return i === -1 ? def : Number(argv[i + 1]); };
const SECONDS = num('--seconds', 8);
const C = num('--c', 16);
const ONLY = argv.includes('--only') ? argv[argv.indexOf('--only') + 1]!.split(',') : null;

const body = (model: string, stream = false) => JSON.stringify({ model, messages: [{ role: 'system', content: 'You are a terse assistant.' }, { role: 'user', content: 'Say hello in five words.' }], max_tokens: 64, ...(stream ? { stream: true } : {}) });
const responses = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, instructions: 'You are a terse assistant.', input: 'Say hello in five words.', max_output_tokens: 64, ...extra });
const scenarios: Array<{ id: string; path: string; body: string; subscriber?: boolean; floor?: boolean; limited?: boolean; telemetry?: boolean; sample?: number; noPush?: boolean; store?: boolean }> = [
  { id: 'floor', path: '/v1/chat/completions', body: body('gpt-5.4'), floor: true },
  { id: 'native-openai', path: '/openai/v1/chat/completions', body: body('gpt-5.4') },
  { id: 'native-openai-subscriber', path: '/openai/v1/chat/completions', body: body('gpt-5.4'), subscriber: true },
  { id: 'unified-openai', path: '/v1/chat/completions', body: body('gpt-5.4') },
  { id: 'unified-anthropic', path: '/v1/chat/completions', body: body('claude-opus-5') },
  { id: 'unified-gemini', path: '/v1/chat/completions', body: body('gemini-3.5-flash') },
  // Streams (20 events 5 ms apart): the per-chunk work of each path.
  { id: 'stream-native-openai', path: '/openai/v1/chat/completions', body: body('gpt-5.4', true) },
  { id: 'stream-unified-openai', path: '/v1/chat/completions', body: body('gpt-5.4', true) },
  { id: 'stream-unified-anthropic', path: '/v1/chat/completions', body: body('claude-opus-5', true) },
  { id: 'stream-unified-gemini', path: '/v1/chat/completions', body: body('gemini-3.5-flash', true) },
  // The other doors, translated: the Messages door to OpenAI, the Responses door to Anthropic (its
  // answers kept in the response store, as by default, and not).
  { id: 'messages-openai', path: '/v1/messages', body: JSON.stringify({ model: 'openai/gpt-5.4', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
  { id: 'responses-anthropic', path: '/v1/responses', body: responses('anthropic/claude-opus-5') },
  // The doors' fast paths: Messages to Anthropic, the Gemini door to Gemini.
  { id: 'messages-anthropic', path: '/v1/messages', body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
  // The same with a key that has a budget and rate limits it never reaches (#21).
  { id: 'messages-anthropic-limited', limited: true, path: '/v1/messages', body: JSON.stringify({ model: 'claude-opus-5', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
  // Telemetry on: OTLP traces and metrics to a sink (#23).
  { id: 'native-openai-telemetry', telemetry: true, path: '/openai/v1/chat/completions', body: body('gpt-5.4') },
  // The same with no request sampled: what OTLP costs besides the spans.
  { id: 'native-openai-telemetry-unsampled', telemetry: true, sample: 0, path: '/openai/v1/chat/completions', body: body('gpt-5.4') },
  // And without the metrics push: what the push costs.
  // The translated door (Messages to OpenAI) traced: its two spans and the answer's facts.
  { id: 'messages-openai-telemetry', telemetry: true, path: '/v1/messages', body: JSON.stringify({ model: 'openai/gpt-5.4', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
  // The same with a tenth of the requests traced (otlp.sampleRatio 0.1), the bench's sampled row.
  { id: 'messages-openai-telemetry-sampled', telemetry: true, sample: 0.1, path: '/v1/messages', body: JSON.stringify({ model: 'openai/gpt-5.4', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
  { id: 'native-openai-telemetry-unsampled-nopush', telemetry: true, sample: 0, noPush: true, path: '/openai/v1/chat/completions', body: body('gpt-5.4') },
  { id: 'gemini-gemini', path: '/v1beta/models/gemini-3.5-flash:generateContent', body: JSON.stringify({ systemInstruction: { parts: [{ text: 'You are a terse assistant.' }] }, contents: [{ role: 'user', parts: [{ text: 'Say hello in five words.' }] }], generationConfig: { maxOutputTokens: 64 } }) },
  { id: 'native-gemini', path: '/gemini/v1beta/models/gemini-3.5-flash:generateContent', body: JSON.stringify({ systemInstruction: { parts: [{ text: 'You are a terse assistant.' }] }, contents: [{ role: 'user', parts: [{ text: 'Say hello in five words.' }] }], generationConfig: { maxOutputTokens: 64 } }) },
  { id: 'responses-anthropic-unstored', path: '/v1/responses', body: responses('anthropic/claude-opus-5', { store: false }) },
  // Team mode (#22): native and the Messages door translated, on a PostgreSQL store, with the key that has limits.
  { id: 'native-openai-limited', limited: true, path: '/openai/v1/chat/completions', body: body('gpt-5.4') },
  { id: 'team-pg-native-openai', store: true, limited: true, path: '/openai/v1/chat/completions', body: body('gpt-5.4') },
  { id: 'messages-openai-limited', limited: true, path: '/v1/messages', body: JSON.stringify({ model: 'openai/gpt-5.4', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
  { id: 'team-pg-messages-openai', store: true, limited: true, path: '/v1/messages', body: JSON.stringify({ model: 'openai/gpt-5.4', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }) },
];

/** The server's statements by total time while profiled (pg_stat_statements, nested statements of functions included). */
async function pgStatements(url: string): Promise<string> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ query: string; calls: string; total: number; mean: number; rows: string }>(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls, total_exec_time AS total, mean_exec_time AS mean, rows
         FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 12`);
    const out = ['PostgreSQL, statements by total time (nested ones inside limit_reserve/limit_settle included, so their time also counts in the call\'s):', '', '| total ms | calls | mean µs | rows | statement |', '|---:|---:|---:|---:|---|'];
    for (const r of rows) out.push(`| ${r.total.toFixed(0)} | ${r.calls} | ${(r.mean * 1000).toFixed(0)} | ${r.rows} | \`${r.query.slice(0, 160).replace(/\|/g, '\\|')}\` |`);
    const { rows: [n] } = await c.query<{ claims: string }>('SELECT count(*) AS claims FROM limit_claims');
    out.push('', `limit_claims held ${n!.claims} rows at the end.`);
    return out.join('\n');
  } finally { await c.end(); }
}

async function main(): Promise<void> {
  pinSelf(1);
  const build = buildDaemon(argv.includes('--no-build'));
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d+Z$/, 'Z');
  const dir = join(BENCH_DIR, 'results', `profile-${stamp}`);
  mkdirSync(dir, { recursive: true });
  const mock = await startServer<{ port: number }>('mock', 1, [process.execPath, join(BENCH_DIR, 'fast-mock.ts'), '0', '20', '5']);
  const origin = `http://127.0.0.1:${mock.info.port}`;
  const out: string[] = [`# Daemon CPU profiles · ${new Date().toISOString()}`, '', `wrk -c${C} for ${SECONDS} s per scenario after a 3 s warm-up; daemon from ${build.dir.replace(ROOT + '/', '')} (${build.note}), pinned to core 0; V8 sampling every 200 µs.`, ''];
  for (const s of scenarios.filter((x) => !ONLY || ONLY.includes(x.id))) {
    const file = join(dir, `${s.id}.cpuprofile`);
    const hook = ['--import', join(BENCH_DIR, 'profile-hook.ts')];
    const sink = s.telemetry ? await startServer<{ port: number }>('otlp sink', 1, [process.execPath, join(BENCH_DIR, 'otlp-sink.ts')]) : undefined;
    const pgServer: BenchPostgres | undefined = s.store ? await startPostgres(1, ['-c shared_preload_libraries=pg_stat_statements', '-c pg_stat_statements.track=all']) : undefined;
    const script = s.floor ? [join(BENCH_DIR, 'floor.ts'), origin] : [join(BENCH_DIR, 'daemon-process.ts'), build.dir, origin, ...(sink ? [`--telemetry=on,http://127.0.0.1:${sink.info.port},${s.sample ?? ''}${s.noPush ? ',nometrics' : ''}`] : []), ...(pgServer ? [`--store=${pgServer.url}`] : [])];
    const d = await startServer<{ port: number; pid: number; proxyKey?: string; limitedKey?: string; adminToken?: string }>(s.id, 0, [process.execPath, ...hook, ...script], { env: { BENCH_PROFILE: file } });
    const bf = join(dir, `${s.id}.body.json`);
    writeFileSync(bf, s.body);
    const key = s.limited ? d.info.limitedKey : d.info.proxyKey;
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    let sub: AbortController | undefined;
    if (s.subscriber) {
      sub = new AbortController();
      const r = await fetch(`http://127.0.0.1:${d.info.port}/admin/events`, { headers: { authorization: `Bearer ${d.info.adminToken}` }, signal: sub.signal });
      void (async () => { try { for await (const _ of r.body!) { /* consume */ } } catch { /* aborted */ } })();
    }
    const conns = s.id.startsWith('stream-') ? 64 : C;
    await runWrk({ port: d.info.port, path: s.path, bodyFile: bf, headers, connections: conns, seconds: 3 }, 1);
    if (pgServer) await resetStatements(pgServer.url);
    process.kill(d.info.pid, 'SIGUSR2');
    await sleep(200);
    const cpu0 = cpuUs(d.info.pid);
    const r = await runWrk({ port: d.info.port, path: s.path, bodyFile: bf, headers, connections: conns, seconds: SECONDS }, 1);
    const cpuPerReq = (cpuUs(d.info.pid) - cpu0) / r.requests;
    process.kill(d.info.pid, 'SIGUSR2');
    for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(100);
    await sleep(300);
    sub?.abort();
    await stopChild(d.child, 10_000);
    log(`${s.id}: ${Math.round(r.rps)} req/s, ${cpuPerReq.toFixed(0)} µs CPU/request (profiled)`);
    out.push(`## ${s.id}`, '', `${Math.round(r.rps)} req/s at c=${conns}, ${cpuPerReq.toFixed(0)} µs of daemon CPU per request, while profiled${r.errors ? `; ${r.errors} errors` : ''}.`, '');
    try { out.push(summarize(file, 25), ''); } catch (e) { out.push(`(no profile: ${(e as Error).message})`, ''); }
    if (pgServer) {
      try { out.push(await pgStatements(pgServer.url), ''); } catch (e) { out.push(`(no statement statistics: ${(e as Error).message})`, ''); }
      pgServer.destroy();
    }
  }
  await stopAll();
  const md = out.join('\n');
  writeFileSync(join(dir, 'summary.md'), md);
  process.stdout.write(md + '\n');
  log(`written to ${join(dir, 'summary.md').replace(ROOT + '/', '')}`);
}

/** Starts the statement statistics afresh (the extension is made on first use), so they cover the profiled run only. */
async function resetStatements(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await c.query('SELECT pg_stat_statements_reset()');
  } finally { await c.end(); }
}

main().catch(async (e) => { log(`failed: ${(e as Error).stack ?? e}`); await stopAll(); process.exit(1); });
