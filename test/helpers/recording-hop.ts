// A loopback hop in front of the gateway that keeps every request exactly as the client sent it
// (method, URL, headers, body bytes) and passes it on unchanged, streaming the answer back; it
// keeps each answer's status and headers too (x-gateway-route, as the client got it).
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Recorded } from './mock-provider.js';

export interface HopAnswer { status: number; headers: IncomingHttpHeaders }
export interface RecordingHop {
  url: string;
  /** The requests in the order they arrived. */
  requests: Recorded[];
  /** The answer to each request, at the same index (undefined until its headers came). */
  answers: Array<HopAnswer | undefined>;
  close(): Promise<void>;
}

export async function startRecordingHop(target: string): Promise<RecordingHop> {
  const to = new URL(target);
  const requests: Recorded[] = [];
  const answers: Array<HopAnswer | undefined> = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const i = requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, aborted: false, at: Date.now() }) - 1;
      answers.push(undefined);
      const headers: IncomingHttpHeaders = { ...req.headers, host: to.host };
      const up = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
        answers[i] = { status: answer.statusCode ?? 502, headers: answer.headers };
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answers,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
