// Team mode's store of Responses answers: the `responses` table of the shared PostgreSQL database
// (store/pg-schema.ts, version 4), so a conversation started on one daemon continues with
// previous_response_id on any other. Its rules are the laptop store's (store/responses.ts).
//
// Writing never holds a request. An answer leaves for the database at once, not on a timer: at
// most WRITERS inserts are in flight, and the answers that come meanwhile go together in the next
// one (one statement, however many rows), so a busy daemon takes few connections from the pool its
// limit reservations use. Until its insert leaves, an answer is read from memory here. A read that
// comes while the insert is in flight waits for it to end (at most INSERT_WAIT_MS, then memory):
// it may have committed, and another daemon deleted the answer since, which memory cannot know.
//
// Reading on another daemon right after: the client can ask daemon B for the answer daemon A has
// just sent it before A's insert has committed (the insert leaves as the answer does). So a read
// that finds nothing waits for that id: every insert notifies the ids it wrote (NOTIFY, delivered at
// commit), and B's read wakes on its id, or after ARRIVAL_WAIT_MS, and reads once more. An id no
// daemon is writing (unknown, deleted) costs that wait before its 404.
//
// When the database cannot be reached, answers wait here (at most MAX_PENDING_BYTES, the oldest
// dropped beyond) and are written once it is back: new answers are still served, and this daemon's
// own recent answers still read. An answer or a chain only the database holds is then a 503
// (response_store_unavailable), never a 404 that would tell the client it is gone.
import { GatewayError } from '../http/errors.js';
import { followChain, fromRow, heldAnswer, retentionStart, toRow, type Chain, type ResponseStore, type ResponsesSettings, type Row, type StoredResponse } from './responses.js';
import { isConnectionError, QUIET_MS, type SharedStore } from './shared-store.js';

/** The NOTIFY channel an insert announces its ids on. */
const CHANNEL = 'gateway_responses';
/**
 * How long a read that found nothing waits for another daemon's insert of it. Measured on loopback,
 * an insert commits about half a millisecond after the answer left (p99 ~10 ms on a busy machine),
 * and a client's next turn reached the other daemon first in about one turn in eight; a second
 * covers a loaded database, and is what an id no daemon is writing costs before its 404.
 */
export const ARRIVAL_WAIT_MS = 1_000;
/**
 * How long a read on the daemon that wrote an answer waits for that answer's insert in flight (it
 * then reads the database). Its reply normally comes within a millisecond; a store slower than
 * this has the read go on from memory, as before the insert.
 */
const INSERT_WAIT_MS = 1_000;
/** Inserts in flight at once; what comes meanwhile waits for one of them and goes in the next. */
const WRITERS = 2;
/** At most this many answers, or about this many bytes, to one insert. */
const CHUNK_ROWS = 200;
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Answers kept in memory while the database cannot be reached; beyond it the oldest are dropped. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** How often each daemon drops the expired answers and those over the size cap. */
const PRUNE_MS = 3_600_000;
/**
 * How long an insert and a prune may go unanswered before they count as cut off (a silent store:
 * the connection stays open and nothing comes back). An insert cut off waits here as if the store
 * were unreachable, and is written again (by id, so once) when it is back.
 */
const WRITE_QUIET_MS = 30_000;
const PRUNE_QUIET_MS = 60_000;
/** How long a stop waits for the answers still being written (it must end: `gateway stop` waits on it). */
const CLOSE_WAIT_MS = 3_000;
/** The longest chain read (a guard: chains we mint never loop). */
const MAX_CHAIN = 100_000;

const COLUMNS = 'id, key_id, created_at, previous_id, input, response, held_by';
// One statement for any number of rows (arrays, one per column); each id written is notified at commit.
const INSERT = `
  WITH written AS (
    INSERT INTO responses (id, key_id, created_at, previous_id, bytes, input, response, held_by)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[])
    ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, previous_id = EXCLUDED.previous_id, bytes = EXCLUDED.bytes,
      input = EXCLUDED.input, response = EXCLUDED.response, held_by = EXCLUDED.held_by
      WHERE responses.key_id = EXCLUDED.key_id
    RETURNING id
  ) SELECT count(pg_notify('${CHANNEL}', id)) FROM written`;
