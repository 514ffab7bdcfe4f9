// Team mode's limit store: PostgreSQL (pg-store.ts) while it answers; while it does not, each
// daemon enforces a local share of every limit, or refuses the keys set to fail closed.
//
// The local share, with n the daemons whose heartbeat the store last showed alive in the last
// minute (store/shared-store.ts daemonsAlive, this one included, at least 1):
// - rpm, tpm and concurrency: ⌊limit / n⌋ (at least 1), counted in this daemon's own windows,
//   which start empty when the store is lost;
// - a budget: what was left of it when the store last stated the key's spend and holds to this
//   daemon (every reservation's answer does), divided by n; the whole budget divided by n for a
//   key this daemon has not reserved for since it started, or once a new period began.
// So the n daemons together stay within each limit, give or take the rounding up to 1 and what
// other daemons spent of a budget since this one last asked.
//
// A reservation never waits for a store known to be down: it goes local at once. While the
// store's state is unknown (a reservation sent, no answer yet), it waits at most
// RESERVE_WAIT_MS, then counts the store as down and goes local.
//
// Leases (pg-store.ts) admit only while the store is known up: a key's lease does not admit during
// an outage (its unused part stays held in the store until its write-back closes it, or its claim
// expires), so the local shares are what decides then. A lease call that fails may have reached the
// store: its id is voided with release() once the store answers, like a reservation's; one that
// gets no answer in time has its requests decided here, and taken back from the lease if its answer
// comes later. A lease whose call is still out when the daemon stops is voided the same way:
// granted after admission ended, no one would use or close it, and it would hold its grant until
// its claim expired. The ids to void are kept in the outbox's limit_releases until voided, so a
// stop or a crash before the store answers again loses none. A request admitted under a lease
// settles into it, not into the outbox (the lease carries it, once); a lease whose write-back
// failed, or that is still unwritten when the daemon stops, has its latest state kept in the
// outbox's limit_lease_states too, written back with the rest after a restart (a resent version
// changes nothing).
//
// Whatever settled locally (and the settlements of claims made in PostgreSQL that could not be
// told) is kept in the outbox (limit-outbox.db in the state directory, the laptop's limit ledger
// schema, so it survives a crash) and, once the store is back, written to it in one statement per
// 500 by request id (limit_settle_many: a claim is settled once, a missing one added settled): the
// shared windows and budgets then count every request served, once. Reservations go back to
// PostgreSQL only after that write-back, so the shared counters are whole when they decide again.
import { join } from 'node:path';
import { migrate } from '../observe/usage/schema.js';
import { FILES } from '../store/paths.js';
import { isConnectionError, type SharedStore } from '../store/shared-store.js';
import { openDatabase, type Database } from '../store/sqlite.js';
import { periodAt, type KeyLimits } from './limits.js';
import type { LeaseState } from './lease.js';
import { PgLimitStore, periodId, type BudgetSeen, type SettledRow } from './pg-store.js';
import { SqliteLimitStore } from './sqlite-store.js';
import { StoreUnreachable, type Claim, type LimitStore, type Standing, type Used, type Verdict } from './store.js';

/** The longest a reservation waits for a store that does not answer before deciding locally. */
export const RESERVE_WAIT_MS = 2_000;
/** A settlement or a write-back unanswered this long is kept (or stays) in the outbox. */
const WRITE_WAIT_MS = 10_000;
/** How soon local settlements are written back while the store is up (several go together). */
const WRITE_BACK_DELAY_MS = 200;
/** The backstop: the outbox is looked at this often, and old claims pruned at most hourly. */
const SWEEP_MS = 30_000;
const PRUNE_MS = 3_600_000;
const ROWS_PER_WRITE = 500;

export interface TeamLimitOptions {
  shared: SharedStore;
  stateDir: string;
  clock: () => number;
  log: (line: string) => void;
  /** Default RESERVE_WAIT_MS. */
  reserveWaitMs?: number;
}

/** What `gateway status` shows of the limits in team mode. */
export interface TeamLimitsReport {
  /** Settlements made while the store was unreachable, not yet written back to it. */
  unreconciled: number;
}

class NoAnswer extends Error {}

/** `p`, or a NoAnswer after `ms`; a late answer (or failure) of `p` is dropped. */
function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  p.catch(() => {});
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new NoAnswer(`${what} got no answer within ${ms / 1000} s`)), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A failure that means the store cannot be reached now, as against a query's own error. */
const unreachable = (e: unknown): boolean => e instanceof NoAnswer || isConnectionError(e);

