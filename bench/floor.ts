// The reference floor: the least a Node proxy can do on this path — node:http in, one undici Pool
// out, body streamed both ways, hop-by-hop headers dropped. No auth, no events, no accounting.
// Usage: node bench/floor.ts <upstream origin> [port]   → prints {"port":N,"pid":P} on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'proxy-connection']);
const pool = new Pool(process.argv[2]!, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 });

function pick(h: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in h) if (!HOP.has(k) && h[k] !== undefined) out[k] = h[k]!;
  return out;
}

const server = createServer({ keepAliveTimeout: 30_000 }, async (req, res) => {
  try {
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const up = await pool.request({ method: req.method as 'POST', path: req.url!, headers: pick(req.headers), body: hasBody ? req : undefined });
    res.writeHead(up.statusCode, pick(up.headers));
    for await (const chunk of up.body) res.write(chunk);
    res.end();
  } catch {
    if (res.headersSent) res.destroy(); else res.writeHead(502).end();
  }
});
server.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
