// Per-key limits on the request path: a request of a key with limits reserves its worst case
// (estimate.ts) before anything goes upstream, is refused in its client's protocol when that does
// not fit, and settles what it really used when its record ends. A key without limits costs
// nothing here. The store (store.ts) opens on the first request of a key with limits.
import { join } from 'node:path';
import { GatewayError } from '../http/errors.js';
import type { TokenUsage } from '../observe/events.js';
import type { TrackEnd } from '../observe/tracker.js';
import { bareModel, requestCost, type PriceTable } from '../observe/usage/prices.js';
import { migrate } from '../observe/usage/schema.js';
import { USAGE_DB_FILE } from '../observe/usage/store.js';
import type { KeyRecord } from '../store/keys.js';
import { openDatabase } from '../store/sqlite.js';
import { formatBudget, hasLimits, LIMIT_KINDS, usd, WINDOW_MS, type KeyLimits, type LimitKind } from './limits.js';
import { SqliteLimitStore } from './sqlite-store.js';
import { StoreUnreachable, type Claim, type LimitStore, type Refused, type Standing, type Verdict } from './store.js';

/**
 * How long an answer may keep streaming after its headers: a claim is held this long past the
 * upstream timeouts. The longest outputs (128,000 tokens) stream for about 45 minutes at ~50 tokens
 * a second; an hour covers them, and a claim is released earlier only when its request vanished.
 */
export const LONGEST_ANSWER_MS = 60 * 60_000;

export interface LimiterOptions {
  stateDir: string;
  clock: () => number;
  /** The price list budgets are charged by (the usage history's). */
  prices: () => PriceTable;
  /** How long an unsettled claim is held: the upstream timeout, and a margin. */
  holdMs: () => number;
  log: (line: string) => void;
  /** Another store (tests, a shared one); default: SQLite in the state directory's usage database. */
  open?: () => Promise<LimitStore>;
  /** Team mode: what `gateway status` shows of the limits (settlements not yet written back to the shared store). */
  report?: () => Promise<{ unreconciled: number }>;
}

/** What an admitted request holds; settled once, from its record's end. */
export interface Hold {
  readonly claim: Claim;
  readonly input: number;
  settle(end: TrackEnd): void;
}

export class Limiter {
  private store: Promise<LimitStore> | undefined;

  constructor(private readonly o: LimiterOptions) {}

  /** The price list budgets are charged by, now. */
  prices(): PriceTable { return this.o.prices(); }

  /** Opens the store now rather than on the first request of a key with limits (team mode: it has work of its own at start). */
  warm(): void { this.open().catch(() => {}); }

  /** Team mode's report of the limits; undefined on a laptop. */
  report(): Promise<{ unreconciled: number }> | undefined { return this.o.report?.(); }

  private open(): Promise<LimitStore> {
    this.store ??= (this.o.open ?? (async () => {
      const db = await openDatabase(join(this.o.stateDir, USAGE_DB_FILE), { incrementalVacuum: true, setup: migrate });
      return new SqliteLimitStore(db, this.o.clock);
    }))().catch((e: unknown) => {
      this.store = undefined; // tried again on the next request
      this.o.log(`limits: the limit store could not be opened: ${(e as Error).message}`);
      throw new GatewayError('limits_unavailable', 'this proxy key has limits, and the gateway cannot read its limit store right now; try again shortly');
    });
    return this.store;
  }

  /**
   * Reserves `worst` for request `requestId` of `key` (whose limits are set), or throws the refusal.
   * `input` is the input part of `worst.tokens`, kept to settle a request that ends without usage.
   */
  async reserve(key: KeyRecord, limits: KeyLimits, requestId: string, worst: { input: number; output: number; usd: number }, free = false): Promise<Hold> {
    const store = await this.open();
    const at = this.o.clock();
    const claim: Claim = {
      requestId, keyId: key.id, at, tokens: worst.input + worst.output,
      usd: limits.budget ? worst.usd : 0, expiresAt: at + this.o.holdMs(),
    };
    let verdict: Verdict;
    try {
      verdict = await store.reserve(limits, claim);
    } catch (e) {
      if (e instanceof StoreUnreachable) throw storeRefusal(key.name, e);
      throw e;
    }
    if (!verdict.ok) throw refusal(key.name, limits, verdict);
    let settled = false;
    return {
      claim, input: worst.input,
      settle: (end) => {
        if (settled) return;
        settled = true;
        let used;
        try {
          used = free ? { tokens: 0, usd: 0 } : this.used(claim, worst.input, end);
        } catch (e) {
          used = { tokens: claim.tokens, usd: claim.usd }; // never a request's end broken by its accounting
          this.o.log(`limits: could not price request ${requestId}: ${(e as Error).message}; charged its reservation`);
        }
        store.settle(claim, used).catch((e: unknown) => {
          this.o.log(`limits: could not record what request ${requestId} of key "${key.name}" used: ${(e as Error).message}`);
        });
      },
    };
  }

