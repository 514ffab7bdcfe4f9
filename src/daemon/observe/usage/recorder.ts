// Records every finished request: subscribes to the daemon's event bus, pairs each request's
// `started` event with its `finished`/`failed` one, prices it, and queues the row. The request
// path pays one Map lookup, the price and a queue insert (~3 µs); rows reach SQLite in batches
// (store/batch-writer.ts) every `flushIntervalMs` (500 ms, so a crash loses at most the last half
// second) and on close (`gateway stop` loses none). A backlog is written a few hundred rows per
// event-loop turn, so a busy second never stalls the requests being served for more than a couple
// of milliseconds. In team mode each row is also appended to a journal as its request ends
// (journal.ts: a SIGKILL then loses none) and written with its outbox entry (team-history.ts sends
// it to the shared store).
import type { EventBus, GatewayEvent, RequestStarted } from '../events.js';
import { bareModel, requestCacheSavings, requestCost, type PriceTable } from './prices.js';
import { USAGE_DEFAULTS } from './settings.js';
import { BatchWriter } from '../../store/batch-writer.js';
import { readJournal, RowJournal } from './journal.js';
import type { TeamHistory } from './team-history.js';
import type { AnswerGate } from '../../http/answer-gate.js';
import { startCheckpointer, type Checkpointer } from '../../store/sqlite.js';
import { ServedModels } from './served-models.js';
import { floorHour, int, type BodyRow, type UsageRow, type UsageStore } from './store.js';

const DAY_MS = 86_400_000;
/** Bodies (logBodies) waiting for the next batch; past this the oldest are dropped. */
const MAX_QUEUED_BODY_CHARS = 64 * 1024 * 1024;
/** Rows per transaction when everything queued is written at once (before a read, on close). */
const FLUSH_NOW_ROWS = 5_000;

export interface LiveRequest {
  id: string;
  time: number;
  keyId: string;
  keyName: string;
  mode: RequestStarted['mode'];
  provider: NonNullable<RequestStarted['provider']>;
  model: string | null;
  method: string;
  path: string;
  stream: boolean;
  requestBytes: number;
  ttfbMs: number | null;
  outputTokens: number | null;
  /** The session the client named, as session-tag.ts keeps it. */
  session: string | null;
}

/** What the Live page shows: requests starting and progressing, then their recorded row. */
export type LiveEvent =
  | { type: 'started'; request: LiveRequest }
  | { type: 'first_byte'; id: string; ttfbMs: number }
  | { type: 'progress'; id: string; outputTokens: number | null }
  | { type: 'done'; id: string; row: UsageRow };

export interface RecorderStats {
  recorded: number;
  flushes: number;
  buffered: number;
  failures: number;
  /** finished/failed events without a `started` one (the recorder was attached mid-request). */
  orphans: number;
  dropped: number;
  lastFlushMs: number;
  maxFlushMs: number;
  totalFlushMs: number;
}

export interface RecorderOptions {
  store: UsageStore;
  bus: EventBus;
  prices: PriceTable;
  flushIntervalMs?: number;
  /** A batch this large is written at once (on the next turn of the event loop), not at the tick. */
  maxBatch?: number;
  /** Rows per transaction when draining on the timer: bounds how long one write holds the event loop. */
  chunkRows?: number;
  /** Rows kept in memory while the database refuses writes; the oldest are dropped past this. */
  maxBuffered?: number;
  retentionDays?: number;
  rollupRetentionDays?: number;
  pruneIntervalMs?: number;
  /** WAL checkpoints in a worker thread (default true for a file). */
  backgroundCheckpoints?: boolean;
  checkpointIntervalMs?: number;
  log?: (line: string) => void;
  now?: () => number;
  /** This daemon's name in each row it records (shared-store.ts daemonIdOf). */
  daemon?: string;
  /**
   * Team mode: each row also goes to the journal in this directory as its request ends (written
   * at the end of the turn, before the server's `answers` gate lets that turn's answers go), and
   * into the outbox with its batch; `onWritten` is told after each batch that wrote rows.
   * `formerJournalDir`: where daemons before the journal had a directory of its own kept its
   * segments (the state directory); what one left there is replayed too.
   */
  team?: { journalDir: string; formerJournalDir?: string; onWritten?: () => void; answers?: AnswerGate };
}

