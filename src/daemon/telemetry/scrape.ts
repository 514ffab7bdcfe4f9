// GET /metrics: open when the daemon listens on loopback only (whoever can connect is on this
// machine), and behind the admin token (`Authorization: Bearer <state dir>/admin-token`) when it
// listens elsewhere. Never on a request's path: the text is made when a scraper asks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAdminRequest } from '../admin/admin.js';
import { GatewayError } from '../http/errors.js';
import { OPENMETRICS_TYPE, render, TEXT_TYPE, wantsOpenMetrics } from './exposition.js';
import type { MetricStore } from './store.js';

export const METRICS_PATH = '/metrics';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/i;

/** Whether the daemon's listening host is loopback only (`0.0.0.0`, `::` and a LAN address are not). */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host.replace(/^\[|\]$/g, ''));
}

export function scrapeHandler(store: MetricStore, opts: { host: string; adminToken: string }) {
  const open = isLoopbackHost(opts.host);
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (!open && !isAdminRequest(req, opts.adminToken)) {
      throw new GatewayError('invalid_api_key', '/metrics needs the daemon admin token (Authorization: Bearer <state dir>/admin-token) when the daemon listens beyond loopback');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new GatewayError('method_not_allowed', `use GET for ${METRICS_PATH}`);
    const openMetrics = wantsOpenMetrics(req.headers.accept);
    const body = render(store.read(), openMetrics);
    res.writeHead(200, { 'content-type': openMetrics ? OPENMETRICS_TYPE : TEXT_TYPE, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