// The answer and, in the same read, the older links of its chain while they are the same key's, kept and not held.
const CHAIN = `
  WITH RECURSIVE chain AS (
    SELECT ${COLUMNS}, 1 AS depth FROM responses WHERE id = $1
    UNION ALL
    SELECT ${COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')}, c.depth + 1 FROM chain c JOIN responses r ON r.id = c.previous_id
     WHERE c.key_id = $2 AND c.created_at >= $3 AND c.held_by IS NULL AND c.depth < ${MAX_CHAIN}
  ) SELECT ${COLUMNS} FROM chain ORDER BY depth`;
// Expired answers, then the oldest of the rest while those newer than them take more than the cap.
const PRUNE = `
  WITH expired AS (DELETE FROM responses WHERE created_at < $1 RETURNING 1),
  capped AS (
    DELETE FROM responses WHERE id IN (
      SELECT id FROM (SELECT id, sum(bytes) OVER (ORDER BY created_at DESC, id DESC) AS newer FROM responses WHERE created_at >= $1) x WHERE newer > $2
    ) RETURNING 1
  ) SELECT (SELECT count(*) FROM expired) AS expired, (SELECT count(*) FROM capped) AS capped`;

export interface PgResponseOptions {
  clock?: () => number;
  log?: (line: string) => void;
  /** How long a read that found nothing waits for another daemon's insert (ARRIVAL_WAIT_MS). */
  arrivalWaitMs?: number;
  /** How long a read waits for this daemon's insert of the answer in flight (INSERT_WAIT_MS). */
  insertWaitMs?: number;
}

/** An answer not committed yet; `write`: its insert, while in flight. */
interface Pending { row: Row; bytes: number; write?: Promise<void> }

/** Row as PostgreSQL gives it back (a bigint is a string). */
type DbRow = Omit<Row, 'created_at'> & { created_at: string };

export class PgResponseStore implements ResponseStore {
  /** Answers not committed yet, oldest first (an answer put again moves to the end). */
  private readonly pending = new Map<string, Pending>();
  private pendingBytes = 0;
  private readonly writes = new Set<Promise<void>>();
  /** Reads waiting for an id: what wakes each. */
  private readonly arrivals = new Map<string, Set<() => void>>();
  private readonly clock: () => number;
  private readonly log: (line: string) => void;
  private readonly arrivalWaitMs: number;
  private readonly insertWaitMs: number;
  private readonly unsubscribe: Array<() => void>;
  private readonly pruneTimer: NodeJS.Timeout;
  private pruning: Promise<void> = Promise.resolve();
  private dropped = 0;
  private closed = false;
  /** Reads that found nothing and waited for another daemon's insert, and those an insert woke. */
  readonly stats = { waited: 0, woken: 0 };
  private waitingNow = 0;

  constructor(private readonly shared: SharedStore, private settings: ResponsesSettings, o: PgResponseOptions = {}) {
    this.clock = o.clock ?? Date.now;
    this.log = o.log ?? (() => {});
    this.arrivalWaitMs = o.arrivalWaitMs ?? ARRIVAL_WAIT_MS;
    this.insertWaitMs = o.insertWaitMs ?? INSERT_WAIT_MS;
    this.unsubscribe = [
      shared.on(CHANNEL, (id) => this.arrived(id)),
      // Notifications sent while the listening connection was down are lost: every waiting read reads again.
      shared.onReconnect(() => { for (const id of [...this.arrivals.keys()]) this.arrived(id); }),
      // The database is back: what waited here is written.
      shared.onHealth((h) => { if (h.connected) this.pump(); }),
    ];
    this.pruneTimer = setInterval(() => { this.pruning = this.prune().catch(() => {}); }, PRUNE_MS);
    this.pruneTimer.unref();
    // Each daemon prunes once at start too, as the laptop's store does when it opens.
    this.pruning = this.prune().catch(() => {});
  }

  /** Reads waiting right now: for an answer another daemon has not committed yet, or for this one's insert of it to end. */
  get waiting(): number { return this.waitingNow; }

  setSettings(settings: ResponsesSettings): void { this.settings = settings; }