export class UsageRecorder {
  readonly store: UsageStore;
  prices: PriceTable;
  /** Rows waiting for their batch. */
  private readonly rows: BatchWriter<UsageRow>;
  private orphans = 0;
  private bodies: BodyRow[] = [];
  private bodyChars = 0;
  private inflight = new Map<string, LiveRequest>();
  private refused = new Set<string>();
  private lastUsedAt = new Map<string, number>();
  private readonly served: ServedModels;
  private listeners = new Set<(ev: LiveEvent) => void>();
  private unsubscribe: (() => void) | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** The background WAL checkpointer, when running. */
  checkpointer: Checkpointer | undefined;
  /** Team mode: what sends this daemon's rows to the shared store and reads the others' (closed with the recorder). */
  team: TeamHistory | undefined;
  private lastFailureLog = 0;
  private readonly journal: RowJournal | undefined;
  /** Rows written to usage.db so far (in the order they were queued, which the journal counts on). */
  private written = 0;
  private readonly opts: Required<Omit<RecorderOptions, 'store' | 'bus' | 'prices' | 'daemon' | 'team'>>;

  constructor(private readonly o: RecorderOptions) {
    this.store = o.store;
    this.prices = o.prices;
    this.opts = {
      flushIntervalMs: o.flushIntervalMs ?? 500,
      maxBatch: o.maxBatch ?? 1_000,
      chunkRows: o.chunkRows ?? 250,
      maxBuffered: o.maxBuffered ?? 200_000,
      retentionDays: o.retentionDays ?? USAGE_DEFAULTS.retentionDays,
      rollupRetentionDays: o.rollupRetentionDays ?? USAGE_DEFAULTS.rollupRetentionDays,
      pruneIntervalMs: o.pruneIntervalMs ?? 3_600_000,
      backgroundCheckpoints: o.backgroundCheckpoints ?? o.store.path !== ':memory:',
      checkpointIntervalMs: o.checkpointIntervalMs ?? 2_000,
      log: o.log ?? (() => {}),
      now: o.now ?? Date.now,
    };
    this.served = ServedModels.fromHistory(o.store.db, this.opts.log);
    this.journal = o.team ? new RowJournal(o.team.journalDir, this.opts.log) : undefined;
    this.rows = new BatchWriter<UsageRow>({
      chunk: this.opts.chunkRows,
      maxQueued: this.opts.maxBuffered,
      write: (rows) => this.write(rows),
      alsoPending: () => this.bodies.length > 0,
      onError: (e, n) => {
        // The rows stay queued for the next tick (a CLI migration may hold the lock briefly).
        const now = this.opts.now();
        if (now - this.lastFailureLog <= 60_000) return;
        this.lastFailureLog = now;
        this.opts.log(`usage: could not write ${n} rows to ${this.store.path} (${e.message}); will retry`);
      },
    });
  }

  get stats(): RecorderStats {
    const w = this.rows.stats;
    return {
      recorded: w.written, flushes: w.batches, buffered: this.rows.size, failures: w.failures, orphans: this.orphans, dropped: w.dropped,
      lastFlushMs: w.lastMs, maxFlushMs: w.maxMs, totalFlushMs: w.totalMs,
    };
  }

  start(): this {
    if (this.o.team) {
      const { journalDir, formerJournalDir } = this.o.team;
      this.replayJournal(formerJournalDir === undefined ? [journalDir] : [formerJournalDir, journalDir]);
    }
    if (this.journal) this.o.team?.answers?.waitFor(this.journal);
    // With a journal the server's answers wait for their rows' write (http/answer-gate.ts): built first, before other subscribers' work.
    this.unsubscribe = this.o.bus.subscribe((ev) => this.onEvent(ev), this.journal !== undefined);
    const flush = setInterval(() => this.drain(), this.opts.flushIntervalMs);
    const prune = setInterval(() => this.prune(), this.opts.pruneIntervalMs);
    const firstPrune = setTimeout(() => this.prune(), 5_000);
    for (const t of [flush, prune, firstPrune]) { t.unref(); this.timers.push(t); }
    if (this.opts.backgroundCheckpoints) this.checkpointer = startCheckpointer(this.store.db, this.store.path, { log: this.opts.log, intervalMs: this.opts.checkpointIntervalMs });
    return this;
  }

  private emit(ev: LiveEvent): void {
    for (const fn of this.listeners) {
      try { fn(ev); } catch { /* a broken listener never breaks recording */ }
    }
  }

