// Who sent a request: the TCP peer, and the client behind it when that peer is a trusted reverse
// proxy (its X-Forwarded-For and X-Forwarded-Proto). Headers from anyone else are ignored: a
// client can write any X-Forwarded-For it likes. Read once per request by the server.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { isIP } from 'node:net';
import { isLoopback, normalizeIp, type Exposure } from './exposure.js';

export interface Peer {
  /** The client's address: the TCP peer's, or the one a trusted proxy forwarded. */
  client: string;
  /** The TCP peer is one of the trusted proxies. */
  viaProxy: boolean;
  /** The TCP peer is this machine, not forwarding for another: the local admin token is accepted from it. */
  local: boolean;
  /** The client's connection is HTTPS: ours, or the proxy's (X-Forwarded-Proto: https). */
  secure: boolean;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/**
 * The client a chain of proxies forwarded for: X-Forwarded-For read from the right (each proxy
 * appends the address it saw), trusted proxies skipped; the first other address is the client.
 */
function forwardedClient(xff: string | undefined, proxies: readonly string[], peer: string): string {
  if (!xff) return peer;
  const hops = xff.split(',').map((s) => normalizeIp(s)).filter((s) => s !== '');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return peer; // not an address: nothing after it can be believed
    if (!proxies.includes(hop)) return hop;
  }
  return hops[0] ?? peer;
}

export function readPeer(req: IncomingMessage, exposure: Pick<Exposure, 'tls' | 'proxies'>): Peer {
  const address = normalizeIp(req.socket.remoteAddress ?? '');
  const viaProxy = exposure.proxies.includes(address);
  const tls = exposure.tls && (req.socket as TLSSocket).encrypted === true;
  if (!viaProxy) return { client: address, viaProxy, local: isLoopback(address), secure: tls };
  const xff = header(req, 'x-forwarded-for');
  const proto = header(req, 'x-forwarded-proto')?.split(',').at(-1)?.trim().toLowerCase();
  // A proxy on this machine (--behind-proxy 127.0.0.1) shares its address with the gateway's own
  // CLI: what it forwards carries X-Forwarded-For, which the CLI never sends.
  const local = isLoopback(address) && xff === undefined;
  return { client: forwardedClient(xff, exposure.proxies, address), viaProxy, local, secure: tls || proto === 'https' };
}

const peers = new WeakMap<IncomingMessage, Peer>();

/** Remembers the request's peer (server.ts, once, as the request arrives). */
export function notePeer(req: IncomingMessage, exposure: Pick<Exposure, 'tls' | 'proxies'>): Peer {
  const p = readPeer(req, exposure);
  peers.set(req, p);
  return p;
}

/** The request's peer as the server noted it; a request it never saw (a test's) is read without proxies. */
export function peerOf(req: IncomingMessage): Peer {
  return peers.get(req) ?? readPeer(req, { tls: false, proxies: [] });
}