  put(r: StoredResponse): void {
    const row = toRow(r);
    this.forget(row.id);
    const p: Pending = { row, bytes: row.input.length + row.response.length };
    this.pending.set(row.id, p);
    this.pendingBytes += p.bytes;
    if (this.pendingBytes > MAX_PENDING_BYTES) this.dropOldest();
    this.pump();
  }

  putHeld(id: string, keyId: string, provider: string): void {
    this.put(heldAnswer(id, keyId, provider, this.clock()));
  }

  async get(id: string, keyId: string): Promise<StoredResponse | undefined> {
    const [r] = await this.links(id, () => this.read(id, `SELECT ${COLUMNS} FROM responses WHERE id = $1`, [id]));
    return r && this.visible(r, keyId) ? r : undefined;
  }

  conversation(id: string, keyId: string): Promise<Chain | undefined> {
    const since = retentionStart(this.settings, this.clock());
    return followChain(id, (r) => this.visible(r, keyId), (link) => this.links(link, () => this.read(link, CHAIN, [link, keyId, since])));
  }

  async delete(id: string, keyId: string): Promise<boolean> {
    if (!(await this.get(id, keyId))) return false;
    const local = this.pending.get(id);
    this.forget(id);
    if (local && !local.write) return true; // never left this daemon
    // An insert in flight lands before the deletion, never after it.
    await Promise.all([...this.writes]);
    await this.read(id, 'DELETE FROM responses WHERE id = $1 AND key_id = $2', [id, keyId]);
    return true;
  }

