// The gateway's own store of Responses API answers, for `previous_response_id` and
// GET/DELETE /v1/responses/{id} on models that are not OpenAI's. Answers OpenAI keeps itself (its
// models, through the fast path) are recorded here only by id and owner, so that the same client
// can read them back through the door and no other proxy key can. The rules every store keeps are
// the ResponseStore interface's below; in team mode the answers live in PostgreSQL
// (store/pg-responses.ts). The laptop's store is one SQLite
// file (`responses.db`, 0600, set up as the usage history's: store/sqlite.ts) beside the usage
// history. A request never waits on the disk: new answers and deletions are queued in memory and
// written half a second later (and on close), 200 to a transaction (store/batch-writer.ts); reads
// look at that queue first. Each answer belongs to the proxy key that made it;
// another key sees nothing. Answers older than the retention are gone (judged on read, so expiry
// is exact between prunes), and when the answers take more than the cap the oldest go first.
import { join } from 'node:path';
import { BatchWriter } from './batch-writer.js';
import { openDatabase, startCheckpointer, StatementCache, transaction, type Checkpointer, type Database } from './sqlite.js';

export const RESPONSES_DB_FILE = 'responses.db';
const DAY_MS = 86_400_000;
/**
 * Answers per write transaction, with the event loop free in between: a busy daemon queues
 * thousands per half second, and one transaction for all of them held every request for tens of
 * milliseconds (the bench's p99).
 */
const FLUSH_CHUNK = 200;

export interface ResponsesSettings {
  retentionDays: number;
  /** The most the stored answers may take, in bytes of JSON; the oldest are dropped beyond it. */
  maxBytes: number;
}

export const RESPONSES_DEFAULTS: Readonly<ResponsesSettings> = { retentionDays: 30, maxBytes: 256 * 1024 * 1024 };

/** The `responses` section of config.json, read leniently: a bad value keeps its default, with a warning. */
export function parseResponsesSettings(raw: unknown): { settings: ResponsesSettings; warnings: string[] } {
  const warnings: string[] = [];
  const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const settings = { ...RESPONSES_DEFAULTS };
  const days = obj.retentionDays;
  if (typeof days === 'number' && Number.isFinite(days) && days > 0 && days <= 36_500) settings.retentionDays = days;
  else if (days !== undefined) warnings.push(`config responses.retentionDays must be a number of days between 0 and 36500; using ${RESPONSES_DEFAULTS.retentionDays}`);
  const mb = obj.maxMegabytes;
  if (typeof mb === 'number' && Number.isFinite(mb) && mb >= 1 && mb <= 1_000_000) settings.maxBytes = Math.floor(mb * 1024 * 1024);
  else if (mb !== undefined) warnings.push(`config responses.maxMegabytes must be a number between 1 and 1000000; using ${RESPONSES_DEFAULTS.maxBytes / 1024 / 1024}`);
  return { settings, warnings };
}

/** One stored answer: the request's own input items, the answer's output items, the whole response object. */
export interface StoredResponse {
  id: string;
  keyId: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  previousId: string | null;
  input: unknown[];
  output: unknown[];
  response: Record<string, unknown>;
  /** `response` as the client got it, serialised: written as it is (the output items are read back from it). */
  responseJson?: string;
  /** The provider whose API keeps this answer (input, output and response then empty here). */
  heldBy?: string;
}

/** What a previous_response_id stands for: the stored conversation, or an answer a provider keeps. */
export type Chain = { items: unknown[] } | { heldBy: string };

/**
 * Where the Responses door keeps its answers (the laptop's SQLite file, or team mode's PostgreSQL).
 * Every store: an answer belongs to the proxy key that made it and another key sees nothing;
 * an answer older than the retention is gone, judged on read; past the size cap the oldest go;
 * keeping an answer never makes the request wait for the database.
 */
