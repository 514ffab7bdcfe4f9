// The limit store shared by several daemons: PostgreSQL (store/pg-schema.ts, versions 1, 6, 7 and 8).
// A reservation is decided by `limit_reserve`, which locks the key's row and checks every limit in
// that turn, so the requests of one key are decided one after another whichever daemon serves
// them. A busy key's requests are admitted against a lease of its headroom, itself a claim in
// that database. What keeps a busy key fast:
//
// - Leases (lease.ts). A daemon that admitted at least 2 requests of a key (same limits) in the
//   last LEASE_MS × 1.25, or has several waiting, asks with its next reservation call for a lease
//   of about that many requests (at most LEASE_MOST), each at the batch's largest worst case. Under
//   the key's lock each limit grants at most ⌊headroom ÷ (4 × daemons alive)⌋ of it (the daemons
//   whose heartbeat is less than a minute old); under 2 grants nothing, and the call decides each
//   request exactly as without leases, so a key near a limit is decided request by request, with
//   the exact verdicts and retry-afters. A budget is leased only while it has room for 100 of the
//   requests (its refusal lasts the period), and one refused while an open lease holds USD it may
//   not use says when that lease closes (retry-after) instead of "not in this period". A lease is a row of limit_claims ('lease:<uuid>')
//   counted at once everywhere a request's claim counts: its requests and tokens in the window
//   bucket of its admit_until (that bucket's last_at raised to it, so every request admitted
//   under it counts a whole window from then: never admitted late), its slots in the key's
//   concurrency, its USD in the budget's holds. For LEASE_MS from its grant, this daemon admits
//   the key's requests against it with no round trip while it has a request, the tokens, the USD
//   and a slot left for them, in the grant's budget period; otherwise it asks for a new one (one
//   call out per key at a time), whose call first closes the old. Once three quarters of a lease
//   is used (its requests or its time), the next request asks for the next lease, and the others
//   are admitted under this one meanwhile (it closes when the next is granted): a busy key's
//   requests do not all wait a round trip each time a lease runs out (at 13,000 requests a
//   second they did, 13 times a second, 1.7 ms each). While both are open, both count in the
//   store, so other daemons have that much less headroom for the call's round trip. A request admitted under a
//   lease settles into the lease: its state goes in absolute values (requests, tokens settled
//   and held, USD settled and held, slots, spare parts, a version), with the settlements'
//   batch, and `limit_lease_write` applies the difference from its row, ignoring a version it
//   has (resent or overtaken, nothing changes twice). Closed, a lease gives back what it did not
//   use; once its last request settled it is a settled claim of what they used. So the key's
//   limits hold exactly across daemons. The price: a daemon's unused lease is capacity other
//   daemons are refused meanwhile (their retry-after then is at most until the first open lease
//   closes), and standing() reports the requests' use, leaving leases' unused parts out.
//   A daemon that dies leaves its lease holding what it last wrote (never less than its requests
//   used) until the claim expires; release() of a lease voids it as it voids a request's claim.
//
// - Constant work per reservation. The sliding window counts per-second buckets (limit_windows:
//   requests, tokens and the latest admission of each second of each key), at most ~61 rows
//   whatever the rate; the requests in flight, the USD they hold and a budget's settled spend
//   are counters on the key's row, kept by every call that opens or closes a claim, and counted
//   again from the open claims when the period changes or a claim may have expired unsettled.
//   The window's rule: a bucket counts until its latest admission has left the window. That is
//   exact for requests admitted in different seconds (the contract's exact retry-afters hold) and,
//   for several sharing the second at the window's edge, refuses early: an admission counts up to
//   a second longer than WINDOW_MS, never shorter, so no sliding window ever holds more than the
//   limit, and a retry-after is exact or up to a second late, never early.
//
// - Short lock holds. A reservation commits with synchronous_commit off: the key's row lock is
//   released when its work is done, not after the WAL reached the disk (which every other
//   reservation of the key waited for, one after another). The trade-off: a crash of the
//   PostgreSQL *server* (not of a daemon) loses the reservations of its last moments (at most
//   ~3 × wal_writer_delay, 600 ms by default). Their requests are served anyway; their
//   settlements, which are committed durably, find no claim and add it settled (counted once, in
//   its window and its period), so no spend is lost, and the loss is only that, until those
//   settle, the windows, concurrency and holds did not count them: a key can briefly be let past
//   its limits by what was in flight when the server crashed. A settlement's durable commit also
//   flushes every reservation committed before it, so at most the reservations after the last
//   settlement batch are at risk. A lease's grant lost that way comes back with its next
//   write-back (limit_lease_write adds a lease it does not have, as written). A daemon crash
//   loses nothing of this.
//
// - Reservations in batches. A key's reservations that arrive while this daemon's previous call
//   for it is out (and that no lease has room for) go together in the next call
//   (`limit_reserve_many`: each decided in order, as if alone, after a lease taken with it), so
//   no more of this daemon's connections queue on a key's lock than one.
//
// - Settlements in batches. settle() queues, and every SETTLE_BATCH_MS the queue goes in one call
//   of `limit_settle_many` (idempotent by request id, like the write-back after an outage) with
//   the leases that changed, so settlements take the key's lock once per batch instead of once
//   per request. settle() resolves when its batch committed, and fails with it (team-store.ts then
//   keeps it in its outbox); a request admitted under a lease never fails: its lease's state is
//   kept and sent again (every LEASE_RETRY_MS while that fails), the latest in each batch.
//
// Spend from before a key had limits: the laptop's store counts it from its usage history; this
// one counts claims only, because the team's usage history is not in this database's limit
// tables (it is the usage outbox's table, written after the request, keyed by request id). Once
// both are in one database, limit_reserve's new-period branch can add the cost of the key's
// requests in the period that have no claim, as sqlite-store.ts spentSince() does.
import { randomUUID } from 'node:crypto';
import type { QueryResultRow } from 'pg';
import { Lease, LEASE_MOST, LEASE_MS, Recent, type LeaseState } from './lease.js';
import { periodAt, WINDOW_MS, type KeyLimits } from './limits.js';
import { LEDGER_DAYS } from './sqlite-store.js';
import type { Claim, LimitStore, Standing, Used, Verdict } from './store.js';

