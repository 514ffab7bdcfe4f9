// Who can reach the daemon, decided once at start: a loopback bind is this machine's alone; any
// other bind is reachable from the network and is served only over TLS (the daemon's own) or behind
// a named TLS-terminating reverse proxy, never in plain HTTP to whoever connects.
import { isIP } from 'node:net';

export interface Exposure {
  /** The address the daemon listens on, as given. */
  host: string;
  /** True when only this machine can connect (127.0.0.0/8, ::1, localhost). */
  loopback: boolean;
  /** The daemon serves HTTPS itself. */
  tls: boolean;
  /** The reverse proxies whose X-Forwarded-For/-Proto are believed (normalized IP addresses); empty: none. */
  proxies: readonly string[];
}

/** An IPv4-mapped IPv6 address (`::ffff:10.0.0.5`, as a dual-stack socket reports IPv4 peers) as plain IPv4. */
export function normalizeIp(address: string): string {
  const a = address.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? mapped[1]! : a;
}

/** An address (or `localhost`) that only this machine can use. */
export function isLoopback(address: string): boolean {
  const a = normalizeIp(address);
  if (a === 'localhost' || a === '::1') return true;
  return isIP(a) === 4 && a.startsWith('127.');
}

/** `--behind-proxy 10.0.0.2` (or several, comma-separated): IP addresses, normalized; throws on anything else. */
export function parseProxyAddresses(text: string): string[] {
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new Error('--behind-proxy needs the reverse proxy\'s IP address (the address its connections come from)');
  for (const a of list) {
    if (isIP(normalizeIp(a)) === 0) throw new Error(`--behind-proxy takes the reverse proxy's IP address (its connections' source), not "${a}"`);
  }
  return [...new Set(list.map(normalizeIp))];
}

/**
 * Why the daemon must not listen as asked, or undefined when it may: a non-loopback bind with
 * neither TLS nor a reverse proxy would carry proxy keys and admin keys in clear text.
 */
export function exposureProblem(e: { host: string; tls: boolean; proxies: readonly string[] }): string | undefined {
  if (isLoopback(e.host) || e.tls || e.proxies.length > 0) return undefined;
  return `refusing to listen on ${e.host} in plain HTTP: other machines could reach it and read its keys on the wire; ` +
    'serve TLS (--tls-cert <file> --tls-key <file>), or name the TLS-terminating reverse proxy in front of it (--behind-proxy <address>), or listen on 127.0.0.1';
}

/** The exposure of a daemon about to listen; throws the one-line refusal when it may not. */
export function exposureOf(host: string, tls: boolean, proxies: readonly string[] = []): Exposure {
  const problem = exposureProblem({ host, tls, proxies });
  if (problem) throw new Error(problem);
  return { host, loopback: isLoopback(host), tls, proxies };
}