export interface ResponseStore {
  /** Keeps an answer; returns at once (written in the background). */
  put(r: StoredResponse): void;
  /** Records an answer a provider keeps itself, as the key that made it. */
  putHeld(id: string, keyId: string, provider: string): void;
  /** The answer `id` as `keyId` may see it: undefined when unknown, expired, deleted, or another key's. */
  get(id: string, keyId: string): Promise<StoredResponse | undefined>;
  /** Forgets `id` when `keyId` may see it; true when it did. */
  delete(id: string, keyId: string): Promise<boolean>;
  /**
   * The conversation `id` ends: every input and output item of its chain, oldest first, or the
   * provider that keeps it; undefined when a link is missing.
   */
  conversation(id: string, keyId: string): Promise<Chain | undefined>;
  setSettings(settings: ResponsesSettings): void;
  /** Writes what is waiting to be written now. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** The earliest creation time still within the retention at `now`. */
export function retentionStart(settings: ResponsesSettings, now: number): number {
  return now - settings.retentionDays * DAY_MS;
}

/** The record of an answer `provider` keeps itself: its id and owner only. */
export function heldAnswer(id: string, keyId: string, provider: string, createdAt: number): StoredResponse {
  return { id, keyId, createdAt, previousId: null, input: [], output: [], response: {}, heldBy: provider };
}

/**
 * Follows the chain that ends at `id`. `links(id)` gives the stored answer `id` (any key's) and,
 * when it can in the same read, the older links after it, newest first; none when `id` is unknown.
 * `visible` is the reader's view (its own key's, unexpired).
 */
export async function followChain(id: string, visible: (r: StoredResponse) => boolean, links: (id: string) => Promise<StoredResponse[]>): Promise<Chain | undefined> {
  const chain: StoredResponse[] = [];
  const seen = new Set<string>();
  let next: string | null = id;
  walk: while (next !== null) {
    const found = await links(next);
    if (found[0]?.id !== next) return undefined;
    for (const r of found) {
      if (r.id !== next) break; // the read stopped short of where the chain goes: read on from `next`
      if (seen.has(next)) break walk; // cannot happen with ids we mint; guards a hand-edited store
      seen.add(next);
      if (!visible(r)) return undefined;
      if (r.heldBy !== undefined) return chain.length === 0 ? { heldBy: r.heldBy } : undefined;
      chain.push(r);
      next = r.previousId;
      if (next === null) break walk;
    }
  }
  return { items: chain.reverse().flatMap((r) => [...r.input, ...r.output]) };
}

/** One answer as both stores keep it: the input items and the whole response, serialised as the client got them. */
export interface Row { id: string; key_id: string; created_at: number; previous_id: string | null; input: string; response: string; held_by: string | null }
/** A queued deletion. */
interface Gone { gone: string }

/** The laptop's store: one SQLite file in the state directory. */
export class SqliteResponseStore implements ResponseStore {
  private db: Database | undefined;
  private statements: StatementCache | undefined;
  private opening: Promise<Database> | undefined;
  /**
   * Answers and deletions not written yet, by id: answers already as the rows they become (two
   * strings each, little for the GC to carry).
   */
  private readonly changes: BatchWriter<Row | Gone> = new BatchWriter<Row | Gone>({
    chunk: FLUSH_CHUNK,
    key: (c) => ('gone' in c ? c.gone : c.id),
    write: (batch) => this.write(batch),
    onError: (e) => this.log(`responses: could not write the store: ${e.message}`),
  });
  private timer: NodeJS.Timeout | undefined;
  private lastPrune = 0;
  /** The `bytes` of every written answer, kept as they are written and deleted (summed once, on open). */
  private totalBytes = 0;
  private checkpointer: Checkpointer | undefined;

  constructor(
    private readonly dir: string,
    private settings: ResponsesSettings,
    private readonly clock: () => number = Date.now,
    private readonly log: (line: string) => void = () => {},
    private readonly flushMs = 500,
  ) {}

  get path(): string { return join(this.dir, RESPONSES_DB_FILE); }

  setSettings(settings: ResponsesSettings): void { this.settings = settings; }

  /** Keeps an answer (written with the next batch). */
  put(r: StoredResponse): void {
    this.changes.add(toRow(r));
    this.schedule();
  }

  async get(id: string, keyId: string): Promise<StoredResponse | undefined> {
    const r = await this.find(id);
    return r && this.visible(r, keyId) ? r : undefined;
  }

  async delete(id: string, keyId: string): Promise<boolean> {
    if (!(await this.get(id, keyId))) return false;
    this.changes.add({ gone: id });
    this.schedule();
    return true;
  }

  putHeld(id: string, keyId: string, provider: string): void {
    this.put(heldAnswer(id, keyId, provider, this.clock()));
  }

  conversation(id: string, keyId: string): Promise<Chain | undefined> {
    return followChain(id, (r) => this.visible(r, keyId), async (link) => {
      const r = await this.find(link);
      return r ? [r] : [];
    });
  }

  /** The answer `id` as stored, whoever's: the queue first, then the file. */
  private async find(id: string): Promise<StoredResponse | undefined> {
    const queued = this.changes.get(id);
    if (queued && 'gone' in queued) return undefined;
    let row = queued;
    if (!row) {
      await this.open();
      row = this.statements!.get('SELECT * FROM responses WHERE id = ?').get(id) as Row | undefined;
      if (!row) return undefined;
    }
    return fromRow(row);
  }

  private visible(r: StoredResponse, keyId: string): boolean {
    return r.keyId === keyId && r.createdAt >= retentionStart(this.settings, this.clock());
  }

