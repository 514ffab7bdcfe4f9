// Everything a request handler needs, built once by startDaemon and passed down explicitly.
import type { KeyIndex } from './auth.js';
import type { BodyLog } from './body-log.js';
import type { EventBus } from './events.js';
import type { ProviderKeys } from './provider-keys.js';
import type { Stats } from './tracker.js';
import type { Upstreams } from './upstream.js';

export interface DaemonSettings {
  bodyLimitBytes: number;
  /** alias → `provider/model` (from config.json). */
  aliases: Record<string, string>;
}

export interface DaemonContext {
  keys: KeyIndex;
  providerKeys: ProviderKeys;
  upstreams: Upstreams;
  bus: EventBus;
  stats: Stats;
  settings: DaemonSettings;
  /** Set only when `usage.logBodies` is on: request paths check it once per request. */
  bodyLog?: BodyLog;
  /** Unix seconds; injectable so tests can pin `created`. */
  now: () => number;
}
