// readBody, the door's body reader, against real sockets: bodies in many chunks arrive whole, a
// chunked body over the limit is refused (413) without reading the rest, and a client that goes
// away mid-body ends the read with an error instead of leaving the request hanging.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody } from '../../src/daemon/http/http-util.js';
import { GatewayError } from '../../src/daemon/http/errors.js';

let server: Server | undefined;
afterEach(async () => { await new Promise<void>((r) => (server ? server.close(() => r()) : r())); server = undefined; });

/** A server whose handler reads each request's body with `limit` and reports the outcome. */
async function serve(limit: number): Promise<{ port: number; outcomes: Array<Promise<Buffer>> }> {
  const outcomes: Array<Promise<Buffer>> = [];
  server = createServer((req: IncomingMessage, res) => {
    const read = readBody(req, limit);
    outcomes.push(read);
    read.then((b) => res.end(`got ${b.length}`), () => { /* the test looks at the rejection */ });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { port: (server!.address() as AddressInfo).port, outcomes };
}

describe('readBody', () => {
  it('joins a chunked body sent in many writes, byte for byte', async () => {
    const { port, outcomes } = await serve(1 << 20);
    const parts = Array.from({ length: 40 }, (_, i) => Buffer.alloc(1000 + i, i));
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request({ port, method: 'POST', host: '127.0.0.1' }, (res) => { let t = ''; res.on('data', (c: Buffer) => { t += c; }).on('end', () => resolve(t)); });
      req.on('error', reject);
      let i = 0;
      const next = (): void => { if (i < parts.length) req.write(parts[i++], next); else req.end(); };
      next();
    });
    const whole = Buffer.concat(parts);
    expect(answer).toBe(`got ${whole.length}`);
    expect((await outcomes[0]!).equals(whole)).toBe(true);
  });

  it('refuses a chunked body as soon as it passes the limit (413), without waiting for its end', async () => {
    const { port, outcomes } = await serve(10_000);
    const req = request({ port, method: 'POST', host: '127.0.0.1' });
    req.on('error', () => { /* the server drops the connection */ });
    req.write(Buffer.alloc(6_000, 'a'));
    req.write(Buffer.alloc(6_000, 'b')); // never ended: the read must not wait for the rest
    await expect.poll(() => outcomes.length).toBe(1);
    const err = await outcomes[0]!.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(413);
    req.destroy();
  });

  it('ends with an error when the client goes away mid-body', async () => {
    const { port, outcomes } = await serve(1 << 20);
    const req = request({ port, method: 'POST', host: '127.0.0.1', headers: { 'content-length': '100000' } });
    req.on('error', () => { /* we hang up ourselves */ });
    req.write(Buffer.alloc(1000, 'x'));
    await expect.poll(() => outcomes.length).toBe(1);
    req.destroy();
    const err = await outcomes[0]!.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(['ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE']).toContain((err as { code?: string }).code);
  });

  it('gives an empty body, at once, for a request whose body was already read', async () => {
    const seen: Buffer[] = [];
    server = createServer(async (req, res) => {
      seen.push(await readBody(req, 1000));
      seen.push(await readBody(req, 1000));
      res.end('ok');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body: 'hello' });
    expect(await r.text()).toBe('ok');
    expect(seen.map((b) => b.toString())).toEqual(['hello', '']);
  });
});