  /** Writes every answer waiting here (while the database can be reached). */
  async flush(): Promise<void> {
    this.pump();
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  /** Drops the expired answers and the oldest beyond the size cap, the whole team's. */
  async prune(): Promise<void> {
    const { rows } = await this.shared.query<{ expired: string; capped: string }>(PRUNE, [retentionStart(this.settings, this.clock()), this.settings.maxBytes], PRUNE_QUIET_MS);
    const { expired, capped } = rows[0]!;
    if (expired !== '0' || capped !== '0') this.log(`responses: dropped ${expired} expired and ${capped} over the size cap`);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pruneTimer);
    for (const off of this.unsubscribe) off();
    // A prune or an insert on a silent store ends only at its timeout: the stop waits a little, not that long.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.pruning.then(() => this.flush()),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_WAIT_MS); }),
    ]);
    clearTimeout(timer);
    if (this.pending.size > 0) this.log(`responses: ${this.pending.size} answer(s) not written to the store, which cannot be reached: ${this.shared.status().lastError ?? 'unreachable'}`);
    for (const id of [...this.arrivals.keys()]) this.arrived(id);
  }

  private visible(r: StoredResponse, keyId: string): boolean {
    return r.keyId === keyId && r.createdAt >= retentionStart(this.settings, this.clock());
  }

  /**
   * The answer `id` and what `query` reads after it: from memory while its insert has not
   * committed; else from the database, and when it is not there yet, once more after it arrives
   * (or after the wait).
   */
  private async links(id: string, query: () => Promise<DbRow[]>): Promise<StoredResponse[]> {
    let local = this.pending.get(id);
    if (local?.write) {
      await this.ended(local.write);
      local = this.pending.get(id); // gone if its insert committed: the database says what is there now
    }
    if (local) return [fromRow(local.row)];
    const arrival = this.expect(id);
    try {
      let rows = await query();
      if (rows.length === 0 && !this.closed) {
        this.stats.waited++;
        if (await arrival.wait(this.arrivalWaitMs)) this.stats.woken++;
        const put = this.pending.get(id); // put here meanwhile
        if (put) return [fromRow(put.row)];
        rows = await query();
      }
      return rows.map((r) => fromRow({ ...r, created_at: Number(r.created_at) }));
    } finally {
      arrival.cancel();
    }
  }

  /** One query for a read of `id`: a 503 in the client's shape while the database cannot be reached. */
  private async read(id: string, text: string, values: unknown[]): Promise<DbRow[]> {
    const unreachable = () => new GatewayError('response_store_unavailable', `the stored response '${id}' cannot be read now: ${this.shared.status().lastError ?? 'the shared store cannot be reached'}; try again shortly`);
    if (!this.shared.status().connected) throw unreachable();
    try {
      // A silent store (a partition) would hold the request for as long as the kernel keeps the connection.
      return (await this.shared.query<DbRow>(text, values, QUIET_MS)).rows;
    } catch (e) {
      if (isConnectionError(e)) throw unreachable();
      throw e;
    }
  }

  /** `write` ended, or INSERT_WAIT_MS went by (a store that slow: the read goes on from memory). */
  private async ended(write: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    this.waitingNow++;
    try {
      await Promise.race([write, new Promise<void>((resolve) => { timer = setTimeout(resolve, this.insertWaitMs); })]);
    } finally {
      clearTimeout(timer);
      this.waitingNow--;
    }
  }

  /** Registers a read waiting for `id` before it looks, so an insert committed meanwhile is not missed. */
  private expect(id: string): { wait(ms: number): Promise<boolean>; cancel(): void } {
    let arrived = false;
    let wake: (() => void) | undefined;
    const fn = () => { arrived = true; wake?.(); };
    let set = this.arrivals.get(id);
    if (!set) this.arrivals.set(id, set = new Set());
    set.add(fn);
    return {
      wait: (ms) => {
        if (arrived) return Promise.resolve(true);
        this.waitingNow++;
        return new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), ms);
          wake = () => { clearTimeout(timer); resolve(true); };
        }).finally(() => { this.waitingNow--; });
      },
      cancel: () => {
        set.delete(fn);
        if (set.size === 0 && this.arrivals.get(id) === set) this.arrivals.delete(id);
      },
    };
  }

  private arrived(id: string): void {
    for (const fn of this.arrivals.get(id) ?? []) fn();
  }

  /** Starts inserts for what waits, up to WRITERS at once, while the database can be reached. */
  private pump(): void {
    while (this.writes.size < WRITERS && this.shared.status().connected) {
      const batch: Pending[] = [];
      let bytes = 0;
      for (const p of this.pending.values()) {
        if (p.write) continue;
        if (batch.length === CHUNK_ROWS || (batch.length > 0 && bytes + p.bytes > CHUNK_BYTES)) break;
        batch.push(p);
        bytes += p.bytes;
      }
      if (batch.length === 0) return;
      const w: Promise<void> = this.write(batch).finally(() => {
        this.writes.delete(w);
        this.pump();
      });
      this.writes.add(w);
      for (const p of batch) p.write = w; // before the next batch is gathered
    }
  }

  /** One insert; committed answers leave memory. Unreachable: they wait for the database to be back. */
  private async write(batch: Pending[]): Promise<void> {
    const cols: unknown[][] = [[], [], [], [], [], [], [], []];
    for (const { row, bytes } of batch) {
      const values = [row.id, row.key_id, row.created_at, row.previous_id, bytes, row.input, row.response, row.held_by];
      for (let i = 0; i < values.length; i++) cols[i]!.push(values[i]);
    }
    try {
      await this.shared.query(INSERT, cols, WRITE_QUIET_MS);
    } catch (e) {
      if (isConnectionError(e)) {
        for (const p of batch) p.write = undefined;
        return;
      }
      this.log(`responses: could not write ${batch.length} answer(s) to the store: ${(e as Error).message}`);
    }
    for (const p of batch) if (this.pending.get(p.row.id) === p) this.forget(p.row.id);
  }

  private forget(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.pendingBytes -= p.bytes;
  }

  /** Over MAX_PENDING_BYTES (the database unreachable for long): the oldest answers not in flight go. */
  private dropOldest(): void {
    const before = this.dropped;
    for (const [id, p] of this.pending) {
      if (this.pendingBytes <= MAX_PENDING_BYTES) break;
      if (p.write) continue;
      this.forget(id);
      this.dropped++;
    }
    // One line per thousand dropped, not one per answer.
    if (Math.floor(before / 1000) !== Math.floor(this.dropped / 1000) || before === 0) {
      this.log(`responses: ${this.dropped} answer(s) dropped unwritten so far: the store cannot be reached and those waiting took more than ${MAX_PENDING_BYTES / 1024 / 1024} MB`);
    }
  }
}
