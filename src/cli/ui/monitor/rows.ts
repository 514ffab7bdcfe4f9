// Request rows built from daemon events (pure): one row per request id, filled in as its started,
// first_byte, progress and finished/failed events arrive, plus the counters those events move.
import type { GatewayEvent, RequestMode, TokenUsage } from '../../../daemon/observe/events.js';
import type { LimitKind } from '../../../daemon/limits/limits.js';
import type { ProviderId } from '../../../providers/types.js';

export type RowState = 'live' | 'ok' | 'error' | 'lost';

export interface Row {
  seq: number;
  id: string;
  start: number;
  keyName: string | null;
  keyId: string | null;
  mode: RequestMode | null;
  provider: ProviderId | null;
  model: string | null;
  method: string | null;
  path: string | null;
  stream: boolean | null;
  requestBytes: number | null;
  headers: Record<string, string> | null;
  state: RowState;
  status: number | null;
  ttfbMs: number | null;
  /** Event time of the first byte, for the live tokens/s. */
  firstByteAt: number | null;
  durationMs: number | null;
  chunks: number;
  outputBytes: number;
  /** Output tokens counted so far while streaming. */
  liveTokens: number | null;
  usage: TokenUsage;
  error: { code: string; message: string } | null;
  /** The gateway refused it before calling a provider (bad key, unknown model…). */
  refused: boolean;
  /** The key's own limit that refused it (a 429). */
  limit: LimitKind | null;
  end: number | null;
  /** The attempts as x-gateway-route lists them (`provider/model[#label]=outcome, …`), once it ended. */
  route: string | null;
  /** Where a fallback served it, when that is not where it started. */
  served: { provider: string; model: string } | null;
  /** Time waited between attempts (retry-after, backoff). */
  waitedMs: number | null;
  /** The label of the pool key that served it. */
  keyLabel: string | null;
}

function blankRow(seq: number, id: string, start: number): Row {
  return {
    seq, id, start, keyName: null, keyId: null, mode: null, provider: null, model: null, method: null, path: null,
    stream: null, requestBytes: null, headers: null, state: 'live', status: null, ttfbMs: null, firstByteAt: null,
    durationMs: null, chunks: 0, outputBytes: 0, liveTokens: null, usage: {}, error: null, refused: false, limit: null, end: null,
    route: null, served: null, waitedMs: null, keyLabel: null,
  };
}

function countRate(rate: Array<[number, number]>, time: number): Array<[number, number]> {
  const sec = Math.floor(time / 1000);
  const out = rate.filter(([s]) => s > sec - 60);
  const last = out[out.length - 1];
  if (last && last[0] === sec) out[out.length - 1] = [sec, last[1] + 1];
  else out.push([sec, 1]);
  return out;
}

/** `tokensIn` counts every prompt token, the cache reads (`cacheRead`) and writes (`cacheWrite`) included. */
export interface Totals { requests: number; errors: number; tokensIn: number; tokensOut: number; cacheRead: number; cacheWrite: number }

/** Mutable working copy for one batch of events; keeps the reducer linear in the batch size. */
export interface Work {
  live: Map<string, Row>;
  done: Row[];
  newlyDone: Row[];
  totals: Totals;
  rate: Array<[number, number]>;
  nextSeq: number;
}

export function applyEvent(w: Work, ev: GatewayEvent): void {
  switch (ev.type) {
    case 'started': {
      const row = blankRow(w.nextSeq++, ev.id, ev.time);
      Object.assign(row, {
        keyName: ev.keyName, keyId: ev.keyId, mode: ev.mode, provider: ev.provider, model: ev.model, method: ev.method,
        path: ev.path, stream: ev.stream, requestBytes: ev.requestBytes, headers: ev.headers ?? null,
      });
      w.live.set(ev.id, row);
      w.totals.requests++;
      w.rate = countRate(w.rate, ev.time);
      return;
    }
    case 'first_byte': {
      const row = w.live.get(ev.id);
      if (row) w.live.set(ev.id, { ...row, ttfbMs: ev.ttfbMs, firstByteAt: ev.time, stream: ev.stream ?? row.stream });
      return;
    }
    case 'progress': {
      const row = w.live.get(ev.id);
      if (row) w.live.set(ev.id, { ...row, chunks: ev.chunks, outputBytes: ev.outputBytes, liveTokens: ev.outputTokens ?? row.liveTokens });
      return;
    }
    case 'finished':
    case 'failed': {
      let row = w.live.get(ev.id);
      w.live.delete(ev.id);
      if (!row) {
        // Started before the monitor attached: show what the end event tells.
        row = blankRow(w.nextSeq++, ev.id, ev.time - ev.durationMs);
        w.totals.requests++;
        w.rate = countRate(w.rate, ev.time);
      }
      const end: Row = {
        ...row, status: ev.status, durationMs: ev.durationMs, ttfbMs: ev.ttfbMs ?? row.ttfbMs, usage: ev.usage, end: ev.time,
        state: ev.type === 'finished' ? 'ok' : 'error',
        error: ev.type === 'failed' ? { code: ev.code, message: ev.message } : null,
        refused: ev.type === 'failed' && ev.refused === true,
        limit: ev.type === 'failed' ? ev.limit ?? null : null,
        route: ev.route ?? null, served: ev.served ?? null, waitedMs: ev.waitedMs ?? null, keyLabel: ev.keyLabel ?? null,
        ...(ev.type === 'finished' ? { outputBytes: ev.outputBytes, model: row.model ?? ev.model } : {}),
      };
      w.totals.tokensIn += ev.usage.inputTokens ?? 0;
      w.totals.tokensOut += ev.usage.outputTokens ?? 0;
      w.totals.cacheRead += ev.usage.cachedTokens ?? 0;
      w.totals.cacheWrite += ev.usage.cacheWriteTokens ?? 0;
      if (ev.type === 'failed') w.totals.errors++;
      w.done.push(end);
      w.newlyDone.push(end);
      return;
    }
    default: { const never: never = ev; return never; }
  }
}
