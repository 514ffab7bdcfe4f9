// Typed request-lifecycle events for the monitor, the dashboard and usage accounting.
// Publishing is synchronous and cheap (a loop over subscribers); a subscriber that needs to do I/O
// must queue the event itself and never throw back into the request path.
import type { Usage } from '../../providers/ir/types.js';
import type { ProviderId } from '../../providers/types.js';
import type { LimitKind } from '../limits/limits.js';

/** The door a request came in by: a native prefix, the Chat door (`unified`), the Messages, Responses or Gemini door. */
export type RequestMode = 'unified' | 'native' | 'messages' | 'responses' | 'gemini';

/**
 * A request's tokens as the tracker counts them, in IR usage's one convention (providers/ir/types.ts
 * `Usage`), whichever door and provider:
 * - `inputTokens`: the whole prompt, cache reads and cache writes included;
 * - `cachedTokens` (cache reads), `cacheWriteTokens` (cache writes, every TTL): parts of inputTokens;
 * - `cacheWrite1hTokens`: the part of cacheWriteTokens written with a 1-hour TTL (the rest: 5 minutes);
 * - `outputTokens` includes `reasoningTokens`.
 * So the uncached input is inputTokens - cachedTokens - cacheWriteTokens. A count left out is unknown.
 */
export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
}

/** The cache hit ratio: cache reads over all input tokens (which include them); undefined without input. */
export function cacheHitRatio(cachedTokens: number | undefined, inputTokens: number | undefined): number | undefined {
  return inputTokens ? (cachedTokens ?? 0) / inputTokens : undefined;
}

/**
 * IR usage (a protocol's usage reader's, providers/protocols/<p>/usage.ts) → the tracker's counts:
 * the one conversion, whichever path the answer took. A count the provider left unknown stays out.
 */
export function irUsageToTokens(u: Usage | undefined): TokenUsage {
  if (!u) return {};
  const out: TokenUsage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens };
  if (u.cachedInputTokens !== undefined) out.cachedTokens = u.cachedInputTokens;
  if (u.cacheWriteTokens !== undefined) out.cacheWriteTokens = u.cacheWriteTokens;
  if (u.cacheWrite1hTokens !== undefined) out.cacheWrite1hTokens = u.cacheWrite1hTokens;
  if (u.reasoningTokens !== undefined) out.reasoningTokens = u.reasoningTokens;
  return out;
}

/**
 * One call to a provider while a door's request ran (an attempt): its target (`provider/model`),
 * the pool key's label ('' for a provider with one key), when it started and ended (ms since the
 * request's start), and how it ended (the provider's status, `connect-error`, `timeout`…).
 * For traces' attempt spans and the client-side metrics (telemetry/).
 */
export interface AttemptTiming {
  target: string;
  keyLabel: string;
  startMs: number;
  endMs: number;
  outcome: string;
}

export interface RequestStarted {
  type: 'started';
  id: string;
  time: number; // ms since epoch
  keyId: string;
  keyName: string;
  mode: RequestMode;
  /** null when the request was refused before a provider was known (bad key, unknown model, bad JSON). */
  provider: ProviderId | null;
  model: string | null;
  method: string;
  path: string; // path without the query string (no credentials ever)
  stream: boolean;
  requestBytes: number;
  /** The client's request headers with every credential masked (maskHeaders). */
  headers?: Record<string, string>;
  /** The session the client named (routing/sessions.ts), as session-tag.ts keeps it: a UUID, or a short hash. */
  session?: string;
  /** The client's address (http/peer.ts: a trusted proxy's X-Forwarded-For, else the TCP peer's). */
  client?: string;
}

export interface RequestFirstByte {
  type: 'first_byte';
  id: string;
  time: number;
  ttfbMs: number;
  /** Whether the response is a stream, when only the response tells (native requests whose body is not read). */
  stream?: boolean;
}

export interface RequestProgress {
  type: 'progress';
  id: string;
  time: number;
  chunks: number;
  outputBytes: number;
  outputTokens?: number;
}