  /**
   * Writes what is queued now (also run by the timer and on close), FLUSH_CHUNK answers to a
   * transaction with the event loop free in between; one flush at a time: another waits for it,
   * then writes what is still queued.
   */
  async flush(): Promise<void> {
    if (this.changes.size === 0) return this.changes.flush().then(() => undefined); // waits for one running
    const db = await this.open();
    if ((await this.changes.flush()) > 0 && this.clock() - this.lastPrune > 3_600_000) this.prune(db);
  }

  /** One transaction; on failure (logged) nothing leaves the queue. */
  private write(batch: Array<Row | Gone>): void {
    const statements = this.statements!;
    const insert = statements.get('INSERT OR REPLACE INTO responses (id, key_id, created_at, previous_id, bytes, input, response, held_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const remove = statements.get('DELETE FROM responses WHERE id = ? RETURNING bytes');
    let added = 0;
    transaction(this.db!, () => {
      for (const r of batch) {
        if ('gone' in r) {
          added -= Number((remove.get(r.gone) as { bytes: number } | undefined)?.bytes ?? 0);
          continue;
        }
        const bytes = r.input.length + r.response.length;
        insert.run(r.id, r.key_id, r.created_at, r.previous_id, bytes, r.input, r.response, r.held_by);
        added += bytes;
      }
    });
    this.totalBytes += added;
  }

  /**
   * Drops expired answers, then the oldest while the answers take more than the cap. Answers are
   * written oldest first, so both are a prefix of the table in rowid order: the walk stops at the
   * first answer it keeps, and no index on the time (a write per answer) is needed. An answer whose
   * clock went backwards may outlive this by a prune; reads judge expiry exactly anyway.
   */
  prune(db: Database | undefined = this.db): void {
    if (!db) return;
    this.lastPrune = this.clock();
    const cutoff = retentionStart(this.settings, this.clock());
    let over = this.totalBytes - this.settings.maxBytes;
    let expired = 0;
    let capped = 0;
    let freed = 0;
    let last: number | undefined;
    const oldest = db.prepare('SELECT rowid AS rowid, created_at, bytes FROM responses ORDER BY rowid').iterate() as Iterable<{ rowid: number; created_at: number; bytes: number }>;
    for (const r of oldest) {
      if (r.created_at < cutoff) expired++;
      else if (over > 0) capped++;
      else break;
      over -= r.bytes;
      freed += r.bytes;
      last = r.rowid;
    }
    if (last === undefined) return;
    db.prepare('DELETE FROM responses WHERE rowid <= ?').run(last);
    this.totalBytes -= freed;
    this.log(`responses: dropped ${expired} expired and ${capped} over the size cap`);
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    await this.checkpointer?.stop();
    this.checkpointer = undefined;
    this.db?.close();
    this.db = undefined;
    this.statements = undefined;
    this.opening = undefined;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((e: unknown) => this.log(`responses: could not write the store: ${(e as Error).message}`));
    }, this.flushMs);
    this.timer.unref();
  }

  private open(): Promise<Database> {
    if (this.db) return Promise.resolve(this.db);
    this.opening ??= (async () => {
      const db = await openDatabase(this.path, {
        setup: (d) => d.exec(`CREATE TABLE IF NOT EXISTS responses (id TEXT PRIMARY KEY, key_id TEXT NOT NULL, created_at INTEGER NOT NULL,
          previous_id TEXT, bytes INTEGER NOT NULL, input TEXT NOT NULL, response TEXT NOT NULL, held_by TEXT);
          DROP INDEX IF EXISTS responses_created;`), // earlier versions kept one; prune walks rowid order instead
      });
      this.statements = new StatementCache(db);
      this.totalBytes = (db.prepare('SELECT COALESCE(SUM(bytes), 0) AS total FROM responses').get() as { total: number }).total;
      this.db = db;
      // Checkpoints (the WAL copied back, with an fsync) in a worker: on the event loop they held
      // every request for the fsync; measured ~5% more translated Responses requests per second.
      this.checkpointer = startCheckpointer(db, this.path, { log: this.log, label: 'responses' });
      this.prune(db);
      return db;
    })();
    return this.opening;
  }
}

export function toRow(r: StoredResponse): Row {
  return {
    id: r.id, key_id: r.keyId, created_at: r.createdAt, previous_id: r.previousId,
    input: JSON.stringify(r.input), response: r.responseJson ?? JSON.stringify(r.response), held_by: r.heldBy ?? null,
  };
}

export function fromRow(row: Row): StoredResponse {
  const response = JSON.parse(row.response) as Record<string, unknown>;
  return {
    id: row.id, keyId: row.key_id, createdAt: row.created_at, previousId: row.previous_id,
    input: JSON.parse(row.input) as unknown[], output: Array.isArray(response.output) ? response.output : [], response,
    ...(row.held_by !== null ? { heldBy: row.held_by } : {}),
  };
}
