// A mock provider built for speed, for the bench only: one node:http server that answers all three
// wire formats from precomputed buffers, so it is never the bottleneck.
//   POST /v1/chat/completions                        OpenAI (JSON, or SSE when the body has "stream":true)
//   POST /v1/messages                                Anthropic (JSON, or SSE when the body has "stream":true)
//   POST /v1/responses                               OpenAI Responses (JSON, or typed SSE events)
//   POST /v1beta/models/{m}:generateContent          Gemini JSON
//   POST /v1beta/models/{m}:streamGenerateContent    Gemini SSE (events separated by \r\n\r\n, no [DONE])
// Streams are STREAM_EVENTS events, the first sent with the headers, then one every STREAM_DELAY_MS.
// Each text token is `tok{i}@{send time}` (process.hrtime, ns: CLOCK_MONOTONIC, the same clock in
// every process), so the stream client can tell how long each chunk took to reach it.
// A model named `down-…` answers 503 with no retry-after (the bench's failover row).
// It checks no credentials and records nothing (the tests' mock in test/helpers does that).
// Usage: node bench/fast-mock.ts [port] [events] [delayMs]   → prints {"port":N} on stdout.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicJson, geminiJson, mockStreams, openaiJson, responsesJson } from './mock-answers.ts';

const port = Number(process.argv[2] ?? 0);
const EVENTS = Math.max(4, Number(process.argv[3] ?? 20));
const DELAY_MS = Number(process.argv[4] ?? 5);
const streams = mockStreams(EVENTS);

const JSON_HEADERS = (n: number) => ['content-type', 'application/json', 'content-length', String(n)];
const SSE_HEADERS = ['content-type', 'text/event-stream', 'cache-control', 'no-cache'];
const STREAM_MARK = Buffer.from('"stream":true');
// A model whose name starts `down-` is always unavailable: 503, no retry-after (the failover row).
const DOWN_MARK = Buffer.from('"model":"down-');
const DOWN_BODY = Buffer.from('{"error":{"message":"bench mock: this model is down","type":"server_error","param":null,"code":null}}');

function sendStream(res: ServerResponse, events: string[]): void {
  res.writeHead(200, SSE_HEADERS);
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    const ev = events[i++]!;
    res.write(ev.includes('%TS%') ? ev.replace('%TS%', String(process.hrtime.bigint())) : ev);
    if (i === events.length) { res.end(); return; }
    setTimeout(next, DELAY_MS);
  };
  next();
}

function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const url = req.url ?? '/';
  const stream = body.indexOf(STREAM_MARK) !== -1;
  if (body.indexOf(DOWN_MARK) !== -1) {
    res.writeHead(503, JSON_HEADERS(DOWN_BODY.length)).end(DOWN_BODY);
  } else if (url.startsWith('/v1/chat/completions')) {
    if (stream) sendStream(res, streams.openai);
    else res.writeHead(200, JSON_HEADERS(openaiJson.length)).end(openaiJson);
  } else if (url.startsWith('/v1/messages')) {
    if (stream) sendStream(res, streams.anthropic);
    else res.writeHead(200, JSON_HEADERS(anthropicJson.length)).end(anthropicJson);
  } else if (url.startsWith('/v1/responses')) {
    if (stream) sendStream(res, streams.responses);
    else res.writeHead(200, JSON_HEADERS(responsesJson.length)).end(responsesJson);
  } else if (url.includes(':streamGenerateContent')) {
    sendStream(res, streams.gemini);
  } else if (url.includes(':generateContent')) {
    res.writeHead(200, JSON_HEADERS(geminiJson.length)).end(geminiJson);
  } else {
    const b = Buffer.from(`{"error":{"message":"bench mock: no route for ${req.method} ${url.split('?')[0]}"}}`);
    res.writeHead(404, JSON_HEADERS(b.length)).end(b);
  }
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  let body: Buffer | undefined;
  let parts: Buffer[] | undefined;
  req.on('data', (c: Buffer) => { if (!body) body = c; else (parts ??= [body]).push(c); });
  req.on('end', () => answer(req, res, parts ? Buffer.concat(parts) : body ?? Buffer.alloc(0)));
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid }) + '\n');
});
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