const DAY = 86_400_000;
/** How long a settlement waits to go with others: the lag before the shared budget counts it. */
export const SETTLE_BATCH_MS = 25;
/** How soon a lease's write-back that failed is sent again. */
const LEASE_RETRY_MS = 1000;
/** Settlements per statement (a write-back after a long outage can hold many). */
const ROWS_PER_BATCH = 1000;

/** The most reservations of a key in one call. */
const RESERVATIONS_PER_CALL = 200;

interface Queued { row: SettledRow; done: () => void; failed: (e: unknown) => void }
interface Reservation { limits: KeyLimits; claim: Claim; done: (v: Verdict) => void; failed: (e: unknown) => void }

interface ReserveRow {
  ok: boolean; lim: string | null; used: number; held: number; retry_after_ms: string | null;
  lease_n: string | null; lease_tokens: string | null; lease_usd: number | null; lease_slots: string | null; lease_at: string | null; lease_expires: string | null;
}

/** What the store queries through: a pg Pool, or the daemon's SharedStore (which also tracks whether the database is reachable). */
export interface Queryable {
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** A key's budget as the store last stated it: settled spend and holds (this request's included) in `period`. */
export interface BudgetSeen { keyId: string; period: string; periodStart: number; spent: number; held: number }

/** One settled request: as settle() batches it, or as written back after the store was unreachable. */
export interface SettledRow { requestId: string; keyId: string; at: number; tokens: number; usd: number }

/** `<period>:<tz>:<start>`: the budget period a key's cached spend belongs to. */
export function periodId(limits: KeyLimits, start: number): string {
  return `${limits.budget!.period}:${limits.tz ?? 'UTC'}:${start}`;
}

/** A key's limits as text (a lease or a batch is one key's under the same limits), made once per limits object. */
const limitsText = new WeakMap<KeyLimits, string>();
function slotOf(keyId: string, limits: KeyLimits): string {
  let text = limitsText.get(limits);
  if (text === undefined) limitsText.set(limits, (text = JSON.stringify(limits)));
  return `${keyId}\n${text}`;
}

