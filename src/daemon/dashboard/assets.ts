// The dashboard's static files (assets/dashboard in the package): read once, served with an ETag.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const DIR = new URL('../../../assets/dashboard/', import.meta.url);

const TYPES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};

export interface Asset { body: Buffer; type: string; etag: string }

let cache: Map<string, Asset> | undefined;

export function dashboardAssets(): Map<string, Asset> {
  if (cache) return cache;
  const out = new Map<string, Asset>();
  for (const [name, type] of Object.entries(TYPES)) {
    try {
      const body = readFileSync(new URL(name, DIR));
      out.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` });
    } catch { /* a missing file is a 404; the package always ships them */ }
  }
  cache = out;
  return out;
}
