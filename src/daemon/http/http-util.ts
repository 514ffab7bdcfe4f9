// Small HTTP helpers shared by the native and unified paths: header filtering, bounded body
// reading, backpressure-aware writes and request-path safety.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from './errors.js';
import { PROXY_KEY_PREFIX } from '../store/keys.js';
import { isProviderAuthHeader } from '../../providers/registry.js';

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'http2-settings',
]);

/** Every header a client or SDK may carry a credential in (`api-key`: Azure's): never forwarded upstream. */
const CLIENT_CREDENTIALS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie']);

/** Request headers to forward: the client's, minus hop-by-hop and credentials. */
export function forwardRequestHeaders(h: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const connectionTokens = connectionHeaderTokens(h.connection);
  for (const name in h) {
    const value = h[name];
    if (value === undefined || HOP_BY_HOP.has(name) || CLIENT_CREDENTIALS.has(name) || isProviderAuthHeader(name) || connectionTokens.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Response headers to return: the provider's, minus hop-by-hop (the body is unchanged, so length stays). */
export function forwardResponseHeaders(h: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const connectionTokens = connectionHeaderTokens(h.connection);
  for (const name in h) {
    const value = h[name];
    if (value === undefined || HOP_BY_HOP.has(name) || connectionTokens.has(name)) continue;
    out[name] = value;
  }
  return out;
}

const NO_TOKENS: ReadonlySet<string> = new Set();

/** Header names listed in `Connection` (hop-by-hop by declaration); the common values cost nothing. */
function connectionHeaderTokens(v: string | string[] | undefined): ReadonlySet<string> {
  if (!v || v === 'keep-alive' || v === 'close') return NO_TOKENS;
  const s = Array.isArray(v) ? v.join(',') : v;
  return new Set(s.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/** Declared body size, or undefined when chunked. A declared size over the limit is refused before reading. */
export function declaredLength(req: IncomingMessage, limit: number): number | undefined {
  const cl = req.headers['content-length'];
  if (cl === undefined) return undefined;
  const n = Number(cl);
  if (!Number.isSafeInteger(n) || n < 0) throw new GatewayError('invalid_request', 'invalid Content-Length header');
  if (n > limit) throw tooLarge(limit);
  return n;
}

export function tooLarge(limit: number): GatewayError {
  return new GatewayError('request_too_large', `request body is larger than the gateway's limit of ${limit} bytes (set bodyLimitBytes in config to change it)`);
}

/**
 * Reads the whole body, refusing more than `limit` bytes. With the stream's events, not `for
 * await`: the async iterator cost every door request about 2 µs of CPU (its promise per chunk and
 * end-of-stream watcher). As the iterator did, a refused or broken body destroys the request.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  declaredLength(req, limit);
  return new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = (err: Error | undefined): void => {
      req.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (err) { req.destroy(); reject(err); return; }
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) done(tooLarge(limit));
      else parts.push(chunk);
    };
    const onEnd = (): void => done(undefined);
    // The client went away before the body ended.
    const onClose = (): void => done(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    if (req.readableEnded) resolve(Buffer.alloc(0)); // read before: nothing is left
    else if (req.destroyed) onClose();
    else req.on('data', onData).on('end', onEnd).on('error', done).on('close', onClose);
  });
}

/** Streams a body of unknown size, refusing more than `limit` bytes. */
export async function* limitedBody(req: IncomingMessage, limit: number): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    yield chunk;
  }
}

let flushedThisTick = false;
const endTick = (): void => { flushedThisTick = false; };

/**
 * `res.write`, sending the data at once when it is the first write of this tick (streams). res.write
 * alone holds what it writes (a socket cork) until the next tick, and from undici's callbacks that
 * comes only after undici has unwound its parser: a stream's chunk would wait for that. Writes that
 * follow in the same tick (a busy daemon, several chunks read at once) are left to res.write's
 * cork, which sends them together, so load makes no more syscalls. Returns res.write's answer.
 */
export function writeNow(res: ServerResponse, data: string | Uint8Array): boolean {
  if (flushedThisTick) return res.write(data);
  flushedThisTick = true;
  process.nextTick(endTick);
  const socket = res.socket;
  socket?.cork(); // res.write sees a corked socket and leaves the uncork to us
  const ok = res.write(data);
  socket?.uncork();
  return ok;
}

/** Writes respecting backpressure (`now`: sent at once, see writeNow); resolves false if the client went away. */
export function write(res: ServerResponse, data: string | Uint8Array, now = false): Promise<boolean> | boolean {
  if (res.destroyed) return false;
  if (now ? writeNow(res, data) : res.write(data)) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => { res.off('drain', onDrain); res.off('close', onClose); resolve(ok); };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** Splits the request target into its path and raw query; refuses absolute-form targets. */
export function splitTarget(rawUrl: string | undefined): { path: string; query: string } {
  const url = rawUrl ?? '/';
  if (!url.startsWith('/')) throw new GatewayError('not_found', 'request target must be a path');
  const q = url.indexOf('?');
  return q === -1 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/**
 * What some servers read as another path: `..` anywhere (a dot segment, Tomcat's `..;`, `..:`), a
 * `.` segment (also `.;`), a backslash, a NUL, a percent-encoded `.`, `/`, `\` or NUL, an empty
 * segment (merged slashes), or a `%` that starts no escape. No provider API has such paths.
 */
const AMBIGUOUS_PATH = /\.\.|\/\.(?:[/;]|$)|[\\\0]|%(?:2e|2f|5c|00)|%(?![0-9a-f]{2})|\/\//i;

function ambiguity(found: string): string {
  if (found === '..') return 'contains ".."';
  if (found.startsWith('/.')) return 'has a "." segment';
  if (found === '\\') return 'contains a backslash';
  if (found === '\0') return 'contains a NUL';
  if (found === '//') return 'has an empty segment';
  if (found === '%') return 'has a "%" that starts no percent-escape';
  return `contains "${found}" (a percent-encoded ".", "/", "\\" or NUL)`;
}

/**
 * Refuses (400) a path that a server normalising it could read as a different path, so a native
 * prefix never forwards one; also a path whose escapes are not UTF-8.
 */
export function assertPlainPath(path: string): void {
  const m = AMBIGUOUS_PATH.exec(path);
  if (m) throw new GatewayError('invalid_request', `refused path ${path}: it ${ambiguity(m[0])}, which servers may read as another path`);
  if (path.includes('%')) {
    try { decodeURIComponent(path); } catch { throw new GatewayError('invalid_request', 'malformed percent-encoding in path'); }
  }
}

/** A query parameter that carries the proxy key: `key`, in any case, however its name is encoded. */
export function isKeyParamName(decodedName: string): boolean {
  return decodedName.toLowerCase() === 'key';
}

/** Decodes what it can of a query part (`+` is a space; an escape run that is not UTF-8 stays as it is). */
function looseDecode(s: string): string {
  return s.replace(/\+/g, ' ').replace(/(?:%[0-9a-f]{2})+/gi, (run) => { try { return decodeURIComponent(run); } catch { return run; } });
}

/**
 * The query string to send upstream: the client's, byte for byte, minus every `key` parameter (a
 * client credential). A proxy key still left in it (`?q=sk-proxy-…`, `?key[]=…`, `;key=…`) is
 * refused rather than forwarded.
 */
export function upstreamQuery(query: string): string {
  if (query === '') return '';
  const kept = query.split('&').filter((kv) => !isKeyParamName(looseDecode(kv.split('=', 1)[0]!)));
  if (kept.some((kv) => looseDecode(kv).toLowerCase().includes(PROXY_KEY_PREFIX))) {
    throw new GatewayError('invalid_request', `the query string carries a proxy key (${PROXY_KEY_PREFIX}…) outside a "key" parameter; send it in a header: the gateway never forwards a proxy key`);
  }
  return kept.join('&');
}
