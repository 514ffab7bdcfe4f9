// `node bench/telemetry-micro.ts <build dir> [--requests N] [--only variant,…] [--kind native|messages|chat-fast] [--idle S]`: what telemetry costs a
// request's own lifecycle, without HTTP around it: the daemon's RequestTracker driven as the
// native /openai relay and the Messages → OpenAI door drive it (start, provider call, the answer
// written, the end), with the build's telemetry started as the daemon starts it (the metrics
// recorder on the bus, and with OTLP its tracer exporting to a loopback sink). Prints CPU µs per
// request for each variant (off, default, on, on at 10%): the request thread's, and in brackets
// the whole process's (with the span worker's thread), the median of 5 runs: a steadier figure
// than the daemon under wrk on a shared machine, to compare two builds (`--dir`-style) while
// working on telemetry. Not a bench of record (bench/run.ts --only telemetry is).
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const buildDir = resolve(argv[0] ?? join(import.meta.dirname, '.build'));
const N = argv.includes('--requests') ? Number(argv[argv.indexOf('--requests') + 1]) : 60_000;
const IDLE = argv.includes('--idle') ? Number(argv[argv.indexOf('--idle') + 1]) : 0;
const idle: string[] = [];
const ONLY = argv.includes('--only') ? argv[argv.indexOf('--only') + 1]!.split(',') : null;
const mod = (p: string) => import(pathToFileURL(join(buildDir, p)).href);

const { EventBus } = await mod('daemon/observe/events.js');
const { RequestTracker, Stats } = await mod('daemon/observe/tracker.js');
const { startTelemetry, TELEMETRY_DEFAULTS } = await mod('daemon/telemetry/index.js');