export class TeamLimitStore implements LimitStore {
  private readonly pg: PgLimitStore;
  private readonly outbox: Promise<Database>;
  /** This outage's local store (its windows start empty); a new one for each outage. */
  private local: SqliteLimitStore | undefined;
  /** Every local store that may still hold queued settlements or claims in flight. */
  private readonly locals = new Set<SqliteLimitStore>();
  /** The local store holding each claim reserved locally, by request id. */
  private readonly localClaims = new Map<string, SqliteLimitStore>();
  /** A lease write-back's promise (every settlement under the lease until it goes shares one) and its bounded wait: one timer per write-back, not per request. */
  private readonly leaseWrites = new WeakMap<Promise<void>, Promise<void>>();
  /** Each key's budget as the store last stated it to this daemon. */
  private readonly budgets = new Map<string, BudgetSeen>();
  /** The outbox has been written back since the store was last lost: reservations go to PostgreSQL. */
  private reconciled = false;
  private writing: Promise<void> | undefined;
  private writeAgain = false;
  private writeSoon: NodeJS.Timeout | undefined;
  private readonly sweep: NodeJS.Timeout;
  private lastPrune: number;
  private readonly offHealth: () => void;
  private readonly waitMs: number;
  private closed = false;

  constructor(private readonly o: TeamLimitOptions) {
    this.waitMs = o.reserveWaitMs ?? RESERVE_WAIT_MS;
    this.pg = new PgLimitStore(o.shared, async () => {}, (b) => this.budgets.set(b.keyId, b), (c) => this.release(c.requestId, c.keyId),
      (states) => { if (!this.closed) void this.keepLeases(states).catch(() => {}); });
    this.outbox = openDatabase(join(o.stateDir, FILES.limitOutbox), { setup: migrate }).catch(async (e: unknown) => {
      o.log(`limits: the limit outbox could not be opened (${(e as Error).message}); settlements made while the store is unreachable are kept in memory only`);
      return openDatabase(':memory:', { setup: migrate });
    }).then((db) => {
      // A lease's latest state the store has not taken (its write-back failed): its requests'
      // settlements, written back with the rest (limit_lease_write ignores a version it has).
      db.exec('CREATE TABLE IF NOT EXISTS limit_lease_states (id TEXT PRIMARY KEY, v INTEGER NOT NULL, state TEXT NOT NULL)');
      // Claims to void once the store answers (release()): a lease call that failed or was still out
      // at a stop, a request whose reservation may have reached the store unanswered and that
      // nothing here will settle. Kept until voided, through a stop or a crash.
      db.exec('CREATE TABLE IF NOT EXISTS limit_releases (request_id TEXT PRIMARY KEY, key_id TEXT NOT NULL)');
      return db;
    });
    this.lastPrune = o.clock();
    this.offHealth = o.shared.onHealth((h) => {
      if (h.connected) { void this.writeBack(); return; }
      // A new outage starts with empty local windows; one that resumes before the write-back keeps its own.
      if (this.reconciled) this.local = undefined;
      this.reconciled = false;
    });
    this.sweep = setInterval(() => { void this.housekeeping(); }, SWEEP_MS);
    this.sweep.unref();
    // What a daemon killed during an outage kept in its outbox is written back now.
    void this.writeBack();
  }

  async reserve(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    const shared = this.o.shared;
    // Back from an outage: the shared counters first get what was settled meanwhile.
    if (shared.status().connected && !this.reconciled && !limits.failClosed) await bounded(this.writeBack(), this.waitMs, 'the write-back').catch(() => {});
    // A key that fails closed served nothing locally, so its shared counters are whole at once.
    let sent = false;
    if (shared.status().connected && (this.reconciled || limits.failClosed)) {
      // Admitted under the key's lease: nothing to wait for.
      if (this.pg.admitNow(limits, claim)) return { ok: true };
      try {
        return await bounded(this.pg.reserve(limits, claim), this.waitMs, 'a limit reservation');
      } catch (e) {
        if (!unreachable(e)) throw e;
        if (e instanceof NoAnswer) {
          shared.failed(e); // a connection failure was counted by the query
          this.pg.abandon(claim.requestId); // decided here: neither sent later nor counted under a lease
        }
        sent = true;
      }
    }
    // Sent without an answer, it may hold a claim in the store: one this daemon then settles is
    // written back by request id; one it refuses is dropped when the store answers again.
    if (limits.failClosed) {
      if (sent) this.release(claim.requestId, claim.keyId);
      throw new StoreUnreachable(shared.display, shared.status().downSince);
    }
    const v = await this.reserveLocally(limits, claim);
    if (!v.ok && sent) this.release(claim.requestId, claim.keyId);
    return v;
  }

