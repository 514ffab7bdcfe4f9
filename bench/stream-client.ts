// Streaming client for the bench, run as a worker on the load core: each stdin line is a JSON
// command {targets:[{id,port,path,body,headers}], n}; it sends n streaming POSTs to each target, one
// at a time (c=1), alternating targets, over kept-alive connections, and answers one JSON line:
// { [id]: { ttfb: ms[], total: ms[], chunks: n[], error?: string } }.
// TTFB = request written → first body byte; total = request written → end of the body;
// delay = per stream, the median time from the mock writing a text token (`tok{i}@{hrtime ns}`) to
// this client receiving it — the per-chunk delivery latency through the path. A token counts the
// first time it arrives: protocols that repeat the whole text at the end (Responses' `.done` and
// `response.completed` events) would otherwise add its age at the stream's end.
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';

interface Target { id: string; port: number; path: string; body: string; headers: Record<string, string> }
interface Sample { ttfb: number; total: number; chunks: number; delay: number; status: number; text: string }
interface Result { ttfb: number[]; total: number[]; chunks: number[]; delay: number[]; error?: string }

const TOKEN = /tok(\d+)@(\d+)/g;
const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[s.length >> 1]! : NaN; };

const agents = new Map<string, Agent>();

function once(agent: Agent, t: Target): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(t.body);
    const t0 = performance.now();
    let ttfb = -1;
    let chunks = 0;
    let head = '';
    const delays: number[] = [];
    const seen = new Set<string>();
    const req = request({
      host: '127.0.0.1', port: t.port, path: t.path, method: 'POST', agent,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': body.length, ...t.headers },
    }, (res) => {
      res.on('data', (c: Buffer) => {
        const now = process.hrtime.bigint();
        if (ttfb < 0) ttfb = performance.now() - t0;
        for (const m of c.toString('latin1').matchAll(TOKEN)) {
          if (seen.has(m[1]!)) continue;
          seen.add(m[1]!);
          delays.push(Number(now - BigInt(m[2]!)) / 1000);
        }
        chunks++;
        if (head.length < 1024) head += c.toString('utf8');
      });
      res.on('end', () => resolve({ ttfb, total: performance.now() - t0, chunks, delay: med(delays), status: res.statusCode ?? 0, text: head }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('stream timed out after 10 s')));
    req.end(body);
  });
}

async function one(t: Target, r: Result): Promise<void> {
  let agent = agents.get(t.id);
  if (!agent) { agent = new Agent({ keepAlive: true, maxSockets: 1 }); agents.set(t.id, agent); }
  try {
    const s = await once(agent, t);
    if (s.status !== 200) { r.error = `HTTP ${s.status}: ${s.text.slice(0, 200)}`; return; }
    r.ttfb.push(s.ttfb); r.total.push(s.total); r.chunks.push(s.chunks); r.delay.push(s.delay);
  } catch (e) { r.error = (e as Error).message; }
}

process.stdout.write(JSON.stringify({ pid: process.pid }) + '\n');
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(async () => {
    const cmd = JSON.parse(line) as { targets: Target[]; n: number };
    const out: Record<string, Result> = {};
    for (const t of cmd.targets) out[t.id] = { ttfb: [], total: [], chunks: [], delay: [] };
    // Paths alternate stream by stream, so stream i of each path ran within a second of the others.
    for (let i = 0; i < cmd.n; i++) for (const t of cmd.targets) if (!out[t.id]!.error) await one(t, out[t.id]!);
    process.stdout.write(JSON.stringify(out) + '\n');
  });
});
