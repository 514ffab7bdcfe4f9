// Responses of the dashboard and its admin API: every one carries no-store, nosniff, no-referrer
// and a frame ban; HTML pages also get a CSP that allows only the dashboard's own script and style.
// None of them ever carries an Access-Control-* header.
import type { IncomingMessage, ServerResponse } from 'node:http';

const BASE_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

export const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
  + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * An error the admin API answers with: `{ error: { message, type, code } }`, like the rest of the
 * daemon, and `field` naming the request field that was wrong, when one was.
 */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly field?: string) {
    super(message);
    this.name = 'ApiError';
  }
}

const TYPE_OF_STATUS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  405: 'invalid_request_error', 409: 'invalid_request_error', 413: 'invalid_request_error', 415: 'invalid_request_error',
};

export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...BASE_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), ...extra });
  res.end(text);
}

export function sendApiError(res: ServerResponse, err: ApiError): void {
  sendJson(res, err.status, { error: { message: err.message, type: TYPE_OF_STATUS[err.status] ?? 'api_error', code: err.code, ...(err.field === undefined ? {} : { field: err.field }) } });
}

export function sendHtml(res: ServerResponse, status: number, html: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...BASE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(html)),
    'content-security-policy': PAGE_CSP, ...extra,
  });
  res.end(html);
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

export function sendAsset(req: IncomingMessage, res: ServerResponse, body: Buffer, type: string, etag: string): void {
  const headers = { ...BASE_HEADERS, 'cache-control': 'no-cache', etag, 'content-type': type };
  if (req.headers['if-none-match'] === etag) { res.writeHead(304, headers); res.end(); return; }
  res.writeHead(200, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

/** The whole body, or a 413 as soon as it passes `limit` bytes. */
async function readCapped(req: IncomingMessage, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ApiError(413, 'request_too_large', `request body is larger than ${limit} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts, size);
}

const JSON_LIMIT = 64 * 1024;

/** Reads a small JSON object body; anything else is a 400/413/415 that says what was wrong. */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = String(req.headers['content-type'] ?? '');
  const body = await readCapped(req, JSON_LIMIT);
  if (body.length === 0) return {};
  if (!type.includes('application/json')) throw new ApiError(415, 'unsupported_media_type', 'send the body as application/json');
  let parsed: unknown;
  try { parsed = JSON.parse(body.toString('utf8')); } catch (e) {
    throw new ApiError(400, 'invalid_json', `request body is not valid JSON: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ApiError(400, 'invalid_request', 'request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

const FORM_LIMIT = 4 * 1024;

/** Reads a small HTML form body (application/x-www-form-urlencoded), as the sign-in page posts it. */
export async function readFormBody(req: IncomingMessage): Promise<URLSearchParams> {
  const body = await readCapped(req, FORM_LIMIT);
  if (!String(req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) throw new ApiError(415, 'unsupported_media_type', 'send the form as application/x-www-form-urlencoded');
  return new URLSearchParams(body.toString('utf8'));
}
