// The shared store's health as the admin API reports it (GET /admin/status `store`, the /admin/events
// `store` event) and the words every display uses for it: `gateway status`, `gateway doctor`, the
// monitor and the dashboard. Pure: the daemon's SharedStore measures, this says it.

export interface StoreStatusView {
  /** `user@host:port/database`, never the password. */
  display: string;
  /** This daemon's name in the team. */
  daemonId: string;
  connected: boolean;
  /** While unreachable: since when (ISO); null while connected. */
  downSince: string | null;
  /** While unreachable: why, one line without the password. */
  lastError: string | null;
  /** Daemons whose heartbeat the store last showed alive in the last minute, this one included. */
  daemons: number;
  /** Limit settlements made while the store was unreachable, not yet written back to it. */
  unreconciled: number;
}

/** `2026-11-27T09:30:12Z`: to the second. */
export function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `degraded: store unreachable since 2026-11-27T09:30:12Z`, or `connected`. */
export function storeHealthText(s: Pick<StoreStatusView, 'connected' | 'downSince'>): string {
  if (s.connected) return 'connected';
  return `degraded: store unreachable${s.downSince ? ` since ${isoSecond(Date.parse(s.downSince))}` : ''}`;
}