export class PgLimitStore implements LimitStore {
  private queue: Queued[] = [];
  /** Each key (and limits) with a reservation call out: the reservations waiting for the next. */
  private readonly reserving = new Map<string, Reservation[]>();
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** The batch being written: one at a time, in order. */
  private sending: Promise<void> = Promise.resolve();
  /** Each key's (and limits') lease admitting now. */
  private readonly leases = new Map<string, Lease>();
  /** The lease each request admitted under one belongs to, by request id, until it settles. */
  private readonly leased = new Map<string, Lease>();
  /**
   * Requests settled into their lease: a second settlement of one changes nothing. Their claims,
   * not their ids: nothing is kept once the request is done with (the limiter settles each
   * claim once; a busy daemon's ids kept a minute were ~800,000 map entries).
   */
  private readonly settledLeased = new WeakSet<Claim>();
  /** Leases not yet settled and written in the store: a few per busy key. */
  private readonly unsettled = new Set<Lease>();
  /** Leases whose state changed since it was last written. */
  private readonly dirty = new Set<Lease>();
  /** Each key's (and limits') admissions lately: the size of the lease asked for. */
  private readonly recent = new Map<string, Recent>();
  /** The leases asked for by reservation calls out (id → key): a stop voids them (team-store.ts). */
  private readonly leasesAsked = new Map<string, string>();
  /** Requests in a reservation call out, and those of them whose caller gave up waiting (abandon()). */
  private readonly outstanding = new Set<string>();
  private readonly abandoned = new Set<string>();

  /**
   * `end`: what close() does (a pool the store owns); the daemon's shared store is closed with the
   * daemon instead. `seen`: told the key's budget standing with each reservation's answer (a
   * lease's grant included). `lost`: a lease call that failed, which may have reached the store
   * (team-store.ts voids it with release() once the store answers).
   */
  constructor(
    private readonly pool: Queryable,
    private readonly end: () => Promise<void> = async () => {},
    private readonly seen?: (b: BudgetSeen) => void,
    private readonly lost?: (c: { requestId: string; keyId: string }) => void,
    /** Told the leases whose write-back just failed, in their latest state (team-store.ts keeps them on disk until one succeeds). */
    private readonly kept?: (states: LeaseState[]) => void,
  ) {}

  /**
   * Admitted at once under the key's lease when it has room (see the top of this file); else
   * decided by limit_reserve_many: a key's reservations that arrive while its previous call is
   * out wait for it and go together in the next (one round trip and one turn of the key's lock
   * for them all, in arrival order); a key with nothing out is sent at once.
   */
  reserve(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    const slot = slotOf(claim.keyId, limits);
    if (this.admitLeased(slot, claim)) return Promise.resolve({ ok: true });
    return new Promise<Verdict>((done, failed) => {
      const queued = this.reserving.get(slot);
      const r: Reservation = { limits, claim, done, failed };
      if (queued) { queued.push(r); return; }
      this.reserving.set(slot, []);
      const lease = this.leases.get(slot);
      if (lease) lease.nextAsked = true;
      void this.reserveBatch(slot, [r]);
    });
  }

  /** Admits `claim` at once if the key's lease has room for it (what reserve() does first, without a promise). */
  admitNow(limits: KeyLimits, claim: Claim): boolean {
    return this.admitLeased(slotOf(claim.keyId, limits), claim);
  }

  /** Whether a request admitted by reserve() is held by a lease (its settlement goes into the lease's write-back, which never fails). */
  holds(claim: Claim): boolean {
    return this.leased.has(claim.requestId) || this.settledLeased.has(claim);
  }

  /**
   * The caller stopped waiting for this reservation and decided it elsewhere (team-store.ts, a
   * store that did not answer): not sent if it still waits, not counted under a lease.
   */
  abandon(requestId: string): void {
    for (const queued of this.reserving.values()) {
      const i = queued.findIndex((r) => r.claim.requestId === requestId);
      if (i >= 0) { queued.splice(i, 1); return; }
    }
    const lease = this.leased.get(requestId);
    if (lease?.unadmit(requestId)) {
      this.leased.delete(requestId);
      this.changed(lease);
    } else if (this.outstanding.has(requestId)) {
      this.abandoned.add(requestId);
    }
  }

  private admitLeased(slot: string, claim: Claim): boolean {
    const lease = this.leases.get(slot);
    if (!lease || !lease.fits(claim)) return false;
    // Mostly used: this request asks for the next lease (reserve() sends it, with no call out for
    // the key), and the others are admitted under this one meanwhile instead of all waiting.
    if (!this.reserving.has(slot) && lease.due(claim.at)) return false;
    this.admitUnder(slot, lease, claim);
    return true;
  }

