// Everything a request handler needs, built once by startDaemon and passed down explicitly.
import type { ProviderDescriptor } from '../providers/registry.js';
import type { Breaker } from './routing/breaker.js';
import type { Sessions } from './routing/sessions.js';
import type { RoutingSettings } from './routing/settings.js';
import type { CacheSettings } from './caching/settings.js';
import type { KeyIndex } from './access/auth.js';
import type { BodyLog } from './observe/body-log.js';
import type { EventBus } from './observe/events.js';
import type { ProviderKeys } from './access/provider-keys.js';
import type { ResponseStore } from './store/responses.js';
import type { StartSpan, Stats } from './observe/tracker.js';
import type { Upstreams } from './relay/upstream.js';
import type { Limiter } from './limits/limiter.js';
import type { PriceTable } from './observe/usage/prices.js';
import type { SharedStore } from './store/shared-store.js';
import type { AnswerGate } from './http/answer-gate.js';

export interface DaemonSettings {
  bodyLimitBytes: number;
  /** alias → `provider/model` (from config.json). */
  aliases: Record<string, string>;
  /** The `responses` section of config.json (retention, size cap), read by store/responses.ts. */
  responses?: unknown;
  /** Retries, fallbacks, the breaker (config.json `routing`, parsed by routing/settings.ts); defaults when absent. */
  routing?: RoutingSettings;
  /** The gateway's prompt-cache marks (config.json `cache`, parsed by caching/settings.ts); defaults when absent. */
  cache?: CacheSettings;
  /** The providers the user added (config.json): put into the registry at start and on every reload. */
  providers?: readonly ProviderDescriptor[];
  /** The price list (shipped, with config.json's `usage.prices`) budgets are charged by; the shipped one when absent. */
  prices?: PriceTable;
}

export interface DaemonContext {
  keys: KeyIndex;
  providerKeys: ProviderKeys;
  upstreams: Upstreams;
  bus: EventBus;
  stats: Stats;
  settings: DaemonSettings;
  /** Targets resting after repeated failures (routing/breaker.ts), for the daemon's life. */
  breaker: Breaker;
  /** Which target each session is held on after a fallback (routing/sessions.ts). */
  sessions: Sessions;
  /** Per-key budgets, rate and concurrency limits: reserve at admission, settle at the end. */
  limits: Limiter;
  /** Team mode: the PostgreSQL store the daemons share (`--store`); absent on a laptop (SQLite). */
  shared?: SharedStore;
  /** Team mode: holds each turn's answers until the usage journal has their rows (http/answer-gate.ts). */
  answers?: AnswerGate;
  /** Responses API answers kept for previous_response_id and GET /v1/responses/{id}: SQLite on a laptop, the shared store in team mode. */
  responses: ResponseStore;
  /** Set only when `usage.logBodies` is on: request paths check it once per request. */
  bodyLog?: BodyLog;
  /** Opens a request's trace span; set only while traces are exported (telemetry/), so without an exporter no span is made. */
  startSpan?: StartSpan;
  /** Unix seconds; injectable so tests can pin `created`. */
  now: () => number;
  /** Milliseconds since the epoch, what expiry is judged by (keys, stored responses); injectable. */
  clock: () => number;
}
