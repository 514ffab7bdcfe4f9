// A lease of a key's headroom, as one daemon keeps it (pg-store.ts says the rule): what
// PostgreSQL granted, the requests this daemon admitted under it, and the lease's state as the
// absolute values its write-back sends. No I/O here.
import type { Claim, Used } from './store.js';

/** How long a lease admits requests after its grant. */
export const LEASE_MS = 1000;
/** The most requests a lease is asked for. */
export const LEASE_MOST = 1000;

/** What the store granted (limit_reserve_many's lease columns). */
export interface Grant {
  id: string;
  keyId: string;
  /** The grant's admission time: requests admitted from then until `until` (LEASE_MS later, or the end of the budget period it counts in if sooner). */
  at: number;
  until: number;
  /** No request admitted under it may be held longer (the claim's expiry). */
  expiresAt: number;
  requests: number;
  tokens: number;
  usd: number;
  /** Concurrency slots; 0 for a key without a concurrency limit. */
  slots: number;
}

/** A lease's row as its write-back sets it (limit_lease_write). */
export interface LeaseState {
  /** until: the row's admit_until (its bucket), LEASE_MS after the grant. */
  id: string; key: string; at: number; until: number; expires: number; v: number;
  requests: number; tokens: number; usd: number; held: number; slots: number;
  spare_requests: number; spare_tokens: number; spare_usd: number; spare_slots: number;
  closed: boolean; settled: boolean;
}

export class Lease {
  admitted = 0;
  private admittedTokens = 0;
  private admittedUsd = 0;
  private settledTokens = 0;
  private settledUsd = 0;
  /** Requests admitted under it and not settled yet: their worst case. */
  private readonly flying = new Map<string, { tokens: number; usd: number }>();
  closed = false;
  /** Raised by every change; the row has `written` (the grant is version 0). */
  version = 0;
  written = 0;
  /** A reservation call went out after it was granted: the next lease is asked for (due() no more). */
  nextAsked = false;
  /** What every settlement since the last write-back started waits on: the next write-back that carries them (one promise for them all, not one each). */
  nextWrite: { promise: Promise<void>; done: () => void } | undefined;

  constructor(readonly grant: Grant, private readonly budget: boolean) {}

  /** Whether `claim` fits what is left: in its admission time, with a request, its tokens, its USD and a slot left. */
  fits(claim: Claim): boolean {
    const g = this.grant;
    return !this.closed && claim.keyId === g.keyId && claim.at >= g.at && claim.at < g.until && claim.expiresAt <= g.expiresAt
      && this.admitted < g.requests && this.admittedTokens + claim.tokens <= g.tokens
      && (!this.budget || this.admittedUsd + claim.usd <= g.usd + 1e-9)
      && (g.slots === 0 || this.flying.size < g.slots);
  }

  admit(claim: Claim): void {
    const usd = this.budget ? claim.usd : 0;
    this.admitted++;
    this.admittedTokens += claim.tokens;
    this.admittedUsd += usd;
    this.flying.set(claim.requestId, { tokens: claim.tokens, usd });
    this.version++;
  }

  /** Takes back a request admitted here that its caller gave up on (it was decided elsewhere). */
  unadmit(requestId: string): boolean {
    const f = this.flying.get(requestId);
    if (!f) return false;
    this.flying.delete(requestId);
    this.admitted--;
    this.admittedTokens -= f.tokens;
    this.admittedUsd -= f.usd;
    this.version++;
    return true;
  }

  /** What a request admitted here used; false when it is not in flight here (settled already). */
  settle(requestId: string, used: Used): boolean {
    if (!this.flying.delete(requestId)) return false;
    this.settledTokens += used.tokens;
    this.settledUsd += used.usd;
    this.version++;
    return true;
  }

  get exhausted(): boolean { return this.admitted >= this.grant.requests; }

  /**
   * Time to ask for the next lease (pg-store.ts): three quarters of its requests admitted, or of
   * its admission time gone by `at`, so that the next is granted before this one runs out. Asked
   * once: a call that grants none leaves this one admitting until it runs out.
   */
  due(at: number): boolean {
    const g = this.grant;
    return !this.nextAsked && (this.admitted * 4 >= g.requests * 3 || (at - g.at) * 4 >= (g.until - g.at) * 3);
  }

  /** Admission has ended and nothing admitted is in flight: the lease is a settled claim. */
  get finished(): boolean { return this.closed && this.flying.size === 0; }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.version++;
  }

  /**
   * The row's absolute values: while open it holds its whole grant (what its settled requests
   * did not use given back), once closed only what its requests used and hold.
   */
  state(): LeaseState {
    const g = this.grant;
    let flyingTokens = 0;
    let flyingUsd = 0;
    for (const f of this.flying.values()) { flyingTokens += f.tokens; flyingUsd += f.usd; }
    const open = !this.closed;
    const spareRequests = open ? g.requests - this.admitted : 0;
    const spareTokens = open ? Math.max(0, g.tokens - this.admittedTokens) : 0;
    const spareUsd = open ? Math.max(0, g.usd - this.admittedUsd) : 0;
    const slots = open ? Math.max(g.slots, this.flying.size) : this.flying.size;
    return {
      id: g.id, key: g.keyId, at: g.at, until: g.at + LEASE_MS, expires: g.expiresAt, v: this.version,
      requests: this.admitted + spareRequests,
      tokens: Math.round(this.settledTokens + flyingTokens + spareTokens),
      usd: this.settledUsd,
      held: this.flying.size === 0 && !open ? 0 : flyingUsd + spareUsd,
      slots,
      spare_requests: spareRequests, spare_tokens: spareTokens, spare_usd: spareUsd, spare_slots: slots - this.flying.size,
      closed: this.closed, settled: this.finished,
    };
  }
}

/** How many requests of a key this daemon admitted lately (by their admission times). */
export class Recent {
  private readonly at: number[] = [];
  private head = 0;

  add(at: number): void {
    this.at.push(at);
    if (this.at.length - this.head > LEASE_MOST) this.head++;
    if (this.head > 4096) { this.at.splice(0, this.head); this.head = 0; }
  }

  /** Admissions in the `ms` before `now`. */
  count(now: number, ms: number): number {
    while (this.head < this.at.length && this.at[this.head]! <= now - ms) this.head++;
    return this.at.length - this.head;
  }
}