  private onEvent(ev: GatewayEvent): void {
    switch (ev.type) {
      case 'started': {
        // Refused before any provider was involved (bad key, malformed request): the monitor and
        // the daemon log show these; the usage history and its Live page are per provider.
        if (ev.provider === null) { this.refused.add(ev.id); return; }
        const live: LiveRequest = {
          id: ev.id, time: ev.time, keyId: ev.keyId, keyName: ev.keyName, mode: ev.mode, provider: ev.provider,
          model: ev.model, method: ev.method, path: ev.path, stream: ev.stream, requestBytes: ev.requestBytes,
          ttfbMs: null, outputTokens: null, session: ev.session ?? null,
        };
        this.inflight.set(ev.id, live);
        this.lastUsedAt.set(ev.keyId, ev.time);
        if (this.listeners.size > 0) this.emit({ type: 'started', request: live });
        return;
      }
      case 'first_byte': {
        const live = this.inflight.get(ev.id);
        if (live) {
          live.ttfbMs = ev.ttfbMs;
          // A native request's body is not read: whether it streams is known from the response.
          if (ev.stream !== undefined) live.stream = ev.stream;
        }
        if (this.listeners.size > 0) this.emit({ type: 'first_byte', id: ev.id, ttfbMs: ev.ttfbMs });
        return;
      }
      case 'progress': {
        const live = this.inflight.get(ev.id);
        if (live && ev.outputTokens !== undefined) live.outputTokens = ev.outputTokens;
        if (this.listeners.size > 0) this.emit({ type: 'progress', id: ev.id, outputTokens: ev.outputTokens ?? null });
        return;
      }
      case 'finished':
      case 'failed': {
        if (this.refused.delete(ev.id)) return;
        const started = this.inflight.get(ev.id);
        if (!started) { this.orphans++; return; }
        this.inflight.delete(ev.id);
        // A fallback's row is the target that answered: its provider, priced by its model.
        const provider = ev.served?.provider ?? started.provider;
        // Grouped and priced by the model the provider served; the name asked for is kept beside it.
        const requested = ev.served ? ev.served.model : started.model ? bareModel(started.model) : null;
        const reported = ev.type === 'finished' && ev.model ? bareModel(ev.model) : null;
        if (reported) this.served.learn(provider, requested, reported);
        const model = reported ?? (requested === null ? null : this.served.servedFor(provider, requested) ?? requested);
        // Priced by the model served, else by the name asked for (a failure before the provider named one).
        let pricedBy = model;
        let cost = requestCost(this.prices, provider, model, ev.usage, ev.status, started.time);
        if (cost === null && requested !== model) { pricedBy = requested; cost = requestCost(this.prices, provider, requested, ev.usage, ev.status, started.time); }
        const row: UsageRow = {
          requestId: ev.id, startedAt: started.time, keyId: started.keyId, keyName: started.keyName, mode: started.mode,
          provider, model, requestedModel: requested, method: started.method, path: started.path, stream: started.stream,
          status: ev.status, errorCode: ev.type === 'failed' ? ev.code : null,
          errorMessage: ev.type === 'failed' ? ev.message.slice(0, 300) : null,
          durationMs: ev.durationMs, ttfbMs: ev.ttfbMs, requestBytes: started.requestBytes, outputBytes: ev.type === 'finished' ? ev.outputBytes : 0,
          // Whole, as usage.db keeps them: the journal's JSON of the row is what the team's push sends.
          inputTokens: int(ev.usage.inputTokens ?? null), outputTokens: int(ev.usage.outputTokens ?? null),
          cachedTokens: int(ev.usage.cachedTokens ?? null), cacheWriteTokens: int(ev.usage.cacheWriteTokens ?? null),
          cacheWrite1hTokens: int(ev.usage.cacheWrite1hTokens ?? null), reasoningTokens: int(ev.usage.reasoningTokens ?? null),
          cost, cacheSaved: cost === null ? null : requestCacheSavings(this.prices, provider, pricedBy, ev.usage, ev.status, started.time),
          session: started.session,
          // A single attempt's route is the row's own provider and model: only a longer one is kept.
          route: ev.route !== undefined && ev.route.includes(',') ? ev.route : null, waitedMs: ev.waitedMs ?? null, keyLabel: ev.keyLabel ?? null,
          limit: ev.type === 'failed' ? ev.limit ?? null : null,
          daemon: this.o.daemon ?? null,
        };
        if (this.journal) {
          const json = this.journal.append(row);
          this.o.team?.answers?.appended();
          this.team?.remember(row.requestId, json);
        }
        this.rows.add(row);
        if (this.listeners.size > 0) this.emit({ type: 'done', id: ev.id, row });
        if (this.rows.size >= this.opts.maxBatch && !this.rows.busy) setImmediate(() => this.drain());
        return;
      }
      default: {
        const never: never = ev;
        return never;
      }
    }
  }

