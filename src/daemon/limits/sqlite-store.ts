// The laptop's limit store: one daemon owns the state directory, so its event loop is the lock.
// Each key's minute windows, requests in flight and spend in the current period are counted in
// memory, where a reservation is checked and held in one synchronous step (no await between the
// check and the hold, so concurrent requests can never all pass). What must outlive the process
// is written to the usage database before the settlement returns: one ledger row per settled
// request (`limit_spend`, keyed by request id, so settling twice counts once). A daemon that
// starts again reads each key's spend and last minute back from the ledger; the claims of the
// requests a killed daemon had in flight died with it, which releases them.
import { StatementCache, type Database, type Statement } from '../store/sqlite.js';
import { periodAt, WINDOW_MS, type KeyLimits } from './limits.js';
import type { Claim, LimitStore, Standing, Used, Verdict } from './store.js';

/** Ledger rows older than this are folded into one total per key (a month is at most 31 days). */
export const LEDGER_DAYS = 40;
const DAY = 86_400_000;
/** How long a settlement's ledger row may wait to be written with others: what a killed daemon can lose. */
export const FLUSH_MS = 25;
const ROWS_PER_INSERT = 50;
/** Sums of cents are not exact in binary: a hundred claims of $0.01 fit a $1 budget. */
export const USD_EPSILON = 1e-9;
const insertSql = (n: number) => `INSERT OR IGNORE INTO limit_spend (request_id, key_id, at, usd, tokens) VALUES ${Array.from({ length: n }, () => '(?, ?, ?, ?, ?)').join(', ')}`;

/** One request in a key's sliding minute: when it was admitted and its tokens (held, then settled). */
interface Entry { id: string; at: number; tokens: number }

class KeyState {
  /**
   * Admissions, oldest first; those before `head` have left the sliding minute. A busy key admits
   * thousands a minute, so leaving is a moved index (compacted now and then), and the minute's
   * tokens are a running sum, not a loop per request.
   */
  private readonly minute: Entry[] = [];
  private head = 0;
  private tokenSum = 0;
  /** The minute's entries by request id, so a settlement finds its own. */
  private readonly byId = new Map<string, Entry>();
  /** Claims not yet settled or released. */
  readonly open = new Map<string, Claim>();
  /** The budget period whose settled spend `spent` is (`<period>:<tz>:<start>`), and its start. */
  period = '';
  periodStart = 0;
  spent = 0;
  constructor(readonly keyId: string) {}

  admit(e: Entry): void {
    this.minute.push(e);
    this.byId.set(e.id, e);
    this.tokenSum += e.tokens;
  }

  /** Requests in the sliding minute. */
  get requests(): number { return this.minute.length - this.head; }
  /** Tokens in the sliding minute: held by open claims, used by settled ones. */
  get tokens(): number { return this.tokenSum; }
  /** The `i`th oldest admission in the minute. */
  at(i: number): Entry { return this.minute[this.head + i]!; }

