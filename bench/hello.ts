// A node:http server that answers every request itself with the mock's OpenAI JSON, no upstream
// call: the most one core here can serve, to read the other rows against.
// Usage: node bench/hello.ts [port]   → prints {"port":N,"pid":P} on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openaiJson } from './mock-answers.ts';

const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': openaiJson.length }); res.end(openaiJson); });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
