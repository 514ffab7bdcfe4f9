// The write queue of the usage history and the response store: a request never waits on the disk.
// Items are queued in memory and written in batches, each batch one all-or-nothing write (one
// transaction). A flush writes what is queued when it starts, `chunk` items to a batch with the
// event loop free between batches, so a large queue never holds the requests being served; flushes
// run one at a time. Only what was written leaves the queue: a batch the database refused stays at
// its head, in order, for the next flush.

export interface BatchWriterOptions<T> {
  /** Items per batch: bounds how long one write holds the event loop. */
  chunk: number;
  /** Writes one batch, all of it or none (one transaction); throws when the database refuses it. */
  write(batch: T[]): void;
  /**
   * For a queue read by key (the response store's, looked at before the file): an item's key. An
   * item queued again under the same key replaces the earlier one, which is then never written.
   */
  key?(item: T): string;
  /** A batch was refused (it stays queued). */
  onError?(error: Error, items: number): void;
  /** Items kept while writes fail; past this the oldest are dropped. */
  maxQueued?: number;
  /** Something outside the queue rides with the next batch (the usage history's bodies): written even when the queue is empty. */
  alsoPending?(): boolean;
}

export interface BatchWriterStats {
  /** Batches written, and their items. */
  batches: number;
  written: number;
  failures: number;
  dropped: number;
  lastMs: number;
  maxMs: number;
  totalMs: number;
}

export class BatchWriter<T> {
  /** Oldest first. A plain array: queueing is a push on the request path. */
  private items: T[] = [];
  /** With `key`: the latest item queued under each key. */
  private readonly latest: Map<string, T> | undefined;
  private flushing: Promise<unknown> = Promise.resolve();
  private running = 0;
  readonly stats: BatchWriterStats = { batches: 0, written: 0, failures: 0, dropped: 0, lastMs: 0, maxMs: 0, totalMs: 0 };

  constructor(private readonly o: BatchWriterOptions<T>) {
    this.latest = o.key ? new Map() : undefined;
  }

  add(item: T): void {
    this.items.push(item);
    this.latest?.set(this.o.key!(item), item);
  }

  /** The latest item queued under `key` and not written yet (a queue with `key`). */
  get(key: string): T | undefined {
    return this.latest?.get(key);
  }

  get size(): number {
    return this.items.length;
  }

  /** A flush is running or waiting its turn. */
  get busy(): boolean {
    return this.running > 0;
  }

  /**
   * Writes what is queued now, `chunk` items to a batch with the event loop free in between; one
   * flush at a time: another waits for it, then writes what is still queued. Stops at a refused
   * batch (the rest stays queued). Resolves with the items written.
   */
  flush(): Promise<number> {
    this.running++;
    const next = this.flushing.then(() => this.flushInTurns()).finally(() => { this.running--; });
    this.flushing = next.catch(() => {});
    return next;
  }

  /**
   * Writes everything queued now without giving the event loop back (before a read, and on close:
   * what matters is written before the caller's next await), `bigChunk` items to a batch. Returns
   * the items written; stops at a refused batch.
   */
  flushNow(bigChunk = this.o.chunk): number {
    let written = 0;
    let remaining = this.items.length;
    do {
      const n = this.writeHead(Math.min(bigChunk, remaining));
      if (n < 0) break;
      written += n;
      remaining -= n;
    } while (remaining > 0);
    return written;
  }

  private async flushInTurns(): Promise<number> {
    let written = 0;
    // Only what is queued now: what comes meanwhile waits for the next flush.
    let remaining = this.items.length;
    do {
      if (written > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      // A synchronous flush may have written some meanwhile: never more than what is queued.
      const n = this.writeHead(Math.min(this.o.chunk, remaining, this.items.length));
      if (n <= 0) break;
      written += n;
      remaining -= n;
    } while (remaining > 0);
    return written;
  }

  /** Writes the first `n` items (those still the latest of their key) as one batch: `n`, 0 for nothing to write, -1 when refused. */
  private writeHead(n: number): number {
    if (n === 0 && !this.o.alsoPending?.()) return 0;
    const head = this.items.slice(0, n);
    const { key } = this.o;
    const latest = this.latest;
    const batch = latest && key ? head.filter((item) => latest.get(key(item)) === item) : head;
    const t0 = performance.now();
    try {
      this.o.write(batch);
    } catch (e) {
      this.stats.failures++;
      this.o.onError?.(e as Error, batch.length);
      this.drop(this.items.length - (this.o.maxQueued ?? Infinity));
      return -1;
    }
    const ms = performance.now() - t0;
    this.forget(n);
    this.stats.batches++;
    this.stats.written += batch.length;
    this.stats.lastMs = ms;
    this.stats.maxMs = Math.max(this.stats.maxMs, ms);
    this.stats.totalMs += ms;
    return n;
  }

  /** Drops the `n` oldest items, unwritten (a queue over its bound while writes fail). */
  private drop(n: number): void {
    if (n <= 0) return;
    this.forget(n);
    this.stats.dropped += n;
  }

  /** Takes the first `n` items off the queue (and off the keys they are still the latest of). */
  private forget(n: number): void {
    const gone = this.items.splice(0, n);
    const { key } = this.o;
    const latest = this.latest;
    if (latest && key) for (const item of gone) if (latest.get(key(item)) === item) latest.delete(key(item));
  }
}
