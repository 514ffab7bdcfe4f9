// How the CLI reaches a daemon over HTTP or HTTPS, and whom it trusts there.
// - A daemon on this machine that serves TLS recorded its certificate file in daemon.json: the CLI
//   trusts exactly that certificate (pinned by its SHA-256 fingerprint), whatever names it carries,
//   because it connects on loopback (https://127.0.0.1:…) where a certificate for gw.example would
//   never match. A self-signed certificate works with no flag.
// - A remote gateway (`--url`) is checked as any HTTPS client checks a server: the system's CAs and
//   NODE_EXTRA_CA_CERTS, plus the CA (or self-signed certificate) of `--ca-cert <file>`; its name
//   must match the URL's host. There is no switch that turns verification off.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { checkServerIdentity, rootCertificates, type PeerCertificate } from 'node:tls';

export type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

/** Whom to trust over HTTPS beyond the system's CAs: the daemon's own certificate, or a CA file. */
export type Trust = { pinned: string } | { ca: string };

const fetchers = new Map<string, FetchLike>();

function readPem(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

/**
 * A fetch that trusts `trust` besides the system's CAs; the global fetch when there is nothing extra
 * to trust. The certificate file is read at once (a one-line error when it cannot be), the HTTPS
 * client (undici's) loaded on the first request.
 */
export function fetcherFor(trust: Trust | undefined): FetchLike {
  if (!trust) return fetch;
  const id = 'pinned' in trust ? `pin:${trust.pinned}` : `ca:${trust.ca}`;
  let f = fetchers.get(id);
  if (f) return f;
  const pem = 'pinned' in trust ? readPem(trust.pinned, "the daemon's TLS certificate") : readPem(trust.ca, 'the CA certificate');
  // The very certificate the daemon recorded is the proof; any other is held to the usual name check.
  const pin = 'pinned' in trust ? new X509Certificate(pem).fingerprint256 : undefined;
  const connect = {
    ca: [...rootCertificates, pem],
    ...(pin ? { checkServerIdentity: (host: string, cert: PeerCertificate) => (cert.fingerprint256 === pin ? undefined : checkServerIdentity(host, cert)) } : {}),
  };
  let undici: Promise<{ agent: import('undici').Agent; fetch: typeof import('undici').fetch }> | undefined;
  f = async (url, init) => {
    undici ??= import('undici').then((u) => ({ agent: new u.Agent({ connect }), fetch: u.fetch }));
    const u = await undici;
    return u.fetch(url, { ...(init as object), dispatcher: u.agent } as Parameters<typeof u.fetch>[1]) as unknown as Response;
  };
  fetchers.set(id, f);
  return f;
}

/** The trust a daemon on this machine needs: its recorded certificate when it serves HTTPS. */
export function localTrust(d: { url: string; tlsCert?: string }): Trust | undefined {
  return d.url.startsWith('https:') && d.tlsCert ? { pinned: d.tlsCert } : undefined;
}

/** Why a request never got an answer, in one line (fetch hides it in `cause`). */
export function networkReason(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'no answer in time';
  const c = err?.cause;
  if (!c) return err?.message ?? String(e);
  switch (c.code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ENOTFOUND': case 'EAI_AGAIN': return 'no such host';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT': case 'SELF_SIGNED_CERT_IN_CHAIN': case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE': case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return `its TLS certificate is not trusted here (${c.code}); pass the certificate or its CA with --ca-cert <file>`;
    case 'ERR_TLS_CERT_ALTNAME_INVALID': return `its TLS certificate does not name this host (${c.message ?? c.code})`;
    default: return c.message ?? c.code ?? err.message;
  }
}
