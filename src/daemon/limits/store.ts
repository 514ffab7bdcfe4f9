// The storage boundary of per-key limits: what a store must do so that a key's budget, request
// and token windows and concurrency hold exactly, however many requests run at once. A request
// reserves its worst case (a claim) before anything goes upstream and settles what it really
// used when it ends. The laptop's store is SQLite (sqlite-store.ts); a shared store implements the
// same calls as atomic single-row updates (a window's counter raised only where it still fits,
// claims as rows, settlement idempotent by request id).
import type { BudgetPeriod, KeyLimits, LimitKind } from './limits.js';

/** What one admitted request holds against its key's limits until it settles. */
export interface Claim {
  readonly requestId: string;
  readonly keyId: string;
  /** When the request was admitted (ms since the epoch): the minute and the budget period it counts in. */
  readonly at: number;
  /** Worst case: the input's estimate plus the output cap. */
  readonly tokens: number;
  /** Worst case in USD (those tokens at the model's dearest rates); 0 for a key without a budget. */
  readonly usd: number;
  /** A claim never settled (its request vanished) is released then. */
  readonly expiresAt: number;
}

/** What a request really used, as the provider reported it and the price list bills it. */
export interface Used {
  tokens: number;
  usd: number;
}

export interface Refused {
  ok: false;
  limit: LimitKind;
  /** The limit (USD, requests a minute, tokens a minute, requests at once). */
  max: number;
  /** Settled use in the limit's unit: spend in the period, requests or tokens in the last minute, requests in flight. */
  used: number;
  /** What requests still in flight hold on top of `used` (budget and tpm). */
  held: number;
  /** What this request would have taken. */
  asked: number;
  /** When the request would fit, from the window (rpm, tpm, concurrency); absent when it never will in this period. */
  retryAfterMs?: number;
  /** When the budget's period starts again (absent for a total budget). */
  resetAt?: number;
  /**
   * Team mode, while the shared store is unreachable: this daemon decided alone, on its share of
   * the limit (`max` stays the key's limit; `used` and `held` are this daemon's, against `share.max`).
   */
  share?: { max: number; daemons: number };
}

export type Verdict = { ok: true } | Refused;

/** Thrown by team mode's store for a key set to fail closed while the shared store is unreachable. */
export class StoreUnreachable extends Error {
  /** `where`: the store as `user@host:port/database`; `since`: when it was found unreachable (ms since the epoch). */
  constructor(readonly where: string, readonly since: number | undefined) {
    super(`the shared store at ${where} is unreachable${since === undefined ? '' : ` since ${new Date(since).toISOString()}`}`);
    this.name = 'StoreUnreachable';
  }
}

/** What a key has used and has left of each of its limits. */
export interface Standing {
  budget?: { max: number; period: BudgetPeriod; spent: number; held: number; left: number; resetAt?: number };
  rpm?: { max: number; used: number };
  tpm?: { max: number; used: number };
  concurrency?: { max: number; used: number };
}

export interface LimitStore {
  /** Holds `claim` against every limit in `limits` if it fits them all, atomically; else says which does not. */
  reserve(limits: KeyLimits, claim: Claim): Promise<Verdict>;
  /** Replaces the claim by what the request used and releases it; a second settlement of the same request changes nothing. */
  settle(claim: Claim, used: Used): Promise<void>;
  standing(keyId: string, limits: KeyLimits, now: number): Promise<Standing>;
  /** Writes what is still queued and lets the store go. */
  close(): Promise<void>;
}