  /** `claim` admitted under `lease` (which has room for it); the lease closes once it has no request left. */
  private admitUnder(slot: string, lease: Lease, claim: Claim): void {
    lease.admit(claim);
    this.leased.set(claim.requestId, lease);
    this.admitted(slot, claim.at);
    if (lease.exhausted) this.closeLease(slot, lease);
  }

  private admitted(slot: string, at: number): void {
    let r = this.recent.get(slot);
    if (!r) this.recent.set(slot, (r = new Recent()));
    r.add(at);
  }

  private async reserveBatch(slot: string, first: Reservation[]): Promise<void> {
    let batch = first;
    for (;;) {
      await this.send(slot, batch);
      // Those that waited for it: the ones the lease granted meanwhile has room for need no call.
      const next = this.reserving.get(slot)!.filter((r) => {
        if (!this.admitLeased(slot, r.claim)) return true;
        r.done({ ok: true });
        return false;
      });
      if (next.length === 0) { this.reserving.delete(slot); return; }
      this.reserving.set(slot, next.slice(RESERVATIONS_PER_CALL));
      batch = next.slice(0, RESERVATIONS_PER_CALL);
    }
  }

  private async send(slot: string, batch: Reservation[]): Promise<void> {
    for (const r of batch) this.outstanding.add(r.claim.requestId);
    try {
      const verdicts = await this.reserveMany(slot, batch);
      batch.forEach((r, i) => {
        const v = verdicts[i];
        if (v instanceof Error || v === undefined) r.failed(v ?? new Error('the store gave no verdict'));
        else r.done(v);
      });
    } catch (e) {
      for (const r of batch) r.failed(e);
    } finally {
      for (const r of batch) { this.outstanding.delete(r.claim.requestId); this.abandoned.delete(r.claim.requestId); }
    }
  }

  private async reserveMany(slot: string, batch: readonly Reservation[]): Promise<Array<Verdict | Error>> {
    const { limits } = batch[0]!;
    const { keyId } = batch[0]!.claim;
    const b = limits.budget;
    const periods = batch.map(({ claim }) => (b ? periodAt(b.period, claim.at, limits.tz) : undefined));
    const col = <T>(f: (c: Claim) => T) => batch.map((r) => f(r.claim));
    // The key's lease admitting until now closes with this call if it has no room for the first
    // request (a lease asked for early keeps admitting until the next is granted: granted()), and
    // its leases' changes not written yet go with it: what they did not use comes back before the decision.
    const old = this.leases.get(slot);
    if (old && !old.fits(batch[0]!.claim)) this.closeLease(slot, old);
    const closing = [...this.dirty].filter((l) => l.grant.keyId === keyId && l.version > l.written);
    const close = closing.map((l) => l.state());
    // Busy: several waiting, or several admitted lately; then a lease of about that many.
    const now = Math.min(...batch.map((r) => r.claim.at));
    const lately = this.recent.get(slot)?.count(now, LEASE_MS * 1.25) ?? 0;
    const ask = batch.length >= 2 || lately >= 2 ? Math.min(LEASE_MOST, Math.max(2, batch.length, lately)) : 0;
    const leaseId = ask > 0 ? `lease:${randomUUID()}` : null;
    let rows: ReserveRow[];
    if (leaseId) this.leasesAsked.set(leaseId, keyId);
    try {
      ({ rows } = await this.pool.query<ReserveRow>(
        'SELECT * FROM limit_reserve_many($1, $2::text[], $3::bigint[], $4::bigint[], $5::float8[], $6::bigint[], $7, $8, $9, $10, $11::text[], $12::bigint[], $13, $14, $15, $16, $17::jsonb)',
        [
          keyId, col((c) => c.requestId), col((c) => c.at), col((c) => c.tokens), col((c) => c.usd), col((c) => c.expiresAt),
          limits.rpm ?? null, limits.tpm ?? null, limits.concurrency ?? null, b?.usd ?? null,
          periods.map((p) => (p ? periodId(limits, p.start) : '')), periods.map((p) => p?.start ?? 0), WINDOW_MS,
          leaseId, ask, LEASE_MS, close.length > 0 ? JSON.stringify(close) : null,
        ],
      ));
    } catch (e) {
      if (leaseId) this.lost?.({ requestId: leaseId, keyId });
      throw e;
    } finally {
      if (leaseId) this.leasesAsked.delete(leaseId);
    }
    closing.forEach((l, i) => this.wrote(l, close[i]!.v));
    const lease = this.granted(slot, limits, leaseId, rows[0]);
    const verdicts = batch.map(({ claim }, i): Verdict | Error => {
      const r = rows[i];
      if (!r) return new Error('the store gave no verdict');
      if (r.lim === 'taken') return new Error(`request ${claim.requestId} is taken already in the limit store (a claim voided or reserved before)`);
      if (r.lim === 'lease' && lease) {
        // Admitted under the new lease, as the store counted it; one given up on meanwhile is taken back by the next write-back.
        if (this.abandoned.has(claim.requestId)) return { ok: true };
        lease.admit(claim);
        this.leased.set(claim.requestId, lease);
      }
      // Refused while the lease it asked early to succeed, still open and counted whole in the
      // store, had room for it (no new one granted): admitted under that lease, as it would have been.
      if (!r.ok && old && this.leases.get(slot) === old && old.fits(claim) && !this.abandoned.has(claim.requestId)) {
        this.admitUnder(slot, old, claim);
        return { ok: true };
      }
      if (r.ok) this.admitted(slot, claim.at);
      return this.verdict(limits, claim, periods[i], r);
    });
    if (lease) {
      // The store has what was admitted in the call; a request given up on since is a change to write.
      if (lease.admitted === rows.filter((r) => r.lim === 'lease').length) lease.written = lease.version;
      else this.changed(lease);
      if (lease.exhausted) this.closeLease(slot, lease);
    }
    return verdicts;
  }

