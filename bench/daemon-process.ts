// Runs the daemon as `gateway start` runs it (`runDaemon`: usage history in SQLite, the access log,
// last-used times, the dashboard mount), in its own process so the bench can pin it to a core.
// State lives in a temp dir; one proxy key is made with KeyStore; provider keys and origins come
// from the GATEWAY_* environment variables (every origin pointed at the bench mock); the log goes
// to daemon.log in the state dir, as in the background. With --bare it runs only the HTTP server
// (`startDaemon`: auth, pass-through, translation, events with no subscriber), to show what the
// usage history and the log cost on top. `--telemetry=off` turns metrics off (config.json
// `telemetry.metrics: false`), `--telemetry=on,<origin>` exports traces and the metrics (every
// second) over OTLP to that origin, for the telemetry rows; without either, the defaults (/metrics
// on, no OTLP). `--store=<postgres url>` runs it in team mode (#22) on that database; its two keys
// are then made through the admin API once it listens, as `gateway keys create` makes them, so they
// are kept wherever the build keeps a team's keys. Prints {"url","port","pid","adminToken","proxyKey","limitedKey"}.
// Usage: node bench/daemon-process.ts <build dir> <mock origin> [--bare] [--telemetry=off|on,<origin>[,<trace sample ratio>]] [--store=<url>]
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const buildDir = resolve(process.argv[2]!);
const origin = process.argv[3]!;
const bare = process.argv.includes('--bare');
const storeUrl = process.argv.find((a) => a.startsWith('--store='))?.slice('--store='.length);
if (bare && storeUrl !== undefined) throw new Error('--store runs the daemon as `gateway start` does; it does not go with --bare');
const telemetryArg = process.argv.find((a) => a.startsWith('--telemetry='))?.slice('--telemetry='.length);
const telemetry = telemetryArg === undefined ? undefined
  : telemetryArg === 'off' ? { metrics: false }
  : (() => {
    // on,<origin>[,<trace sample ratio>[,nometrics]]: `nometrics` exports traces only (no metrics push)
    const [, endpoint, ratio, what] = telemetryArg.split(',');
    return { otlp: { endpoint, metrics: what !== 'nometrics', metricsIntervalSeconds: 1, ...(ratio === undefined || ratio === '' ? {} : { sampleRatio: Number(ratio) }) } };
  })();
// A module of the build by its path; a build from before the daemon's folders (bench/ab.ts --dir
// an older commit) has it at its old path, given second.
const mod = (p: string, before?: string) => import(pathToFileURL(join(buildDir, p)).href).catch((e: unknown) => {
  if (before === undefined) throw e;
  return import(pathToFileURL(join(buildDir, before)).href);
});

const { KeyStore } = await mod('daemon/store/keys.js');
Object.assign(process.env, {
  GATEWAY_OPENAI_API_KEY: 'sk-bench-openai', GATEWAY_ANTHROPIC_API_KEY: 'sk-ant-bench', GATEWAY_GEMINI_API_KEY: 'bench-gemini-key',
  GATEWAY_OPENAI_BASE_URL: origin, GATEWAY_ANTHROPIC_BASE_URL: origin, GATEWAY_GEMINI_BASE_URL: origin,
});
const stateDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
// One provider added as a user would (`providers add compat --protocol openai-chat --base-url …/v1`),
// for the custom-provider rows: an OpenAI-compatible server, its key from the environment.
// Routing configured as a user would, so every row runs with it (nothing fails on them): an alias
// `failover` whose first target is always down (the mock answers 503 for a `down-` model) and whose
// second is OpenAI, for the row that prices one failed attempt; that provider gets no retries and
// the breaker never opens, so each request pays exactly one failed attempt.
// For the #24 rows, `nocache`: the mock again as an Anthropic-protocol provider, with the automatic
// cache breakpoints off (they are on for Anthropic by default), to compare the same turn both ways.
writeFileSync(join(stateDir, 'config.json'), JSON.stringify({
  providers: { compat: { protocol: 'openai-chat', baseUrl: `${origin}/v1`, models: ['gpt-5.4'] }, nocache: { protocol: 'anthropic', baseUrl: origin } },
  aliases: { failover: ['compat/down-5.4', 'openai/gpt-5.4'] },
  routing: { providers: { compat: { retries: 0 } }, breaker: { failures: 1_000_000_000 } },
  cache: { providers: { nocache: { breakpoints: false } } },
  ...(telemetry ? { telemetry } : {}),
}), { mode: 0o600 });
process.env.GATEWAY_COMPAT_API_KEY = 'sk-bench-compat';
process.env.GATEWAY_NOCACHE_API_KEY = 'sk-ant-bench';
// A key with a budget and rate limits no row reaches, for the rows that price checking them
// (reserve at admission, settle at the end); a build from before limits ignores them.
const LIMITS = { budget: '1000000/day', rpm: 100_000_000, tpm: 1_000_000_000_000, concurrency: 100_000 };
let key: string | undefined;
let limitedKey: string | undefined;
if (storeUrl === undefined) {
  ({ key } = new KeyStore(stateDir).create({ name: 'bench' }));
  ({ key: limitedKey } = new KeyStore(stateDir).create({
    name: 'bench-limited', limits: { budget: { usd: 1_000_000, period: 'day' }, rpm: LIMITS.rpm, tpm: LIMITS.tpm, concurrency: LIMITS.concurrency },
  }));
}
process.on('exit', () => rmSync(stateDir, { recursive: true, force: true }));

let url: string;
let adminToken: string;
if (bare) {
  const { startDaemon } = await mod('daemon/server.js');
  const { staticSecrets } = await mod('daemon/store/secrets.js');
  const { originsFromEnv } = await mod('daemon/relay/upstream.js', 'daemon/upstream.js');
  const daemon = await startDaemon({ port: 0, stateDir, secrets: staticSecrets({ openai: 'sk-bench-openai', anthropic: 'sk-ant-bench', gemini: 'bench-gemini-key' }), origins: originsFromEnv(process.env) });
  ({ url, adminToken } = daemon);
  const stop = () => { void daemon.close(500).finally(() => process.exit(0)); };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  const { runDaemon } = await mod('daemon/main.js');
  const { batchedLog } = await mod('daemon/observe/log-writer.js', 'daemon/log-writer.js');
  const logFd = openSync(join(stateDir, 'daemon.log'), 'a', 0o600);
  // runDaemon drains and exits on SIGTERM/SIGINT itself.
  url = (await runDaemon({ host: '127.0.0.1', port: 0, stateDir, log: batchedLog((text: string) => writeSync(logFd, text)).log, ...(storeUrl ? { storeUrl } : {}) })).url;
  adminToken = readFileSync(join(stateDir, 'admin-token'), 'utf8').trim();
  if (storeUrl !== undefined) {
    key = await createKey(url, adminToken, { name: 'bench' });
    limitedKey = await createKey(url, adminToken, { name: 'bench-limited', ...LIMITS });
  }
}

/** A proxy key made by `POST /admin/keys` (the local admin token, from this machine). */
async function createKey(base: string, token: string, body: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${base}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`POST /admin/keys answered ${r.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { key: string }).key;
}
process.stdout.write(JSON.stringify({ url, port: Number(new URL(url).port), pid: process.pid, adminToken, proxyKey: key, limitedKey }) + '\n');
