// Micro-benchmark of the unified relay's per-chunk work: one upstream network chunk (a Buffer
// holding one SSE event, as the bench mock sends them) → SseParser → stream translator → the text
// the daemon writes. Runs the mock's exact streams (bench/mock-answers.ts) through a built relay
// and prints µs per upstream chunk.
//   hot (default): streams back to back, so V8 has optimised everything: the CPU cost.
//   --paced: like the bench's stream rounds (c=1, chunks 5 ms apart, providers alternating stream
//     by stream, 3 warm-up streams then --rounds more, each chunk timed alone). The code barely
//     warms up and the caches go cold between chunks, which is what the bench's clients see.
// Several --dir builds (e.g. one of the last commit, see below) run in one process, interleaved
// stream by stream, so a busy machine affects them alike.
// Usage: npx tsc -p . && taskset -c 1 node bench/stream-translate.ts [--paced [--rounds 39]]
//          [--dir dist]… [--streams 20000] [--seconds 5]
// A build of the last commit to compare with:
//   mkdir -p /tmp/gw-base && git archive HEAD src tsconfig.json package.json | tar -x -C /tmp/gw-base \
//   && ln -sfn "$PWD/node_modules" /tmp/gw-base/node_modules && npx tsc -p /tmp/gw-base
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib.ts';
import { mockStreams } from './mock-answers.ts';

const argv = process.argv.slice(2);
const opt = (name: string, def: string): string => { const i = argv.indexOf(name); return i === -1 ? def : argv[i + 1]!; };
const DIRS = argv.flatMap((a, i) => (argv[i - 1] === '--dir' ? [resolve(ROOT, a)] : []));
if (DIRS.length === 0) DIRS.push(join(ROOT, 'dist'));
const PACED = argv.includes('--paced');
const ROUNDS = Number(opt('--rounds', '39'));
const MAX_STREAMS = Number(opt('--streams', '20000'));
const MAX_SECONDS = Number(opt('--seconds', '5'));
const EVENTS = 20;

// The mock's streams, with `%TS%` left in for a per-stream timestamp.
const mock = mockStreams(EVENTS);

/** A few copies of each stream with different timestamps, as fresh Buffers like the socket gives. */
const variants = (events: string[]): Buffer[][] =>
  Array.from({ length: 16 }, (_, k) => events.map((e) => Buffer.from(e.replace('%TS%', String(1_234_567_890_123_456n + BigInt(k) * 7_919n)))));
const STREAMS = { openai: variants(mock.openai), anthropic: variants(mock.anthropic), gemini: variants(mock.gemini) };

interface Relay { push(chunk: Buffer): string; end(): string; completed(): boolean }
interface Case { name: string; streams: Buffer[][]; relay: () => Relay }

/** The relay of each provider, built the way /v1/chat/completions builds it (no include_usage): through the hub for Anthropic and Gemini. */
async function casesOf(dir: string): Promise<Case[]> {
  const mod = (p: string) => import(pathToFileURL(join(dir, p)).href);
  const { createIrRelay } = await mod('daemon/relay/ir-relay.js');
  const openai = await openaiFastPath(mod);
  const { openaiChatClient } = await mod('providers/protocols/openai-chat/client/index.js');
  const { anthropicProvider } = await mod('providers/protocols/anthropic/provider/index.js');
  const { geminiProvider } = await mod('providers/protocols/gemini/provider/index.js');
  const rctx = (provider: string) => ({ model: `${provider}/x`, modelPrefix: `${provider}/`, created: 1767225600, fallbackId: 'chatcmpl-0123456789abcdef01234567', includeUsage: false });
  const target = (provider: string, model: string, protocol: string) => ({ provider, displayName: provider, model, protocol });
  const hub = (upstream: { createStreamReader(t: unknown): unknown }, provider: string, model: string, protocol: string) => () =>
    createIrRelay(upstream.createStreamReader(target(provider, model, protocol)), openaiChatClient.createStreamRenderer(rctx(provider)));
  const label = DIRS.length > 1 ? ` ${dir.replace(ROOT + '/', '')}` : '';
  return [
    { name: `openai${label}`, streams: STREAMS.openai, relay: openai },
    { name: `anthropic${label}`, streams: STREAMS.anthropic, relay: hub(anthropicProvider, 'anthropic', 'claude-opus-5', 'anthropic') },
    { name: `gemini${label}`, streams: STREAMS.gemini, relay: hub(geminiProvider, 'gemini', 'gemini-3.5-flash', 'gemini') },
  ];
}

/**
 * The Chat door's fast path for an OpenAI stream the client asked no usage of: the provider's
 * events less the usage chunk, and the usage tap reading the provider's own bytes. A build from
 * before the door runner (no doors/chat.js) has its own relay for this, measured instead.
 */
