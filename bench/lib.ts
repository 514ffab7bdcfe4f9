// Process and measurement helpers shared by bench/run.ts and bench/profile.ts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = dirname(BENCH_DIR);

export const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

export function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

export const CPUS = (() => {
  try { return readFileSync('/proc/cpuinfo', 'utf8').split('\n').filter((l) => l.startsWith('processor')).length; } catch { return 1; }
})();
export const PIN = have('taskset') && CPUS >= 2;

/** The command line to run `argv` pinned to `core` (unpinned when taskset or a second core is missing). */
export function pinned(core: number, argv: string[]): [string, string[]] {
  return PIN ? ['taskset', ['-c', String(core), ...argv]] : [argv[0]!, argv.slice(1)];
}

/** Moves this process (all its threads) to `core`, so the orchestrator stays off the daemon's core. */
export function pinSelf(core: number): void {
  if (PIN) spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
}

const children = new Set<ChildProcess>();

/** Stops a child we started: SIGTERM, then SIGKILL after `graceMs`. */
export function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => { child.kill('SIGKILL'); }, graceMs);
    child.once('exit', () => { clearTimeout(t); resolve(); });
    child.kill('SIGTERM');
  });
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c)));
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => { void stopAll().then(() => process.exit(130)); });
}
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });

export interface Started<T> { child: ChildProcess; info: T; stderr: () => string }

/** Spawns a server that prints one JSON line on stdout when ready. */
export function startServer<T>(name: string, core: number, argv: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Started<T>> {
  const [cmd, args] = pinned(core, argv);
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let err = '';
  child.stderr!.on('data', (c: Buffer) => { err = (err + c.toString()).slice(-8000); });
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => fail(new Error(`${name} did not start within ${(opts.timeoutMs ?? 20000) / 1000} s`)), opts.timeoutMs ?? 20000);
    const fail = (e: Error) => { clearTimeout(t); void stopChild(child); reject(new Error(`${e.message}\n${err.trim()}`)); };
    child.on('exit', (code) => fail(new Error(`${name} exited with code ${code} before it was ready`)));
    child.stdout!.on('data', function onData(c: Buffer) {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl === -1) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      clearTimeout(t);
      child.removeAllListeners('exit');
      try { resolve({ child, info: JSON.parse(out.slice(0, nl)) as T, stderr: () => err }); } catch { fail(new Error(`${name} printed ${out.slice(0, nl)}`)); }
    });
  });
}

/** Runs a command to completion with a hard time limit; resolves with its stdout. */
export function runBounded(argv: string[], opts: { core?: number; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, args] = opts.core === undefined ? [argv[0]!, argv.slice(1)] : pinned(opts.core, argv);
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-8000); });
  return new Promise((resolve) => {
    const t = setTimeout(() => { child.kill('SIGKILL'); stderr += `\n(killed after ${opts.timeoutMs / 1000} s)`; }, opts.timeoutMs);
    child.on('close', (code) => { clearTimeout(t); children.delete(child); resolve({ code, stdout, stderr }); });
  });
}

export interface WrkResult {
  requests: number; durationUs: number; bytes: number;
  errConnect: number; errRead: number; errWrite: number; errStatus: number; errTimeout: number;
  p50: number; p90: number; p99: number; mean: number; max: number;
  rps: number; errors: number;
}

export interface WrkStep { port: number; path: string; bodyFile: string; headers: Record<string, string>; connections: number; seconds: number }

