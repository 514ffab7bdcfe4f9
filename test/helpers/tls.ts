// Serving beyond loopback in tests: this machine's LAN address (connecting to it from it gives the
// daemon a peer that is not loopback) and a self-signed certificate made with openssl.
import { execFileSync } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';

/** This machine's first non-internal IPv4 address; throws when it has none (`why`: what the test needs it for). */
export function lanAddress(why: string): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error(`this test needs a non-loopback network interface (os.networkInterfaces() lists none): ${why}`);
}

/** A self-signed EC certificate and its key in `dir` (cert.pem, key.pem), naming `san` (e.g. `DNS:gw.example,IP:192.0.2.2`). */
export function selfSignedCert(dir: string, san: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=gw.example', '-addext', `subjectAltName=${san}`, '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { cert, key };
}
