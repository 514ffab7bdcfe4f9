// `gateway monitor --json` (and whenever stdout is not a terminal): one JSON object per line for
// each request that ends, joining what its start and end events said, ready for `jq`.
import type { GatewayEvent, RequestStarted, TokenUsage } from '../../../daemon/observe/events.js';

export interface RequestRecord {
  id: string;
  /** ISO time the request started. */
  time: string;
  key: string | null;
  keyId: string | null;
  mode: string | null;
  provider: string | null;
  model: string | null;
  method: string | null;
  path: string | null;
  stream: boolean | null;
  status: number;
  ok: boolean;
  ttfbMs: number | null;
  durationMs: number;
  requestBytes: number | null;
  outputBytes: number | null;
  usage: TokenUsage;
  error?: { code: string; message: string };
  /** The gateway refused it before calling a provider. */
  refused?: true;
  /** The key's own limit that refused it (its 429): budget, rpm, tpm or concurrency. */
  limit?: string;
  /** The attempts as x-gateway-route lists them (`provider/model[#label]=outcome, …`). */
  route?: string;
  /** The target that served, when a fallback served it elsewhere than `provider`/`model` say. */
  served?: { provider: string; model: string };
  /** Time waited between attempts, in ms. */
  waitedMs?: number;
  /** The label of the pool key that served. */
  keyLabel?: string;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Feeds events in; returns the record when one ends. Keeps only requests still in flight. */
export function createRecordJoiner(): (ev: GatewayEvent) => RequestRecord | undefined {
  const open = new Map<string, RequestStarted>();
  return (ev) => {
    if (ev.type === 'started') { open.set(ev.id, ev); return undefined; }
    if (ev.type === 'first_byte' && ev.stream !== undefined) {
      const s = open.get(ev.id);
      if (s) open.set(ev.id, { ...s, stream: ev.stream });
      return undefined;
    }
    if (ev.type !== 'finished' && ev.type !== 'failed') return undefined;
    const s = open.get(ev.id);
    open.delete(ev.id);
    return {
      id: ev.id,
      time: new Date(s?.time ?? ev.time - ev.durationMs).toISOString(),
      key: s?.keyName ?? null,
      keyId: s?.keyId ?? null,
      mode: s?.mode ?? null,
      provider: s?.provider ?? null,
      model: (ev.type === 'finished' ? s?.model ?? ev.model : s?.model) ?? null,
      method: s?.method ?? null,
      path: s?.path ?? null,
      stream: s?.stream ?? null,
      status: ev.status,
      ok: ev.type === 'finished',
      ttfbMs: ev.ttfbMs === null ? null : round(ev.ttfbMs),
      durationMs: round(ev.durationMs),
      requestBytes: s?.requestBytes ?? null,
      outputBytes: ev.type === 'finished' ? ev.outputBytes : null,
      usage: ev.usage,
      ...(ev.type === 'failed' ? { error: { code: ev.code, message: ev.message } } : {}),
      ...(ev.type === 'failed' && ev.refused ? { refused: true as const } : {}),
      ...(ev.type === 'failed' && ev.limit ? { limit: ev.limit } : {}),
      ...(ev.route !== undefined ? { route: ev.route } : {}),
      ...(ev.served !== undefined ? { served: ev.served } : {}),
      ...(ev.waitedMs !== undefined ? { waitedMs: round(ev.waitedMs) } : {}),
      ...(ev.keyLabel !== undefined ? { keyLabel: ev.keyLabel } : {}),
    };
  };
}