  /** The lease a reservation call granted, now the key's lease; closed when its admission time is up. */
  private granted(slot: string, limits: KeyLimits, id: string | null, r: ReserveRow | undefined): Lease | undefined {
    if (!id || !r || r.lease_n === null) return undefined;
    const at = Number(r.lease_at);
    // Admitting in the budget period it counts in only.
    const periodEnd = limits.budget ? periodAt(limits.budget.period, at, limits.tz).end ?? Infinity : Infinity;
    const lease = new Lease({
      id, keyId: slot.slice(0, slot.indexOf('\n')), at, until: Math.min(at + LEASE_MS, periodEnd), expiresAt: Number(r.lease_expires),
      requests: Number(r.lease_n), tokens: Number(r.lease_tokens), usd: Number(r.lease_usd), slots: Number(r.lease_slots),
    }, limits.budget !== undefined);
    const before = this.leases.get(slot);
    if (before) this.closeLease(slot, before);
    this.leases.set(slot, lease);
    this.unsettled.add(lease);
    setTimeout(() => this.closeLease(slot, lease), LEASE_MS).unref();
    return lease;
  }

  /** Ends admission under `lease`: its unused part goes back with the next write-back. */
  private closeLease(slot: string, lease: Lease): void {
    if (this.leases.get(slot) === lease) this.leases.delete(slot);
    if (lease.closed) return;
    lease.close();
    this.changed(lease);
  }

  /** `lease` changed: its state goes with the next batch. */
  private changed(lease: Lease, delay = SETTLE_BATCH_MS): Promise<void> {
    this.dirty.add(lease);
    if (!lease.nextWrite) {
      let done!: () => void;
      const promise = new Promise<void>((resolve) => { done = resolve; });
      lease.nextWrite = { promise, done };
    }
    const wrote = lease.nextWrite.promise;
    if (delay > SETTLE_BATCH_MS) {
      this.retry ??= setTimeout(() => { this.retry = undefined; void this.flush(); }, delay);
      this.retry.unref();
    } else if (!this.timer) {
      this.timer = setTimeout(() => { void this.flush(); }, SETTLE_BATCH_MS);
      this.timer.unref();
    }
    return wrote;
  }

  /** The store has `lease` up to version `v`; a lease settled there is done with. */
  private wrote(lease: Lease, v: number): void {
    lease.written = Math.max(lease.written, v);
    if (lease.finished && lease.written >= lease.version) this.unsettled.delete(lease);
  }

