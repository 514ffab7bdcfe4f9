// Who sent a request (http/peer.ts): X-Forwarded-For and -Proto only from a trusted proxy, read from
// the right past every trusted hop; the local admin token's "this machine" never includes a request
// a proxy forwarded; the bind rule of exposure.ts.
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { readPeer } from '../../src/daemon/http/peer.js';
import { exposureProblem, parseProxyAddresses } from '../../src/daemon/http/exposure.js';

const req = (remoteAddress: string, headers: Record<string, string> = {}, encrypted = false) =>
  ({ socket: { remoteAddress, encrypted }, headers }) as unknown as IncomingMessage;

describe('readPeer', () => {
  const behind = { tls: false, proxies: ['10.0.0.2', '10.0.0.3'] };

  it('ignores forwarded headers from a peer that is not a proxy', () => {
    expect(readPeer(req('192.0.2.50', { 'x-forwarded-for': '203.0.113.1', 'x-forwarded-proto': 'https' }), behind))
      .toEqual({ client: '192.0.2.50', viaProxy: false, local: false, secure: false });
  });

  it('takes the rightmost address that is not a trusted proxy, and the proxy\'s scheme', () => {
    expect(readPeer(req('::ffff:10.0.0.2', { 'x-forwarded-for': '198.51.100.1, 203.0.113.9, 10.0.0.3', 'x-forwarded-proto': 'https' }), behind))
      .toEqual({ client: '203.0.113.9', viaProxy: true, local: false, secure: true });
  });

  it('falls back to the proxy itself when its header is not an address list', () => {
    expect(readPeer(req('10.0.0.2', { 'x-forwarded-for': 'unknown' }), behind).client).toBe('10.0.0.2');
  });

  it('a proxy on loopback is "this machine" only for requests it did not forward', () => {
    const local = { tls: false, proxies: ['127.0.0.1'] };
    expect(readPeer(req('127.0.0.1'), local).local).toBe(true);
    expect(readPeer(req('127.0.0.1', { 'x-forwarded-for': '198.51.100.4' }), local)).toMatchObject({ local: false, client: '198.51.100.4' });
    expect(readPeer(req('::1'), { tls: false, proxies: [] }).local).toBe(true);
  });

  it('is secure over the daemon\'s own TLS', () => {
    expect(readPeer(req('192.0.2.50', {}, true), { tls: true, proxies: [] }).secure).toBe(true);
  });
});

describe('the bind rule', () => {
  it('refuses a non-loopback bind in plain HTTP, and only that', () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.2', 'gw.example']) expect(exposureProblem({ host, tls: false, proxies: [] }), host).toMatch(/refusing to listen/);
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) expect(exposureProblem({ host, tls: false, proxies: [] }), host).toBeUndefined();
    expect(exposureProblem({ host: '0.0.0.0', tls: true, proxies: [] })).toBeUndefined();
    expect(exposureProblem({ host: '0.0.0.0', tls: false, proxies: ['10.0.0.2'] })).toBeUndefined();
  });

  it('--behind-proxy takes IP addresses only', () => {
    expect(parseProxyAddresses('10.0.0.2, ::ffff:10.0.0.3,fd00::1')).toEqual(['10.0.0.2', '10.0.0.3', 'fd00::1']);
    expect(() => parseProxyAddresses('proxy.internal')).toThrow(/IP address/);
    expect(() => parseProxyAddresses(' , ')).toThrow(/needs the reverse proxy/);
  });
});