  /** What a key has used and has left; undefined for a key without limits. */
  async standing(key: KeyRecord): Promise<Standing | undefined> {
    const limits = key.limits;
    if (!hasLimits(limits)) return undefined;
    return (await this.open()).standing(key.id, limits, this.o.clock());
  }

  close(): Promise<void> {
    return this.store?.then((s) => s.close(), () => {}) ?? Promise.resolve();
  }

  /**
   * What an ended request used, priced as the usage history prices it. A provider that reported
   * usage is taken at its word. Without it: an answer the provider refused (an error status)
   * costs nothing; one that ended while the provider worked (the client left, the stream broke
   * off, the provider timed out) or a good answer without counts costs its input estimate plus
   * what reached the client (a token per 4 bytes), never more than the claim.
   */
  private used(claim: Claim, input: number, end: TrackEnd): { tokens: number; usd: number } {
    const u = end.usage;
    // Cut short while the provider worked: what it reported so far (Anthropic's input comes
    // first, its output count only at the end), and at least what reached the client.
    const cut = end.status >= 400 && PROVIDER_WORKED.has(end.code ?? '');
    const known = u.inputTokens !== undefined && u.outputTokens !== undefined && !cut;
    let usage: TokenUsage;
    if (known) usage = u;
    else if (end.status >= 400 && !cut) usage = { inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 };
    else usage = { ...u, inputTokens: u.inputTokens ?? input, outputTokens: Math.max(u.outputTokens ?? 0, Math.ceil(end.outputBytes / 4)) };
    const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
    const prices = this.o.prices();
    const reported = end.model ? bareModel(end.model) : null;
    const priced = (reported ? requestCost(prices, end.provider, reported, usage, 200, claim.at) : null)
      ?? (end.requested ? requestCost(prices, end.provider, bareModel(end.requested), usage, 200, claim.at) : null);
    const cost = priced ?? claim.usd;
    // An estimate is never charged above what was held for it (a key without a budget holds no USD).
    return { tokens, usd: known || claim.usd === 0 ? cost : Math.min(cost, claim.usd) };
  }
}

/** The limit a refusal names (its `x-gateway-limit`), for the request's record. */
export function limitOf(e: GatewayError): LimitKind | undefined {
  const v = e.headers?.['x-gateway-limit'];
  return (LIMIT_KINDS as readonly string[]).includes(v ?? '') ? (v as LimitKind) : undefined;
}

/** A key with a budget asked for a model the price list cannot charge. */
export function unpriced(keyName: string, model: string): GatewayError {
  return unchargeable(keyName, `model "${model}" has no price in the gateway's price list`);
}

/** A key with a budget made a native call whose model cannot be named, so nothing can price it. */
export function unnamedModel(keyName: string, call: string): GatewayError {
  return unchargeable(keyName, `${call} names no model the gateway can price`);
}

function unchargeable(keyName: string, why: string): GatewayError {
  return new GatewayError('model_unpriced', `proxy key "${keyName}" has a budget, and ${why}, so its cost could not be charged to it; add its prices under usage.prices in config.json (USD per million tokens: {"input": …, "output": …}) or use a priced model`);
}

/** Failures after which the provider may have billed work it did (as opposed to refusing the request). */
const PROVIDER_WORKED = new Set(['client_closed', 'upstream_interrupted', 'upstream_timeout']);

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** How soon a client refused for an unreachable store may try again: the store's probe backs off to 5 s. */
const STORE_RETRY_S = 5;

