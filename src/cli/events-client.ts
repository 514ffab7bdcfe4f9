// Subscribes to the running daemon's request events (`GET /admin/events`, SSE, admin token) for
// `gateway monitor`. It finds the daemon through daemon.json, reconnects with backoff when the
// daemon stops or restarts (re-reading the admin token, which changes on every start), and reports
// its connection state so the UI can say plainly when no daemon runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayEvent } from '../daemon/observe/events.js';
import { SseParser } from '../daemon/http/sse.js';
import { FILES } from '../daemon/store/paths.js';
import { clientUrl, findDaemon, type DaemonInfo } from './daemon-client.js';
import { fetcherFor, localTrust } from './daemon-fetch.js';
import type { StoreStatusView } from '../daemon/store/store-health.js';

export type ConnectionStatus =
  | { state: 'connecting'; url?: string }
  | { state: 'connected'; url: string; pid: number; startedAt: string }
  | { state: 'no-daemon'; retryInMs: number }
  | { state: 'disconnected'; url: string; reason: string; retryInMs: number };

export interface EventsSubscription {
  close(): void;
  /** Resolves once closed. */
  done: Promise<void>;
}

export interface SubscribeOptions {
  dir: string;
  onEvent(event: GatewayEvent): void;
  onStatus(status: ConnectionStatus): void;
  /** Team mode: the daemon's shared store, on connecting and whenever its health changes. */
  onStore?(store: StoreStatusView): void;
  /** First retry delay; doubles up to maxBackoffMs, and resets after a connection that worked. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** The daemon pings every 15 s; silence for this long means the connection is dead. */
  idleTimeoutMs?: number;
  /** Where the daemon is, or undefined; injectable for tests. */
  locate?: (dir: string) => DaemonInfo | undefined;
}

const EVENT_TYPES = new Set(['started', 'first_byte', 'progress', 'finished', 'failed']);

/** One SSE `data:` payload → an event, or undefined for anything that does not look like one. */
export function parseEvent(data: string): GatewayEvent | undefined {
  let v: unknown;
  try { v = JSON.parse(data); } catch { return undefined; }
  if (!v || typeof v !== 'object') return undefined;
  const o = v as { type?: unknown; id?: unknown; time?: unknown };
  if (typeof o.type !== 'string' || !EVENT_TYPES.has(o.type) || typeof o.id !== 'string' || typeof o.time !== 'number') return undefined;
  return v as GatewayEvent;
}

/** A `store` event's payload, or undefined for anything that does not look like one. */
function parseStore(data: string): StoreStatusView | undefined {
  try {
    const v = JSON.parse(data) as Partial<StoreStatusView> | null;
    return v && typeof v.display === 'string' && typeof v.connected === 'boolean' ? (v as StoreStatusView) : undefined;
  } catch {
    return undefined;
  }
}

function readToken(dir: string): string | undefined {
  try { return readFileSync(join(dir, FILES.adminToken), 'utf8').trim() || undefined; } catch { return undefined; }
}

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve) => {
  if (signal.aborted) return resolve();
  const t = setTimeout(done, ms);
  function done() { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
  signal.addEventListener('abort', done, { once: true });
});

export function subscribeEvents(opts: SubscribeOptions): EventsSubscription {
  const min = opts.minBackoffMs ?? 250;
  const max = opts.maxBackoffMs ?? 2_000;
  const idleMs = opts.idleTimeoutMs ?? 40_000;
  const locate = opts.locate ?? findDaemon;
  const stop = new AbortController();

  /** One connection; resolves with why it ended (undefined when stopped). */
  async function connectOnce(d: DaemonInfo, token: string): Promise<{ reason: string; worked: boolean }> {
    const url = clientUrl(d.url);
    const conn = new AbortController();
    const onStop = () => conn.abort();
    stop.signal.addEventListener('abort', onStop, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const arm = () => { clearTimeout(idle); idle = setTimeout(() => conn.abort(new Error('no data from the daemon for a while')), idleMs); };
    let worked = false;
    try {
      arm();
      const res = await fetcherFor(localTrust(d))(`${url}/admin/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: conn.signal });
      if (res.status === 401) { await res.body?.cancel(); return { reason: 'the daemon refused the admin token', worked }; }
      if (!res.ok || !res.body) { await res.body?.cancel(); return { reason: `the daemon answered HTTP ${res.status}`, worked }; }
      worked = true;
      opts.onStatus({ state: 'connected', url, pid: d.pid, startedAt: d.startedAt });
      const parser = new SseParser();
      for await (const chunk of res.body) {
        arm();
        for (const ev of parser.push(chunk)) {
          if (ev.event === 'store') {
            const store = parseStore(ev.data);
            if (store) opts.onStore?.(store);
            continue;
          }
          const parsed = parseEvent(ev.data);
          if (parsed) opts.onEvent(parsed);
        }
      }
      return { reason: 'the daemon closed the connection', worked };
    } catch (e) {
      const err = e as Error;
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return { reason: cause === 'ECONNREFUSED' ? 'connection refused' : conn.signal.reason instanceof Error ? conn.signal.reason.message : err.message, worked };
    } finally {
      clearTimeout(idle);
      stop.signal.removeEventListener('abort', onStop);
    }
  }

  const done = (async () => {
    let delay = min;
    opts.onStatus({ state: 'connecting' });
    while (!stop.signal.aborted) {
      const d = locate(opts.dir);
      const token = d ? readToken(opts.dir) : undefined;
      if (!d || !token) {
        opts.onStatus({ state: 'no-daemon', retryInMs: delay });
      } else {
        const { reason, worked } = await connectOnce(d, token);
        if (stop.signal.aborted) break;
        if (worked) delay = min;
        opts.onStatus({ state: 'disconnected', url: clientUrl(d.url), reason, retryInMs: delay });
      }
      await sleep(delay, stop.signal);
      delay = Math.min(max, delay * 2);
    }
  })();

  return { close: () => stop.abort(), done };
}