  private verdict(limits: KeyLimits, claim: Claim, period: { start: number; end: number | undefined } | undefined, r: ReserveRow): Verdict {
    const b = limits.budget;
    if (b && (r.ok || r.lim === 'budget')) {
      this.seen?.({ keyId: claim.keyId, period: periodId(limits, period!.start), periodStart: period!.start, spent: Number(r.used), held: Number(r.held) });
    }
    if (r.ok) return { ok: true };
    const limit = r.lim as 'budget' | 'rpm' | 'tpm' | 'concurrency';
    const max = limit === 'budget' ? b!.usd : limits[limit]!;
    const asked = limit === 'budget' ? claim.usd : limit === 'tpm' ? claim.tokens : 1;
    return {
      ok: false, limit, max, used: Number(r.used), held: Number(r.held), asked,
      ...(r.retry_after_ms === null ? {} : { retryAfterMs: Number(r.retry_after_ms) }),
      ...(limit === 'budget' && period?.end !== undefined ? { resetAt: period.end } : {}),
    };
  }

  settle(claim: Claim, used: Used): Promise<void> {
    const lease = this.leased.get(claim.requestId);
    if (lease) {
      // Into its lease's totals; resolved once a write-back carrying them ended (one that failed is sent again).
      this.leased.delete(claim.requestId);
      this.settledLeased.add(claim);
      if (!lease.settle(claim.requestId, used)) return Promise.resolve();
      return this.changed(lease);
    }
    if (this.settledLeased.has(claim)) return Promise.resolve();
    return new Promise<void>((done, failed) => {
      this.queue.push({ row: { requestId: claim.requestId, keyId: claim.keyId, at: claim.at, tokens: used.tokens, usd: used.usd }, done, failed });
      if (!this.timer) {
        this.timer = setTimeout(() => { void this.flush(); }, SETTLE_BATCH_MS);
        this.timer.unref();
      }
    });
  }

  /** Sends the queued settlements and the leases' changes now (after the batch in flight); resolves when they are written or failed. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    const leases = [...this.dirty];
    this.dirty.clear();
    if (batch.length === 0 && leases.length === 0) return this.sending;
    this.sending = this.sending.then(async () => {
      // Each lease's latest state, and the settlements it carries.
      const sent = leases.filter((l) => l.version > l.written);
      const states = sent.map((l) => l.state());
      const waiters = leases.flatMap((l) => { const w = l.nextWrite; l.nextWrite = undefined; return w ? [w.done] : []; });
      try {
        await this.record(batch.map((q) => q.row), states);
        for (const q of batch) q.done();
        sent.forEach((l, i) => this.wrote(l, states[i]!.v));
      } catch (e) {
        for (const q of batch) q.failed(e);
        // Kept: sent again, in its state by then, until it is written.
        for (const l of sent) if (l.version > l.written) void this.changed(l, LEASE_RETRY_MS);
        this.kept?.(sent.filter((l) => l.version > l.written).map((l) => l.state()));
      }
      for (const w of waiters) w();
    });
    return this.sending;
  }

  /** The latest state of every lease the store does not have yet. */
  unwritten(): LeaseState[] {
    // Every lease granted is in `unsettled` until it is settled and written (the open ones and the changed ones too).
    return [...this.unsettled].filter((l) => l.version > l.written).map((l) => l.state());
  }

  /** The leases asked for by calls still out: granted after admission ended, no one here would use or close them. */
  leasesOut(): Array<{ requestId: string; keyId: string }> {
    return [...this.leasesAsked].map(([requestId, keyId]) => ({ requestId, keyId }));
  }

  /** Ends admission under every lease, so that their unused parts go back with the next write-back. */
  closeLeases(): void {
    for (const [slot, lease] of [...this.leases]) this.closeLease(slot, lease);
  }

  /**
   * Writes settled requests, each once by request id (limit_settle_many): an open claim is settled,
   * a missing one (settled on a daemon's share while the store was unreachable, or its reservation
   * lost in a server crash) is added settled, a settled one is left alone. `leases`: leases'
   * states, written with the first statement (limit_lease_write).
   */
  async record(rows: readonly SettledRow[], leases: readonly LeaseState[] = []): Promise<void> {
    for (let i = 0; i === 0 || i < rows.length; i += ROWS_PER_BATCH) {
      const chunk = rows.slice(i, i + ROWS_PER_BATCH);
      const cols = [chunk.map((r) => r.requestId), chunk.map((r) => r.keyId), chunk.map((r) => Math.round(r.at)), chunk.map((r) => Math.round(r.tokens)), chunk.map((r) => r.usd)];
      if (i === 0 && leases.length > 0) {
        await this.pool.query('SELECT limit_settle_many($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[], $6::jsonb)', [...cols, JSON.stringify(leases)]);
      } else if (chunk.length > 0) {
        await this.pool.query('SELECT limit_settle_many($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::float8[])', cols);
      }
    }
  }

