// An OTLP/HTTP collector that takes every export and keeps nothing: what the telemetry rows export
// to, so they measure the daemon's side of OTLP (spans, batches, encoding), not a collector's.
// Usage: node bench/otlp-sink.ts   → prints {"port":N,"pid":P} on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let exports = 0;
const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => { exports++; res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf', 'content-length': 0 }); res.end(); });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid }) + '\n');
});
process.on('SIGTERM', () => { process.stderr.write(`otlp sink: ${exports} exports\n`); process.exit(0); });