async function openaiFastPath(mod: (p: string) => Promise<any>): Promise<() => Relay> {
  try {
    const { CHAT_DOOR } = await mod('daemon/doors/chat.js');
    const { createNativeUsageTap } = await mod('daemon/relay/native-usage.js');
    return () => {
      const rewrite = CHAT_DOOR.rewriteStream({ stream: true });
      const tap = createNativeUsageTap('openai-chat', 'text/event-stream');
      let done = false;
      const seen = (text: string): string => { if (text.includes('data: [DONE]')) done = true; return text; };
      return { push: (b) => { const t = seen(rewrite.push(b)); tap.push(b); return t; }, end: () => seen(rewrite.end()), completed: () => done };
    };
  } catch {
    const unified = await mod('daemon/relay/stream-relay.js').catch(() => mod('daemon/stream-relay.js'));
    const { createOpenAIStreamFilter } = await mod('providers/openai/stream.js');
    return () => unified.createOpenAIRelay(createOpenAIStreamFilter(false));
  }
}

let sink = 0; // keeps the output alive so nothing is optimised away

/** Runs one stream through a fresh relay; the text must end with [DONE]. */
function check(c: Case): void {
  const r = c.relay();
  let out = '';
  for (const b of c.streams[0]!) { out += r.push(b); if (r.completed()) break; }
  if (!r.completed()) out += r.end();
  if (!out.endsWith('data: [DONE]\n\n')) throw new Error(`${c.name}: the stream did not end with [DONE]`);
}

/** µs per chunk, hot: back-to-back streams, one clock reading per stream (relay built outside it). */
function hot(c: Case, maxStreams: number, maxMs: number): { meanUs: number; p50Us: number; streams: number } {
  const perStream: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < maxStreams && performance.now() < deadline; i++) {
    const relay = c.relay();
    const chunks = c.streams[i % c.streams.length]!;
    const t0 = process.hrtime.bigint();
    for (const b of chunks) { sink += relay.push(b).length; if (relay.completed()) break; }
    if (!relay.completed()) sink += relay.end().length;
    perStream.push(Number(process.hrtime.bigint() - t0) / 1000 / EVENTS);
  }
  const mean = perStream.reduce((a, b) => a + b, 0) / perStream.length;
  return { meanUs: mean, p50Us: perStream.sort((a, b) => a - b)[perStream.length >> 1]!, streams: perStream.length };
}

/** µs per chunk, paced like the bench's stream rounds; every case interleaved stream by stream. */
async function paced(cases: Case[]): Promise<Map<string, number[]>> {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let i = 0; i < ROUNDS + 3; i++) {
    for (const c of cases) {
      const relay = c.relay();
      const chunks = c.streams[i % c.streams.length]!;
      for (let k = 0; k < chunks.length; k++) {
        await sleep(5);
        const t0 = process.hrtime.bigint();
        sink += relay.push(chunks[k]!).length;
        if (k === chunks.length - 1 && !relay.completed()) sink += relay.end().length; // Gemini: EOF
        if (i >= 3) times.get(c.name)!.push(Number(process.hrtime.bigint() - t0) / 1000);
        if (relay.completed()) break;
      }
    }
  }
  return times;
}

const cases = (await Promise.all(DIRS.map(casesOf))).flat();
for (const c of cases) check(c);
const width = Math.max(...cases.map((c) => c.name.length)) + 1;
if (PACED) {
  console.log(`paced: ${ROUNDS} streams per case after 3 warm-up, ${EVENTS} chunks 5 ms apart; µs per chunk`);
  for (const [name, t] of await paced(cases)) {
    const s = t.sort((a, b) => a - b);
    const q = (f: number) => s[Math.floor(f * (s.length - 1))]!.toFixed(1).padStart(6);
    console.log(`${name.padEnd(width)} p50 ${q(0.5)}   p25 ${q(0.25)}   p75 ${q(0.75)}   (${s.length} chunks)`);
  }
} else {
  for (const c of cases) hot(c, 2000, 1000); // warm-up
  console.log(`hot: up to ${MAX_STREAMS} streams or ${MAX_SECONDS} s per case, ${EVENTS} chunks each; µs per chunk`);
  for (const c of cases) {
    const r = hot(c, MAX_STREAMS, MAX_SECONDS * 1000);
    console.log(`${c.name.padEnd(width)} mean ${r.meanUs.toFixed(2).padStart(6)}   p50 stream ${r.p50Us.toFixed(2).padStart(6)}   (${r.streams} streams)`);
  }
}
if (sink === 0) console.log('');