  async settle(claim: Claim, used: Used): Promise<void> {
    const local = this.localClaims.get(claim.requestId);
    if (local) {
      this.localClaims.delete(claim.requestId);
      await local.settle(claim, used);
      this.writeBackSoon();
      return;
    }
    // Admitted under a lease: its lease's write-back carries it, kept and sent again until the store has it.
    if (this.pg.holds(claim)) {
      const wrote = this.pg.settle(claim, used);
      let waited = this.leaseWrites.get(wrote);
      if (!waited) this.leaseWrites.set(wrote, (waited = bounded(wrote, WRITE_WAIT_MS, 'a settlement').catch(() => {})));
      return waited;
    }
    if (this.o.shared.status().connected) {
      try {
        await bounded(this.pg.settle(claim, used), WRITE_WAIT_MS, 'a settlement');
        return;
      } catch (e) {
        if (!unreachable(e)) throw e;
      }
    }
    // Reserved in PostgreSQL, which cannot be told now: the outbox keeps it until it can (once, by request id).
    await (await this.localStore()).settle(claim, used);
    this.writeBackSoon();
  }

  async standing(keyId: string, limits: KeyLimits, now: number): Promise<Standing> {
    const shared = this.o.shared;
    if (!shared.status().connected) throw new StoreUnreachable(shared.display, shared.status().downSince);
    return bounded(this.pg.standing(keyId, limits, now), this.waitMs, 'a standing');
  }

  /** Settlements (and claims to drop) not yet written back to the store. */
  async report(): Promise<TeamLimitsReport> {
    const db = await this.outbox;
    for (const s of this.locals) s.flush();
    const row = db.prepare('SELECT (SELECT COUNT(*) FROM limit_spend) + (SELECT COUNT(*) FROM limit_lease_states) + (SELECT COUNT(*) FROM limit_releases) AS n').get() as { n: number };
    return { unreconciled: Number(row.n) };
  }

  /** Drops the claims no window or period needs any more (pg-store.ts prune); at most hourly from the sweep. */
  prune(now = this.o.clock()): Promise<number> {
    this.lastPrune = now;
    return this.pg.prune(now);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offHealth();
    clearInterval(this.sweep);
    clearTimeout(this.writeSoon);
    // A lease granted from now on would admit nothing and hold its grant until its claim expired (an
    // hour): one still asked for is voided with the write-back below, or by the next start.
    for (const c of this.pg.leasesOut()) this.release(c.requestId, c.keyId);
    // A clean stop writes back what it can (the batch of settlements queued too); what it cannot stays in the outbox for the next start.
    this.pg.closeLeases();
    if (this.o.shared.status().connected) {
      await bounded(this.pg.flush(), 2_000, 'the settlements').catch(() => {});
      await bounded(this.writeBack(), 2_000, 'the write-back').catch(() => {});
    }
    await this.keepLeases(this.pg.unwritten());
    const db = await this.outbox;
    for (const s of this.locals) s.flush();
    db.close();
  }

  /** A claim to void once the store answers (limit_release), kept in the outbox until it is. */
  private release(requestId: string, keyId: string): void {
    void this.outbox.then((db) => {
      db.prepare('INSERT INTO limit_releases (request_id, key_id) VALUES (?, ?) ON CONFLICT DO NOTHING').run(requestId, keyId);
    }).catch(() => {});
  }

  /** Leases whose latest state the store has not taken: on disk, written back with the outbox (a restart keeps them). */
  private async keepLeases(states: readonly LeaseState[]): Promise<void> {
    if (states.length === 0) return;
    const db = await this.outbox;
    const keep = db.prepare('INSERT INTO limit_lease_states (id, v, state) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET v = excluded.v, state = excluded.state WHERE excluded.v > limit_lease_states.v');
    for (const st of states) keep.run(st.id, st.v, JSON.stringify(st));
    this.writeBackSoon();
  }

  private async localStore(): Promise<SqliteLimitStore> {
    const db = await this.outbox;
    if (!this.local) {
      this.local = new SqliteLimitStore(db, this.o.clock);
      this.locals.add(this.local);
    }
    return this.local;
  }

  private async reserveLocally(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    const local = await this.localStore();
    const daemons = Math.max(1, this.o.shared.daemonsAlive());
    const v = await local.reserve(this.share(limits, claim, daemons), claim);
    if (v.ok) {
      this.localClaims.set(claim.requestId, local);
      return v;
    }
    const max = v.limit === 'budget' ? limits.budget!.usd : limits[v.limit]!;
    return { ...v, max, share: { max: v.max, daemons } };
  }