  /** A settled request's place in the minute now says what it used (kept also when its claim expired first). */
  used(id: string, tokens: number): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.tokenSum += tokens - e.tokens;
    e.tokens = tokens;
  }

  forget(now: number): void {
    while (this.head < this.minute.length && this.minute[this.head]!.at <= now - WINDOW_MS) {
      const e = this.minute[this.head++]!;
      this.byId.delete(e.id);
      this.tokenSum -= e.tokens;
    }
    if (this.head > 1024 && this.head * 2 > this.minute.length) {
      this.minute.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Tokens held by open claims in the minute. */
  heldTokens(): number {
    let sum = 0;
    for (const id of this.open.keys()) sum += this.byId.get(id)?.tokens ?? 0;
    return sum;
  }

  /** USD held by open claims admitted in the period starting at `start`. */
  held(start: number): number {
    let sum = 0;
    for (const claim of this.open.values()) if (claim.at >= start) sum += claim.usd;
    return sum;
  }
}

export class SqliteLimitStore implements LimitStore {
  private readonly keys = new Map<string, KeyState>();
  private readonly insert: Statement;
  private readonly statements: StatementCache;
  private lastFold = 0;
  /** Ledger rows settled this turn, written together (flush). */
  private queued: Array<[string, string, number, number, number]> = [];
  private flushing = false;

  constructor(private readonly db: Database, private readonly clock: () => number) {
    this.insert = db.prepare(insertSql(1));
    this.statements = new StatementCache(db);
  }

  reserve(limits: KeyLimits, claim: Claim): Promise<Verdict> {
    try {
      return Promise.resolve(this.reserveNow(limits, claim));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private reserveNow(limits: KeyLimits, claim: Claim): Verdict {
    const now = claim.at;
    const k = this.state(claim.keyId, now);
    this.expire(k, now);
    k.forget(now);

    if (limits.concurrency !== undefined && k.open.size + 1 > limits.concurrency) {
      return { ok: false, limit: 'concurrency', max: limits.concurrency, used: k.open.size, held: 0, asked: 1, retryAfterMs: 1000 };
    }
    if (limits.rpm !== undefined && k.requests + 1 > limits.rpm) {
      // The request fits once enough of the oldest admissions have left the sliding minute.
      const leave = k.at(k.requests - limits.rpm);
      return { ok: false, limit: 'rpm', max: limits.rpm, used: k.requests, held: 0, asked: 1, retryAfterMs: leave.at + WINDOW_MS - now };
    }
    if (limits.tpm !== undefined) {
      const inWindow = k.tokens;
      // A request larger than the whole minute's tokens runs alone: once nothing else is in the minute.
      if (inWindow + claim.tokens > limits.tpm && !(claim.tokens > limits.tpm && k.requests === 0)) {
        const heldTokens = k.heldTokens();
        const refusal = { ok: false as const, limit: 'tpm' as const, max: limits.tpm, used: inWindow - heldTokens, held: heldTokens, asked: claim.tokens };
        if (claim.tokens > limits.tpm) return { ...refusal, retryAfterMs: k.at(k.requests - 1).at + WINDOW_MS - now };
        let free = limits.tpm - inWindow;
        for (let i = 0; i < k.requests; i++) {
          const e = k.at(i);
          free += e.tokens;
          if (free >= claim.tokens) return { ...refusal, retryAfterMs: e.at + WINDOW_MS - now };
        }
        return refusal;
      }
    }
    if (limits.budget !== undefined) {
      const { start, end } = this.period(k, limits, now);
      const held = k.held(start);
      if (k.spent + held + claim.usd > limits.budget.usd + USD_EPSILON) {
        return { ok: false, limit: 'budget', max: limits.budget.usd, used: k.spent, held, asked: claim.usd, ...(end === undefined ? {} : { resetAt: end }) };
      }
    }
    k.admit({ id: claim.requestId, at: claim.at, tokens: claim.tokens });
    k.open.set(claim.requestId, claim);
    return { ok: true };
  }

  settle(claim: Claim, used: Used): Promise<void> {
    try {
      const k = this.state(claim.keyId, claim.at);
      if (k.open.delete(claim.requestId)) {
        // Its own open claim: settled here once. The ledger row is written with the others settled
        // within FLUSH_MS, in one transaction: a commit per row cost 26 µs, a third of a request.
        this.count(k, claim, used);
        this.queued.push([claim.requestId, claim.keyId, claim.at, used.usd, used.tokens]);
        if (!this.flushing) {
          this.flushing = true;
          setTimeout(() => this.flush(), FLUSH_MS).unref();
        }
      } else {
        // Released (expired) first, or settled before: the ledger's key says whether it counts.
        this.flush();
        const { changes } = this.insert.run(claim.requestId, claim.keyId, claim.at, used.usd, used.tokens);
        if (Number(changes) > 0) this.count(k, claim, used);
      }
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private count(k: KeyState, claim: Claim, used: Used): void {
    k.used(claim.requestId, used.tokens);
    if (k.period !== '' && claim.at >= k.periodStart) k.spent += used.usd;
  }

  /** Writes the queued ledger rows in one transaction; on failure they stay queued for the next. */
  flush(): void {
    this.flushing = false;
    if (this.queued.length === 0) return;
    const rows = this.queued;
    this.queued = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        // Many rows to a statement: a statement run per row cost more than the rows themselves.
        for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
          const chunk = rows.slice(i, i + ROWS_PER_INSERT);
          this.statements.get(insertSql(chunk.length)).run(...chunk.flat());
        }
        this.db.exec('COMMIT');
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
    } catch {
      this.queued = rows.concat(this.queued);
      if (!this.flushing) { this.flushing = true; setTimeout(() => this.flush(), 1000).unref(); } // the disk may come back
      return;
    }
    try {
      this.fold();
    } catch {
      // Tried again in an hour; the rows stay in the ledger meanwhile, where they count the same.
    }
  }

  standing(keyId: string, limits: KeyLimits, now: number): Promise<Standing> {
    const k = this.state(keyId, now);
    this.expire(k, now);
    k.forget(now);
    const out: Standing = {};
    if (limits.budget) {
      const { start, end } = this.period(k, limits, now);
      const held = k.held(start);
      out.budget = {
        max: limits.budget.usd, period: limits.budget.period, spent: k.spent, held,
        left: Math.max(0, limits.budget.usd - k.spent - held), ...(end === undefined ? {} : { resetAt: end }),
      };
    }
    if (limits.rpm !== undefined) out.rpm = { max: limits.rpm, used: k.requests };
    if (limits.tpm !== undefined) out.tpm = { max: limits.tpm, used: k.tokens };
    if (limits.concurrency !== undefined) out.concurrency = { max: limits.concurrency, used: k.open.size };
    return Promise.resolve(out);
  }

  close(): Promise<void> {
    this.flush();
    this.db.close();
    return Promise.resolve();
  }

  /** A key's state; on first sight, its last minute read back from the ledger. */
  private state(keyId: string, now: number): KeyState {
    let k = this.keys.get(keyId);
    if (k) return k;
    k = new KeyState(keyId);
    const rows = this.db.prepare('SELECT request_id AS id, at, tokens FROM limit_spend WHERE key_id = ? AND at > ? ORDER BY at')
      .all(keyId, now - WINDOW_MS) as unknown as Entry[];
    for (const r of rows) k.admit({ id: r.id, at: r.at, tokens: r.tokens });
    this.keys.set(keyId, k);
    return k;
  }

  /** The budget period containing `now`; when it changed (a new day, another period or zone), its spend is read from the ledger. */
  private period(k: KeyState, limits: KeyLimits, now: number): { start: number; end: number | undefined } {
    const bounds = periodAt(limits.budget!.period, now, limits.tz);
    const id = `${limits.budget!.period}:${limits.tz ?? 'UTC'}:${bounds.start}`;
    if (k.period !== id) {
      this.flush(); // what was settled a moment ago is read back too
      k.spent = this.spentSince(k.keyId, bounds.start);
      k.period = id;
      k.periodStart = bounds.start;
    }
    return bounds;
  }

  /**
   * Settled spend since `start`: the ledger, what was folded out of it (for a total), and what the
   * usage history holds of the key's requests that the ledger does not (spend from before the key
   * had limits), back to the ledger's own horizon.
   */
  private spentSince(keyId: string, start: number): number {
    const ledger = this.db.prepare('SELECT COALESCE(SUM(usd), 0) AS usd FROM limit_spend WHERE key_id = ? AND at >= ?').get(keyId, start) as { usd: number };
    const folded = start === 0
      ? (this.db.prepare('SELECT usd FROM limit_folded WHERE key_id = ?').get(keyId) as { usd: number } | undefined)?.usd ?? 0
      : 0;
    const before = this.db.prepare(`SELECT COALESCE(SUM(cost), 0) AS usd FROM requests
      WHERE key_id = ? AND started_at >= ? AND cost IS NOT NULL
        AND request_id NOT IN (SELECT request_id FROM limit_spend WHERE key_id = ?)`)
      .get(keyId, Math.max(start, this.clock() - LEDGER_DAYS * DAY), keyId) as { usd: number };
    return ledger.usd + folded + before.usd;
  }

  /** Claims whose request never settled are released once they expire (the upstream timeout has passed). */
  private expire(k: KeyState, now: number): void {
    for (const [id, claim] of k.open) if (claim.expiresAt <= now) k.open.delete(id);
  }

  /** At most hourly: ledger rows past the horizon become one total per key (what a total budget needs of them). */
  private fold(): void {
    const now = this.clock();
    if (now - this.lastFold < 3_600_000) return;
    this.lastFold = now;
    const horizon = now - LEDGER_DAYS * DAY;
    this.db.exec('BEGIN IMMEDIATE');
    try {
      this.db.prepare(`INSERT INTO limit_folded (key_id, usd) SELECT key_id, SUM(usd) FROM limit_spend WHERE at < ? GROUP BY key_id
        ON CONFLICT (key_id) DO UPDATE SET usd = usd + excluded.usd`).run(horizon);
      this.db.prepare('DELETE FROM limit_spend WHERE at < ?').run(horizon);
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.exec('ROLLBACK');
      throw e;
    }
  }
}