export async function runWrk(s: WrkStep, core: number): Promise<WrkResult> {
  const argv = ['wrk', '-t1', `-c${s.connections}`, `-d${s.seconds}s`, '--timeout', '5s', '-s', join(BENCH_DIR, 'wrk', 'post.lua'), `http://127.0.0.1:${s.port}${s.path}`];
  const env = { BENCH_BODY_FILE: s.bodyFile, BENCH_HEADERS: Object.entries(s.headers).map(([k, v]) => `${k}: ${v}`).join('\n') };
  const r = await runBounded(argv, { core, env, timeoutMs: (s.seconds + 15) * 1000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`wrk gave no result (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  const j = JSON.parse(line.slice('BENCH_JSON '.length)) as WrkResult;
  j.rps = j.requests / (j.durationUs / 1e6);
  j.errors = j.errConnect + j.errRead + j.errWrite + j.errStatus + j.errTimeout;
  return j;
}

export const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** utime+stime of a process, in microseconds (resolution 1/CLK_TCK s). */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
}

/** Peak resident set size (VmHWM) in MiB, or NaN when unreadable. */
export function peakRssMiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch { return NaN; }
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Jiffies (busy, total) per CPU from /proc/stat, to show which core was saturated during a step. */
export function cpuTimes(): Array<{ busy: number; total: number }> {
  const out: Array<{ busy: number; total: number }> = [];
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    out[Number(m[1])] = { busy: total - f[3]! - f[4]!, total };
  }
  return out;
}

/** Busy percentage of each CPU between two cpuTimes() samples. */
export function busyPct(a: Array<{ busy: number; total: number }>, b: Array<{ busy: number; total: number }>): number[] {
  return b.map((x, i) => (x.total - a[i]!.total > 0 ? (100 * (x.busy - a[i]!.busy)) / (x.total - a[i]!.total) : NaN));
}

// --- Interference from other processes -----------------------------------------------------------
// The machine may be shared (other people's test runs). Each step measures how much CPU processes
// other than the bench's used while it ran ("foreign" CPU, in % of one core), so contaminated
// steps can be retried and reported. Busy = user+nice+system jiffies (irq/softirq time is left
// out: loopback traffic lands there and is not charged to any process).

function machineBusyUs(): { busy: number; steal: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { busy: ((f[0]! + f[1]! + f[2]!) * 1e6) / CLK_TCK, steal: ((f[7] ?? 0) * 1e6) / CLK_TCK };
}

/** CPU of this process, its reaped children (wrk, the stream client) and the given live processes. */
function ourUs(pids: number[]): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  let us = ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1e6) / CLK_TCK;
  for (const p of pids) { try { us += cpuUs(p); } catch { /* exited */ } }
  return us;
}

export interface Interference { foreignPct: number; stealPct: number }

export function interferenceProbe(pids: () => number[]): () => Interference {
  const t0 = performance.now();
  const m0 = machineBusyUs();
  const o0 = ourUs(pids());
  return () => {
    const wallUs = (performance.now() - t0) * 1000;
    const m1 = machineBusyUs();
    const o1 = ourUs(pids());
    return { foreignPct: Math.max(0, (100 * (m1.busy - m0.busy - (o1 - o0))) / wallUs), stealPct: (100 * (m1.steal - m0.steal)) / wallUs };
  };
}

/** Waits (up to maxMs) until other processes use less than `pct` % of a core. Returns the ms waited. */
export async function waitQuiet(pids: () => number[], pct: number, maxMs: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < maxMs) {
    const probe = interferenceProbe(pids);
    await sleep(200);
    if (probe().foreignPct < pct) return Date.now() - t0;
  }
  return Date.now() - t0;
}

// --- Workers ------------------------------------------------------------------------------------
/** A long-lived helper process pinned to `core` that answers one stdout line per stdin line
 *  (bench/probe.ts, bench/stream-client.ts). Its first line is {"pid":N}. */
export async function startWorker(core: number, script: string): Promise<{ pid: number; call: (line: string) => Promise<string> }> {
  const [cmd, args] = pinned(core, [process.execPath, join(BENCH_DIR, script)]);
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  const waiting: Array<(line: string) => void> = [];
  let buf = '';
  child.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      waiting.shift()?.(line);
    }
  });
  child.on('exit', () => { for (const w of waiting.splice(0)) w('{"error":"worker exited"}'); });
  const first = await new Promise<string>((resolve) => waiting.push(resolve));
  const { pid } = JSON.parse(first) as { pid: number };
  return {
    pid,
    call: (line) => new Promise<string>((resolve) => { waiting.push(resolve); child.stdin!.write(line.replace(/\n/g, ' ') + '\n'); }),
  };
}