  /** This daemon's share of `limits` while the store is unreachable (see the top of this file). */
  private share(limits: KeyLimits, claim: Claim, n: number): KeyLimits {
    const part = (v: number) => Math.max(1, Math.floor(v / n));
    const out: KeyLimits = { ...limits };
    if (limits.rpm !== undefined) out.rpm = part(limits.rpm);
    if (limits.tpm !== undefined) out.tpm = part(limits.tpm);
    if (limits.concurrency !== undefined) out.concurrency = part(limits.concurrency);
    if (limits.budget) {
      const start = periodAt(limits.budget.period, claim.at, limits.tz).start;
      const seen = this.budgets.get(claim.keyId);
      const left = seen && seen.period === periodId(limits, start) ? Math.max(0, limits.budget.usd - seen.spent - seen.held) : limits.budget.usd;
      out.budget = { usd: left / n, period: limits.budget.period };
    }
    return out;
  }

  private writeBackSoon(): void {
    if (this.writeSoon || this.closed) return;
    this.writeSoon = setTimeout(() => {
      this.writeSoon = undefined;
      if (this.o.shared.status().connected) void this.writeBack();
    }, WRITE_BACK_DELAY_MS);
    this.writeSoon.unref();
  }

  /** Writes the outbox back to the store, one write-back at a time; then reservations go there again. */
  private writeBack(): Promise<void> {
    if (this.writing) {
      this.writeAgain = true;
      return this.writing;
    }
    this.writing = (async () => {
      try {
        do {
          this.writeAgain = false;
          await this.writeBackOnce();
        } while (this.writeAgain && this.o.shared.status().connected);
      } catch (e) {
        // Unreachable again: the next return of the store tries again. Anything else is said.
        if (!unreachable(e)) this.o.log(`limits: could not write back the settlements made while the store was unreachable: ${(e as Error).message}`);
      } finally {
        this.writing = undefined;
      }
    })();
    return this.writing;
  }

  private async writeBackOnce(): Promise<void> {
    if (!this.o.shared.status().connected) return;
    const db = await this.outbox;
    for (const s of this.locals) s.flush();
    const select = db.prepare('SELECT request_id AS requestId, key_id AS keyId, at, tokens, usd FROM limit_spend ORDER BY at LIMIT ?');
    const remove = db.prepare('DELETE FROM limit_spend WHERE request_id = ?');
    let written = 0;
    for (;;) {
      const rows = (select.all(ROWS_PER_WRITE) as unknown as SettledRow[]).map((r) => ({ ...r, at: Number(r.at), tokens: Number(r.tokens), usd: Number(r.usd) }));
      if (rows.length === 0) break;
      await bounded(this.pg.record(rows), WRITE_WAIT_MS, 'the write-back');
      db.exec('BEGIN');
      try {
        for (const r of rows) remove.run(r.requestId);
        db.exec('COMMIT');
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      }
      // What this daemon knew of each budget now includes them too (a later outage's share starts from there).
      for (const r of rows) {
        const b = this.budgets.get(r.keyId);
        if (b && r.at >= b.periodStart) b.spent += r.usd;
      }
      written += rows.length;
    }
    const kept = db.prepare('SELECT id, v, state FROM limit_lease_states').all() as Array<{ id: string; v: number; state: string }>;
    if (kept.length > 0) {
      await bounded(this.pg.record([], kept.map((k) => JSON.parse(k.state) as LeaseState)), WRITE_WAIT_MS, 'the write-back');
      const done = db.prepare('DELETE FROM limit_lease_states WHERE id = ? AND v <= ?');
      for (const k of kept) done.run(k.id, k.v);
    }
    const voided = db.prepare('SELECT request_id AS requestId, key_id AS keyId FROM limit_releases').all() as Array<{ requestId: string; keyId: string }>;
    if (voided.length > 0) {
      await bounded(this.pg.release(voided), WRITE_WAIT_MS, 'the write-back');
      const done = db.prepare('DELETE FROM limit_releases WHERE request_id = ?');
      for (const c of voided) done.run(c.requestId);
    }
    if (!this.o.shared.status().connected) return;
    this.reconciled = true;
    if (written > 0) this.o.log(`limits: wrote back ${written} settlement${written === 1 ? '' : 's'} made while the store was unreachable; the shared limits count them now`);
    // A past outage's local store is let go once nothing of it is in flight.
    const holding = new Set(this.localClaims.values());
    for (const s of this.locals) if (s !== this.local && !holding.has(s)) this.locals.delete(s);
  }

  private async housekeeping(): Promise<void> {
    if (this.closed || !this.o.shared.status().connected) return;
    await this.writeBack();
    if (this.o.clock() - this.lastPrune < PRUNE_MS) return;
    try {
      const n = await this.prune();
      if (n > 0) this.o.log(`limits: pruned ${n} claim${n === 1 ? '' : 's'} older than any window or budget period needs`);
    } catch (e) {
      if (!unreachable(e)) this.o.log(`limits: pruning old claims failed: ${(e as Error).message}`);
    }
  }
}