const sink = spawn(process.execPath, [join(import.meta.dirname, 'otlp-sink.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
const sinkPort = await new Promise<number>((ok) => sink.stdout!.once('data', (d: Buffer) => ok(JSON.parse(d.toString()).port)));

const CHAT_ANSWER = JSON.stringify({ id: 'chatcmpl-01XyZ', object: 'chat.completion', created: 1767225600, model: 'gpt-5.4-2026-03-05', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, nice to meet.', refusal: null }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 } });
const ANSWER = JSON.stringify({ id: 'msg_01XyZ', type: 'message', role: 'assistant', model: 'openai/gpt-5.4-2026-03-05', content: [{ type: 'text', text: 'Hello there, nice to meet.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 20, output_tokens: 12 } });
const REQUEST = Buffer.from(JSON.stringify({ model: 'openai/gpt-5.4', max_tokens: 64, system: 'You are a terse assistant.', messages: [{ role: 'user', content: 'Say hello in five words.' }] }));
const HEADERS = { host: '127.0.0.1:1', authorization: 'Bearer sk-proxy-x', 'content-type': 'application/json', 'content-length': '120' };

type Kind = 'native' | 'messages' | 'chat-fast';
async function variant(kind: Kind, telemetry: unknown): Promise<[number, number]> {
  const bus = new EventBus();
  // The usage recorder is on the bus in every daemon: a subscriber, so events are made in every variant.
  bus.subscribe(() => {});
  const stats = new Stats();
  const ctx = {
    settings: { aliases: {}, routing: undefined }, bus, stats, breaker: { onOpen: undefined },
    providerKeys: { values: () => ['sk-bench-openai-secret-value'] }, keys: {}, startSpan: undefined as unknown,
  };
  const t = await startTelemetry(ctx, { settings: telemetry, host: '127.0.0.1', adminToken: 'x', log: () => {} });
  const one = (i: number) => {
    const tracker = new RequestTracker(bus, stats, {
      keyId: 'k1', keyName: 'bench', mode: kind === 'chat-fast' ? 'unified' : kind, provider: 'openai', model: 'gpt-5.4', method: 'POST',
      path: kind === 'messages' ? '/v1/messages' : '/v1/chat/completions', stream: false, requestBytes: 120, headers: HEADERS, client: '127.0.0.1', ...(kind === 'messages' ? { asked: 'openai/gpt-5.4', session: undefined } : {}),
    }, ctx.startSpan);
    if (kind === 'native') {
      tracker.traceparent();
      tracker.responseIsStream(false);
      tracker.wrote(ANSWER.length);
      tracker.finish(200, { inputTokens: 20, outputTokens: 12 }, 'gpt-5.4-2026-03-05');
      return;
    }
    if (kind === 'chat-fast') {
      // The Chat door's fast path to OpenAI: the answer's bytes relayed as they are, read back by the span.
      const capture = tracker.span ? tracker.span.reads({ protocol: 'openai-chat', request: REQUEST, target: () => ({ provider: 'openai', model: 'gpt-5.4' }), client: () => Promise.reject(new Error('content capture is off')) }, undefined) : undefined;
      tracker.attemptStarted('openai/gpt-5.4', '');
      tracker.traceparent();
      tracker.wrote(CHAT_ANSWER.length);
      capture?.wrote(Buffer.from(CHAT_ANSWER));
      tracker.finish(200, { inputTokens: 20, outputTokens: 12 }, 'gpt-5.4-2026-03-05');
      return;
    }
    const capture = tracker.span ? tracker.span.reads({ protocol: 'anthropic', request: REQUEST, target: () => ({ provider: 'openai', model: 'gpt-5.4' }), client: () => Promise.reject(new Error('content capture is off')) }, undefined) : undefined;
    tracker.attemptStarted('openai/gpt-5.4', '');
    tracker.traceparent();
    const answer = { id: `chatcmpl-${i}`, model: 'gpt-5.4-2026-03-05', choices: [{ index: 0, finish: 'stop', parts: [{ type: 'text', text: 'Hello there, nice to meet.' }] }], usage: { inputTokens: 20, outputTokens: 12 } };
    tracker.span?.answered?.(answer, 'msg_01XyZ');
    tracker.wrote(ANSWER.length);
    capture?.wrote(ANSWER);
    tracker.finish(200, { inputTokens: 20, outputTokens: 12 }, 'gpt-5.4-2026-03-05');
  };
  const burst = async (n: number) => { for (let i = 0; i < n; i += 100) { for (let j = 0; j < 100; j++) one(i + j); await new Promise((r) => setImmediate(r)); } };
  await burst(20_000);
  const runs: number[] = [];
  const whole: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.threadCpuUsage();
    const p0 = process.cpuUsage();
    await burst(N);
    const c = process.threadCpuUsage(t0);
    runs.push((c.user + c.system) / N);
    // The process's CPU includes the span worker's thread: its work left over is given time to finish.
    await new Promise((r) => setTimeout(r, 300));
    const p = process.cpuUsage(p0);
    whole.push((p.user + p.system) / N);
  }
  // --idle S: the CPU the variant takes while no request comes (the metrics push, timers), in µs per second.
  if (IDLE > 0) {
    const t0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, IDLE * 1000));
    const c = process.cpuUsage(t0);
    idle.push(`${((c.user + c.system) / IDLE).toFixed(0)} µs/s idle`);
  }
  await t.close();
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[2]!;
  return [median(runs), median(whole)];
}

const otlp = (sampleRatio?: number) => ({ ...TELEMETRY_DEFAULTS, otlp: { endpoint: `http://127.0.0.1:${sinkPort}`, protocol: 'http/protobuf', metrics: true, metricsIntervalMs: 1000, batchDelayMs: 5000, ...(sampleRatio === undefined ? {} : { sampleRatio }) } });
const variants: Array<[string, unknown]> = [
  ['off', { ...TELEMETRY_DEFAULTS, metrics: false }],
  ['default', TELEMETRY_DEFAULTS],
  ['on', otlp()],
  ['on 10%', otlp(0.1)],
  ['on 0%', otlp(0)],
];
const KINDS = argv.includes('--kind') ? [argv[argv.indexOf('--kind') + 1] as Kind] : ['native', 'messages'] as const;
for (const kind of KINDS) {
  const out: string[] = [];
  for (const [name, settings] of variants) {
    if (ONLY && !ONLY.includes(name)) continue;
    const [thread, whole] = await variant(kind, settings);
    out.push(`${name} ${thread.toFixed(2)} (${whole.toFixed(2)})`);
  }
  console.log(`${kind}: ${out.join(' · ')} µs/req on the request thread (the whole process)${idle.length ? ` (${idle.splice(0).join(', ')})` : ''}`);
}
sink.kill();