export interface RequestFinished {
  type: 'finished';
  id: string;
  time: number;
  status: number;
  durationMs: number;
  ttfbMs: number | null;
  outputBytes: number;
  usage: TokenUsage;
  /** The model the provider says it served (its own id, e.g. `claude-sonnet-4-5-20250929`), when known. */
  model: string | null;
  /**
   * A door's request served elsewhere than it started (a fallback): the provider and model id of
   * the target that answered; and `route`, its attempts as x-gateway-route lists them.
   */
  served?: { provider: string; model: string };
  route?: string;
  /** Time waited between attempts (retry-after, backoff), when there was any. */
  waitedMs?: number;
  /** The label of the provider key that served, when its provider has a key pool (never the key). */
  keyLabel?: string;
  /** Chunks written to the client (a stream's events; 1 for a whole answer). */
  chunks?: number;
  /** Each call to a provider, in order, when the request made any through a door (not set for native requests). */
  attempts?: AttemptTiming[];
}

export interface RequestFailed {
  type: 'failed';
  id: string;
  time: number;
  status: number;
  durationMs: number;
  ttfbMs: number | null;
  code: string;
  message: string;
  usage: TokenUsage;
  /** The gateway refused the request before calling a provider (bad key, unknown model, bad JSON). */
  refused?: true;
  /** The key's own limit that refused it (limits/limits.ts): its status is 429. */
  limit?: LimitKind;
  /**
   * A door's request served elsewhere than it started (a fallback): the provider and model id of
   * the target that answered; and `route`, its attempts as x-gateway-route lists them.
   */
  served?: { provider: string; model: string };
  route?: string;
  /** Time waited between attempts (retry-after, backoff), when there was any. */
  waitedMs?: number;
  /** The label of the provider key that served, when its provider has a key pool (never the key). */
  keyLabel?: string;
  /** Each call to a provider, in order, when the request made any through a door (not set for native requests). */
  attempts?: AttemptTiming[];
}

export type GatewayEvent = RequestStarted | RequestFirstByte | RequestProgress | RequestFinished | RequestFailed;

export type Subscriber = (event: GatewayEvent) => void;

export class EventBus {
  private subs = new Set<Subscriber>();

  /** `first`: before those already subscribed (team mode's usage journal, which answers wait for). */
  subscribe(fn: Subscriber, first = false): () => void {
    if (first) this.subs = new Set([fn, ...this.subs]);
    else this.subs.add(fn);
    return () => { this.subs.delete(fn); };
  }

  get size(): number { return this.subs.size; }

  publish(event: GatewayEvent): void {
    if (this.subs.size === 0) return;
    for (const fn of this.subs) {
      try { fn(event); } catch { /* a broken subscriber never breaks a request */ }
    }
  }
}

/** A header whose name says it may carry a credential (authorization, x-api-key, cookie, …). */
const CREDENTIAL_HEADER = /key|token|secret|auth|cookie|session|signature|passw/i;
const MAX_HEADERS = 40;
const MAX_HEADER_VALUE = 200;

/** Header names already classified, so the test runs once per name (bounded: names are client-chosen). */
const credentialNames = new Map<string, boolean>();
function isCredentialHeader(name: string): boolean {
  let hit = credentialNames.get(name);
  if (hit === undefined) {
    hit = CREDENTIAL_HEADER.test(name);
    if (credentialNames.size < 1000) credentialNames.set(name, hit);
  }
  return hit;
}

/**
 * Request headers for the monitor's details view: credentials reduced to their scheme and last four
 * characters (`Bearer …abcd`), long values cut, at most 40 headers; never a request or response body.
 */
export function maskHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const name in headers) {
    const raw = headers[name];
    if (raw === undefined) continue;
    if (++n > MAX_HEADERS) break;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (isCredentialHeader(name)) {
      const scheme = /^(bearer|basic|token)\s+/i.exec(value)?.[0] ?? '';
      const secret = value.slice(scheme.length).trim();
      out[name] = `${scheme}${secret.length > 12 ? `…${secret.slice(-4)}` : '…'}`;
    } else {
      out[name] = value.length > MAX_HEADER_VALUE ? `${value.slice(0, MAX_HEADER_VALUE)}…` : value;
    }
  }
  return out;
}

/** Minimum gap between two progress events of one stream, so a fast stream cannot flood subscribers. */
export const PROGRESS_INTERVAL_MS = 100;