/** A key set to fail closed, while the shared store is unreachable: 503, in the client's protocol shape. */
function storeRefusal(name: string, e: StoreUnreachable): GatewayError {
  const since = e.since === undefined ? '' : ` since ${new Date(e.since).toISOString()}`;
  const err = new GatewayError('limits_unavailable', `proxy key "${name}" is set to fail closed, and the gateway's shared store (${e.where}) is unreachable${since}, so its limits cannot be checked; it is refused rather than served on this daemon's share of its limits; retry in ${STORE_RETRY_S} s`);
  err.headers = { 'x-gateway-limit': 'store', 'retry-after': String(STORE_RETRY_S) };
  return err;
}

/** `(its share of 60, with 3 daemons running)`: what a refusal decided on one daemon's share says. */
function shareText(r: Refused, what: string): string {
  return r.share ? ` on this gateway daemon while the shared store is unreachable (its share of ${what}, with ${r.share.daemons} daemon${r.share.daemons === 1 ? '' : 's'} running)` : '';
}

/** The refusal a client sees, in its protocol's shape (the server's error boundary writes it). */
export function refusal(name: string, limits: KeyLimits, r: Refused): GatewayError {
  const headers: Record<string, string> = { 'x-gateway-limit': r.limit };
  let message: string;
  switch (r.limit) {
    case 'budget': {
      const b = limits.budget!;
      const reset = r.resetAt === undefined ? 'it is a total budget and does not reset' : `it resets at ${new Date(r.resetAt).toISOString()}`;
      const used = r.share
        ? `proxy key "${name}" may spend ${usd(r.share.max)}${shareText(r, `its ${formatBudget(b)} budget`)} and has used ${usd(r.used)} of it`
        : `proxy key "${name}" has used ${usd(r.used)} of its ${formatBudget(b)} budget`;
      message = used
        + (r.held > 0 ? ` (and requests in flight hold ${usd(r.held)} more)` : '')
        + `; this request could cost up to ${usd(r.asked)}; ${reset}`
        // Team mode: part of what is held is another daemon's lease, which it may not use (pg-store.ts).
        + (r.retryAfterMs === undefined ? '' : `; part of what is held may come back: retry in ${seconds(r.retryAfterMs)} s`);
      if (r.resetAt !== undefined) headers['x-gateway-limit-reset'] = new Date(r.resetAt).toISOString();
      // No retry-after (an SDK would sleep on it until the period ends), and the SDKs' own retries are
      // told not to; unless part of it may come back within a second.
      Object.assign(headers, retryHeaders(r.retryAfterMs));
      const e = new GatewayError('budget_exceeded', message);
      e.headers = headers;
      return e;
    }
    case 'rpm':
      message = `proxy key "${name}" is limited to ${r.share?.max ?? r.max} requests a minute${shareText(r, String(r.max))} and made ${r.used} in the last minute; retry in ${seconds(r.retryAfterMs!)} s`;
      break;
    case 'tpm':
      message = r.asked > (r.share?.max ?? r.max)
        ? `this request may use up to ${r.asked} tokens (its input and output cap), more than proxy key "${name}" may use in a minute (${r.share?.max ?? r.max}${shareText(r, String(r.max))}), so it runs only when nothing else of the key's is in the last minute; retry in ${seconds(r.retryAfterMs ?? WINDOW_MS)} s, or lower its output cap (max_tokens), or raise the key's tpm`
        : `proxy key "${name}" is limited to ${r.share?.max ?? r.max} tokens a minute${shareText(r, String(r.max))}: ${r.used} used and ${r.held} held by requests in flight in the last minute, and this request may use up to ${r.asked}; retry in ${seconds(r.retryAfterMs!)} s`;
      break;
    case 'concurrency':
      message = `proxy key "${name}" may have ${r.share?.max ?? r.max} requests in flight at once${shareText(r, String(r.max))}, and has ${r.used}; retry in 1 s`;
      break;
    default: {
      const never: never = r.limit;
      return never;
    }
  }
  Object.assign(headers, retryHeaders(r.retryAfterMs));
  const e = new GatewayError('rate_limited', message);
  e.headers = headers;
  return e;
}

/** When to retry a refusal; without a time, that it will not fit however long the client waits. */
function retryHeaders(ms: number | undefined): Record<string, string> {
  return ms === undefined
    ? { 'x-should-retry': 'false' }
    : { 'retry-after': String(seconds(ms)), 'retry-after-ms': String(Math.max(0, Math.ceil(ms))) };
}
