// One provider's keys as the daemon uses them: which key serves the next attempt (round-robin
// over the healthy ones, or the first healthy one in pool order), which rest after a 429 and
// until when, which the provider refused. Pure state: the caller gives the time.
import type { KeyOrder } from '../routing/settings.js';
import type { PoolSecret, SecretOrigin } from '../store/secrets.js';

export interface PoolKey { readonly label: string; readonly value: string }
export type PoolKeyState = 'ok' | 'resting' | 'refused';

/** What status, doctor and `providers keys` show of a key: never its value. */
export interface PoolKeyReport {
  label: string;
  /** At most the last 4 characters (none of a key shorter than 12). */
  masked: string;
  state: PoolKeyState;
  /** Resting: when it is used again (epoch ms). */
  until?: number;
  /** Refused: the provider's status (401 or 403). */
  status?: number;
  origin: SecretOrigin;
}

interface Entry extends PoolSecret {
  restUntil?: number;
  refusedStatus?: number;
}

/** How a key is shown anywhere: `…` and its last four characters, or `…` alone for a short one. */
export function maskKey(key: string): string {
  return key.length >= 12 ? `…${key.slice(-4)}` : '…';
}

export class KeyPool {
  private readonly entries: Entry[];
  private cursor = 0;

  /** A pool of `secrets` (in pool order); a key whose label and value `previous` held keeps its rest or refusal. */
  constructor(secrets: readonly PoolSecret[], previous?: KeyPool) {
    this.entries = secrets.map((s) => {
      const old = previous?.entries.find((e) => e.label === s.label && e.key === s.key);
      return {
        label: s.label, key: s.key, origin: s.origin,
        ...(old?.restUntil !== undefined ? { restUntil: old.restUntil } : {}),
        ...(old?.refusedStatus !== undefined ? { refusedStatus: old.refusedStatus } : {}),
      };
    });
    if (previous && this.entries.length) this.cursor = previous.cursor % this.entries.length;
  }

  get size(): number { return this.entries.length; }
  values(): string[] { return this.entries.map((e) => e.key); }
  first(): PoolSecret | undefined { return this.entries[0]; }

  private state(e: Entry, now: number): PoolKeyState {
    if (e.refusedStatus !== undefined) return 'refused';
    return e.restUntil !== undefined && e.restUntil > now ? 'resting' : 'ok';
  }

  /** The next healthy key not in `exclude`, by `order`; undefined when there is none. */
  pick(order: KeyOrder, now: number, exclude?: ReadonlySet<string>): PoolKey | undefined {
    const n = this.entries.length;
    const start = order === 'priority' ? 0 : this.cursor;
    for (let i = 0; i < n; i++) {
      const idx = (start + i) % n;
      const e = this.entries[idx]!;
      if (exclude?.has(e.label) || this.state(e, now) !== 'ok') continue;
      if (order === 'round-robin') this.cursor = (idx + 1) % n;
      return { label: e.label, value: e.key };
    }
    return undefined;
  }

  /**
   * The key for a caller that cannot move to another key (one attempt, no retry loop): a healthy
   * one as `pick` gives, else the first not refused, else the first; the provider's own answer then
   * tells the user what is wrong.
   */
  /** The key under `label` when it is healthy (a session's own key), without moving the turn. */
  healthy(label: string, now: number): PoolKey | undefined {
    const e = this.entries.find((x) => x.label === label);
    return e && this.state(e, now) === 'ok' ? { label: e.label, value: e.key } : undefined;
  }

  serve(order: KeyOrder, now: number): PoolKey | undefined {
    const healthy = this.pick(order, now);
    if (healthy) return healthy;
    const e = this.entries.find((x) => x.refusedStatus === undefined) ?? this.entries[0];
    return e ? { label: e.label, value: e.key } : undefined;
  }

  rest(label: string, untilMs: number): void {
    const e = this.entries.find((x) => x.label === label);
    if (e) e.restUntil = Math.max(e.restUntil ?? 0, untilMs);
  }

  refuse(label: string, status: number): void {
    const e = this.entries.find((x) => x.label === label);
    if (e) e.refusedStatus = status;
  }

  /** When the first resting key (not refused) wakes; undefined when none rests. */
  earliestRest(now: number): number | undefined {
    let min: number | undefined;
    for (const e of this.entries) {
      if (this.state(e, now) === 'resting' && (min === undefined || e.restUntil! < min)) min = e.restUntil;
    }
    return min;
  }

  states(now: number): PoolKeyReport[] {
    return this.entries.map((e) => {
      const state = this.state(e, now);
      return {
        label: e.label, masked: maskKey(e.key), state,
        ...(state === 'resting' ? { until: e.restUntil! } : {}),
        ...(state === 'refused' ? { status: e.refusedStatus! } : {}),
        origin: e.origin,
      };
    });
  }
}
