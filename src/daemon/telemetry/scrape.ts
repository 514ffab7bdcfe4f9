// GET /metrics: open when the daemon listens on loopback only (whoever can connect is on this
// machine), and behind an admin credential (an admin key, or the local admin token from this
// machine: access/admin-auth.ts) when it listens elsewhere. Never on a request's path: the text is
// made when a scraper asks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyIndex } from '../access/auth.js';
import { adminCaller } from '../access/admin-auth.js';
import { GatewayError } from '../http/errors.js';
import { isLoopback } from '../http/exposure.js';
import { OPENMETRICS_TYPE, render, TEXT_TYPE, wantsOpenMetrics } from './exposition.js';
import type { MetricStore } from './store.js';

export const METRICS_PATH = '/metrics';

export function scrapeHandler(store: MetricStore, opts: { host: string; adminToken: string; keys: KeyIndex }) {
  const open = isLoopback(opts.host);
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (!open) {
      const caller = adminCaller(req, opts.adminToken, opts.keys);
      if ('refused' in caller) throw new GatewayError('invalid_api_key', `/metrics is behind an admin credential when the daemon listens beyond loopback: ${caller.refused}`);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new GatewayError('method_not_allowed', `use GET for ${METRICS_PATH}`);
    const openMetrics = wantsOpenMetrics(req.headers.accept);
    const body = render(store.read(), openMetrics);
    res.writeHead(200, { 'content-type': openMetrics ? OPENMETRICS_TYPE : TEXT_TYPE, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