  /**
   * Voids the claims of requests whose reservation may have reached the store while it did not
   * answer, and which nothing will settle (the daemon refused them): each becomes a claim outside
   * every window, period and hold (admitted at 0, expired at 0). A reservation arriving later
   * finds its request id taken and is rolled back; one already made is voided the same way.
   */
  async release(claims: ReadonlyArray<{ requestId: string; keyId: string }>): Promise<void> {
    if (claims.length === 0) return;
    await this.pool.query('SELECT limit_release($1::text[], $2::text[])', [claims.map((c) => c.requestId), claims.map((c) => c.keyId)]);
  }

  /**
   * Drops the claims admitted more than LEDGER_DAYS before `now` (longer than a month, the longest
   * calendar period; the minute windows need far less), folding settled spend into its key's total.
   * Returns how many went.
   */
  async prune(now: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT limit_prune($1) AS n', [now - LEDGER_DAYS * DAY]);
    return Number(rows[0]?.n ?? 0);
  }

  async standing(keyId: string, limits: KeyLimits, now: number): Promise<Standing> {
    const b = limits.budget;
    const period = b ? periodAt(b.period, now, limits.tz) : undefined;
    // The windows counted as reservations count them (the buckets' rule, at the top of this file);
    // what open leases hold and no request used yet (their spare parts) is left out.
    const { rows } = await this.pool.query<{ requests: string; tokens: string; open: string; spent: number; held: number }>(`
      SELECT w.requests - c.spare_requests AS requests, w.tokens - c.spare_tokens AS tokens, c.open, c.spent, c.held FROM (
        SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(tokens), 0) AS tokens FROM limit_windows
          WHERE key_id = $1 AND sec >= ($2::bigint - $4::bigint) / 1000 - 1 AND last_at > $2::bigint - $4::bigint
      ) w, (
        SELECT coalesce(sum(slots - spare_slots) FILTER (WHERE NOT settled AND expires_at > $2::bigint), 0) AS open,
               coalesce(sum(usd) FILTER (WHERE (settled OR admit_until IS NOT NULL) AND at >= $3::bigint), 0)
                 + CASE WHEN $3::bigint = 0 THEN coalesce((SELECT folded FROM limit_keys WHERE key_id = $1), 0) ELSE 0 END AS spent,
               coalesce(sum(CASE WHEN admit_until IS NULL THEN usd ELSE held - spare_usd END) FILTER (WHERE NOT settled AND expires_at > $2::bigint AND at >= $3::bigint), 0) AS held,
               coalesce(sum(spare_requests) FILTER (WHERE NOT settled AND admit_until > $2::bigint - $4::bigint), 0) AS spare_requests,
               coalesce(sum(spare_tokens) FILTER (WHERE NOT settled AND admit_until > $2::bigint - $4::bigint), 0) AS spare_tokens
          FROM limit_claims WHERE key_id = $1 AND (NOT settled OR at >= $3::bigint)
      ) c`,
    [keyId, now, period?.start ?? Number.MAX_SAFE_INTEGER, WINDOW_MS]);
    const r = rows[0]!;
    const out: Standing = {};
    if (b) {
      const spent = Number(r.spent);
      const held = Number(r.held);
      out.budget = { max: b.usd, period: b.period, spent, held, left: Math.max(0, b.usd - spent - held), ...(period!.end === undefined ? {} : { resetAt: period!.end }) };
    }
    if (limits.rpm !== undefined) out.rpm = { max: limits.rpm, used: Number(r.requests) };
    if (limits.tpm !== undefined) out.tpm = { max: limits.tpm, used: Number(r.tokens) };
    if (limits.concurrency !== undefined) out.concurrency = { max: limits.concurrency, used: Number(r.open) };
    return out;
  }

  /** Closes the leases, writes them and the settlements still queued, then lets the store go. */
  async close(): Promise<void> {
    this.closeLeases();
    await this.flush();
    await this.end();
  }
}