  /** Queues one request's bodies (logBodies) for the next batch, with the rows. */
  recordBody(b: BodyRow): void {
    this.bodies.push(b);
    this.bodyChars += (b.request?.length ?? 0) + (b.response?.length ?? 0);
    while (this.bodyChars > MAX_QUEUED_BODY_CHARS && this.bodies.length > 1) {
      const old = this.bodies.shift()!;
      this.bodyChars -= (old.request?.length ?? 0) + (old.response?.length ?? 0);
    }
  }

  /** Writes everything queued now, in one go (before a read, and on close). Never throws; returns the rows written. */
  flush(): number {
    return this.rows.flushNow(FLUSH_NOW_ROWS);
  }

  /** Writes the queue `chunkRows` at a time, yielding to the event loop between transactions. */
  private drain(): void {
    // A drain still running has the rows queued before it; the ones after wait for the next tick,
    // so a busy daemon gets a few full transactions per tick rather than an endless trickle of tiny ones.
    if (this.rows.busy || !this.unsubscribe) return;
    // The rows queued so far close their journal segment: it goes once they are written (now, if
    // a read's flush already wrote them; else by this flush).
    if (this.journal) {
      this.journal.rotate();
      this.journal.release(this.written + this.rows.stats.dropped);
    }
    void this.rows.flush();
  }

  /** One batch of rows, with the bodies queued so far, in one transaction; on failure both stay queued. */
  private write(rows: UsageRow[]): void {
    const [bodies, bodyChars] = [this.bodies, this.bodyChars];
    this.bodies = [];
    this.bodyChars = 0;
    try {
      this.store.insert(rows, bodies, this.o.team !== undefined);
    } catch (e) {
      [this.bodies, this.bodyChars] = [bodies, bodyChars]; // nothing else ran: the write is synchronous
      throw e;
    }
    this.written += rows.length;
    this.journal?.release(this.written + this.rows.stats.dropped);
    if (rows.length > 0 && this.o.team?.onWritten) setImmediate(this.o.team.onWritten);
  }

  /**
   * Rows a killed daemon had journaled: those usage.db does not have yet are written now, with
   * their outbox entries; the journal goes once they are safe (kept for the next start otherwise).
   */
  private replayJournal(dirs: string[]): void {
    const { rows, discard } = readJournal(dirs);
    if (rows.length === 0) { discard(); return; }
    try {
      let added = 0;
      for (let i = 0; i < rows.length; i += FLUSH_NOW_ROWS) added += this.store.insertMissing(rows.slice(i, i + FLUSH_NOW_ROWS), { outbox: true });
      discard();
      if (added > 0) this.opts.log(`usage: recovered ${added} request rows from the journal of a daemon that stopped before writing them`);
    } catch (e) {
      this.opts.log(`usage: could not replay the usage journal in ${dirs.join(' and ')} (${(e as Error).message}); kept for the next start`);
    }
  }

  /** Applies retention now; also forgets in-flight entries that never finished (older than a day). */
  prune(): void {
    const now = this.opts.now();
    for (const [id, r] of this.inflight) if (now - r.time > DAY_MS) this.inflight.delete(id);
    try {
      const res = this.store.prune(now - this.opts.retentionDays * DAY_MS, floorHour(now - this.opts.rollupRetentionDays * DAY_MS));
      if (res.requests > 0) this.opts.log(`usage: pruned ${res.requests} request rows older than ${this.opts.retentionDays} days`);
    } catch (e) {
      this.opts.log(`usage: pruning failed: ${(e as Error).message}`);
    }
  }

  get retention(): { retentionDays: number; rollupRetentionDays: number } {
    return { retentionDays: this.opts.retentionDays, rollupRetentionDays: this.opts.rollupRetentionDays };
  }

  setRetention(retentionDays: number, rollupRetentionDays: number): void {
    this.opts.retentionDays = retentionDays;
    this.opts.rollupRetentionDays = rollupRetentionDays;
  }

  /** Requests in flight now, oldest first. */
  inFlight(): LiveRequest[] {
    return [...this.inflight.values()];
  }

  lastUsed(keyId: string): number | undefined {
    return this.lastUsedAt.get(keyId);
  }

  onLive(fn: (ev: LiveEvent) => void): () => void {
    this.listeners.add(fn);
    return () => { this.listeners.delete(fn); };
  }

  /**
   * Stops listening, writes what is queued and closes the database. Everything that matters
   * happens before the first await: the queue is on disk when this returns its promise. In team
   * mode the outbox then gets one last push (bounded; what is left goes at the next start).
   */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.flush();
    this.journal?.close(this.written + this.rows.stats.dropped);
    this.o.team?.answers?.waitFor(undefined);
    await this.team?.close();
    await this.checkpointer?.stop();
    this.store.close();
  }
}
