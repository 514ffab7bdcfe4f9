// A throwaway Prometheus (Debian's /usr/bin/prometheus) scraping one target every second: a temp
// config and data directory, a free loopback port, queried through its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort } from '../helpers/ports.js';

export const PROMETHEUS = '/usr/bin/prometheus';

export interface VectorSample { metric: Record<string, string>; value: [number, string] }

export interface Prometheus {
  url: string;
  /** An instant query's vector. */
  query(q: string): Promise<VectorSample[]>;
  /** The one value of a query that sums to a scalar-like vector (0 when it is empty). */
  value(q: string): Promise<number>;
  /** Waits until `q`'s value is `want`, or passes `want` when it is a test (Prometheus has scraped what the test did). */
  until(q: string, want: number | ((v: number) => boolean), timeoutMs?: number): Promise<void>;
  api(path: string): Promise<unknown>;
  close(): Promise<void>;
}

export async function startPrometheus(target: string, extraScrape = ''): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-prometheus-'));
  const port = await closedPort();
  writeFileSync(join(dir, 'prometheus.yml'), [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    '  - job_name: gateway',
    '    static_configs:',
    `      - targets: ['${target}']`,
    extraScrape,
  ].join('\n'));
  const proc: ChildProcess = spawn(PROMETHEUS, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const url = `http://127.0.0.1:${port}`;
  const api = async (path: string): Promise<unknown> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  const query = async (q: string) => ((await api(`/api/v1/query?query=${encodeURIComponent(q)}`)) as { result: VectorSample[] }).result;
  const value = async (q: string) => {
    const r = await query(q);
    return r.length === 0 ? 0 : Number(r[0]!.value[1]);
  };
  for (const deadline = Date.now() + 20_000; ;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`prometheus did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url, query, value, api,
    async until(q, want, timeoutMs = 20_000) {
      let last = NaN;
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
        last = await value(q);
        if (typeof want === 'number' ? last === want : want(last)) return;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`prometheus: ${q} is ${last}, not ${String(want)}`);
    },
    async close() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
