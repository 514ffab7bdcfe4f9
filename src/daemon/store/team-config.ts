// Team mode: the routing and configured providers every daemon serves alike (shared-config.ts names
// the sections) live in the store as one versioned document, table `shared_config`. A change is a
// new version, made under the row's lock and announced on `gateway_config`; every daemon then reads
// it, checks it and applies it whole, or keeps the last good one whole (and says why).
//
// The state directory's files stay how a person and the CLI change the team's config:
// - a change to a shared section of config.json (or key-pools.json) made here, by the CLI or by
//   hand, is what the file holds beyond the team's document this directory last took (the base,
//   team-config.json); it is published as a merge patch on the store's current document, so edits
//   of different settings on different daemons all stay, and where two daemons set the same
//   setting the last writer wins (logged). A change with a problem is not published (logged; the
//   CLI says so); one made while the store is unreachable or the daemon stopped is published later;
// - the team's document is written back into the files, so `gateway models aliases`, `providers
//   list` and every other reader on this machine see what the team serves (holding the state
//   directory's lock, which the CLI holds while it edits them: neither undoes the other);
// - the first daemon on an empty store seeds it from its own files; a daemon joining a team takes
//   the team's sections over its own (kept in config.before-team.json when they differed).
// The daemon serves the document it applied, never an unpublished local edit. Each daemon reads
// the store on a notification, when its listening connection comes back (notifications may have
// been missed), and every GATEWAY_CONFIG_RECHECK_SECONDS (default 30) as a backstop.
import type { PoolClient, QueryConfig, QueryResultRow } from 'pg';
import { isConnectionError, QUIET_MS, recheckMsFrom, type SharedStore } from './shared-store.js';
import { keepBeforeTeam, readLocal, readTeamBase, writeLocal, writeTeamBase, type LocalConfig, type TeamBase } from './shared-config-files.js';
import { tryLockState } from './state-lock.js';
import {
  applyPatch, changedSections, docProblems, mergePatch, normalizeDoc, overwrittenPaths, patchPaths, sameJson, withShared, type SharedDoc,
} from './shared-config.js';

export const CONFIG_CHANNEL = 'gateway_config';
/** Sets the backstop in seconds (tests make it very long, to show a change came by notification). */
export const CONFIG_RECHECK_ENV = 'GATEWAY_CONFIG_RECHECK_SECONDS';
/** How often a daemon reads the store's version whatever it heard (the backstop for a lost notification), as for keys. */
const DEFAULT_RECHECK_MS = 30_000;
/** How soon the team's config is written into the files again when a CLI command held them. */
const FILE_RETRY_MS = 20;

/** The backstop's period: GATEWAY_CONFIG_RECHECK_SECONDS (a positive number of seconds), else 30 s. */
export function configRecheckMs(env: NodeJS.ProcessEnv): number {
  return recheckMsFrom(env, CONFIG_RECHECK_ENV, DEFAULT_RECHECK_MS);
}

interface Version { version: number; doc: SharedDoc; by: string }

type Published =
  | { kind: 'published'; version: Version; overwritten: string[] }
  | { kind: 'unchanged'; version: Version }
  | { kind: 'seeded-by-another'; version: Version }
  | { kind: 'refused'; problems: string[] };

export interface TeamConfigOptions {
  shared: SharedStore;
  dir: string;
  log: (line: string) => void;
  recheckMs?: number;
}

export class TeamConfig {
  /** The document this daemon serves: the last good version it read (or took from its base at start). */
  private applied: Version = { version: 0, doc: {}, by: '' };
  /** The last version read from the store, good or not (a bad one is not read again until another comes). */
  private seen = -1;
  private base: TeamBase;
  private queue: Promise<unknown> = Promise.resolve();
  private lastNote = '';
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** The files could not be read when the version served came: it is written into them at the next sync. */
  private filesBehind = false;
  private readonly offs: Array<() => void> = [];
  private readonly changeHooks = new Set<() => void>();

  private constructor(private readonly o: TeamConfigOptions) {
    this.base = { store: o.shared.display, version: 0, doc: {} };
  }

  /**
   * Seeds, joins or catches up with the team's config before the daemon serves anything, then
   * listens. Throws (one line) when config.json cannot be read or the store cannot be.
   */
  static async open(o: TeamConfigOptions): Promise<TeamConfig> {
    const t = new TeamConfig(o);
    // Listening first: a change made while this daemon starts is read after the start, in turn.
    t.offs.push(o.shared.on(CONFIG_CHANNEL, () => t.catchUp()), o.shared.onReconnect(() => t.catchUp()));
    const started = t.start();
    t.queue = started.catch(() => {});
    try {
      await started;
    } catch (e) {
      await t.close();
      throw e;
    }
    t.timer = setInterval(() => t.catchUp(), o.recheckMs ?? DEFAULT_RECHECK_MS);
    t.timer.unref();
    return t;
  }

  /** `fn` runs after a version read from the store changed what this daemon serves (the daemon reloads). */
  onChange(fn: () => void): () => void {
    this.changeHooks.add(fn);
    return () => { this.changeHooks.delete(fn); };
  }

  /** config.json object `config` as the daemon serves it: its own settings, the team's shared sections. */
  effective(config: Record<string, unknown>): Record<string, unknown> {
    return withShared(config, this.applied.doc);
  }

  /**
   * Publishes what was changed here since the base, then reads the store's current version. True
   * when what the daemon serves changed. Trouble with the store is logged (once per distinct text), not thrown.
   */
  sync(): Promise<boolean> {
    const run = this.queue.then(() => this.syncNow());
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Stops listening and the backstop; resolves once a sync under way is done (before the store
   * closes), or after QUIET_MS: on a silent store a sync ends only as its statements time out.
   */
  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const off of this.offs) off();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.queue, new Promise<void>((resolve) => { timer = setTimeout(resolve, QUIET_MS); })]);
    clearTimeout(timer);
    clearTimeout(this.retry);
  }

  private catchUp(): void {
    void this.sync()
      .then((changed) => { if (changed) for (const fn of this.changeHooks) fn(); })
      .catch((e: unknown) => this.note(`store: the team's config could not be taken: ${(e as Error).message}`));
  }

  private async start(): Promise<void> {
    const current = (await this.fetch(-1))!;
    const local = readLocal(this.o.dir); // a config.json that is not JSON stops the start, as without a team
    const base = readTeamBase(this.o.dir);
    // A base from this store and not ahead of it (a store made anew, or restored from an older
    // backup, is not the one it came from): edits made here while the daemon was stopped are
    // published, and until the store's version is read the last good one served here stays.
    if (base && base.store === this.o.shared.display && base.version <= current.version) {
      this.base = base;
      if (docProblems(base.doc).length === 0) this.applied = { version: base.version, doc: base.doc, by: '' };
    } else if (current.version === 0) {
      await this.seed(local);
    } else {
      this.join(local, current);
    }
    await this.syncNow();
  }

  /** The first daemon on an empty store: its files' shared sections become the team's version 1. */
  private async seed(local: LocalConfig): Promise<void> {
    const patch = mergePatch({}, local.doc);
    if (!patch) return;
    const r = await this.publish(patch, {}, true);
    // Refused: the next sync tries it as an edit, and logs why it is refused.
    if (r.kind === 'refused') return;
    if (r.kind === 'seeded-by-another') {
      this.join(local, r.version);
    } else {
      this.o.log(`store: the team's config starts from this daemon's config.json as version ${r.version.version}`);
      this.take(r.version);
    }
  }

  /** A daemon joining a team that has a config: the team's sections replace its own. */
  private join(local: LocalConfig, team: Version): void {
    const own = changedSections(local.doc, team.doc).filter((s) => local.doc[s] !== undefined);
    if (own.length > 0) {
      const kept = keepBeforeTeam(this.o.dir);
      this.o.log(`store: joined the team's config (version ${team.version}): config.json's own ${own.join(', ')} differed and are now the team's${kept ? ` (the file as it was: ${kept})` : ''}`);
    } else {
      this.o.log(`store: joined the team's config (version ${team.version})`);
    }
    // The base is what the files hold now: nothing in them counts as an edit to publish.
    this.base = { store: this.o.shared.display, version: 0, doc: local.doc };
  }

  private async syncNow(): Promise<boolean> {
    const before = this.applied.version;
    let local: LocalConfig | undefined;
    try {
      local = readLocal(this.o.dir);
    } catch (e) {
      this.note(`store: ${(e as Error).message}: its shared settings are neither published nor updated until it is`);
    }
    const patch = local && mergePatch(this.base.doc, local.doc);
    try {
      if (patch) await this.publishEdit(patch);
      const current = await this.fetch(this.seen);
      if (current) this.apply(current);
      // The files lag what is served when config.json could not be read when it came: now perhaps.
      else if (this.filesBehind) this.writeFiles();
    } catch (e) {
      const unreachable = isConnectionError(e);
      const why = unreachable ? this.o.shared.describeError(e) : (e as Error).message;
      this.note(`store: the team's config could not be read or written (${why}); trying again`);
      if (patch) this.saveBase({ unpublished: unreachable ? 'the store is unreachable; the gateway publishes the change once it is back' : why });
    }
    return this.applied.version !== before;
  }

  private async publishEdit(patch: Record<string, unknown>): Promise<void> {
    const paths = patchPaths(patch).join(', ');
    const r = await this.publish(patch, this.base.doc, false);
    if (r.kind === 'refused') {
      const why = r.problems.join('; ');
      this.note(`store: config.json's change to ${paths} is not published to the team: ${why}; the team's config (version ${this.applied.version}) stays`);
      this.saveBase({ unpublished: `not published to the team: ${why}` });
      return;
    }
    if (r.kind === 'published') {
      const lww = r.overwritten.length ? `; it replaced ${r.overwritten.join(', ')}, which another daemon had changed since (last writer wins)` : '';
      this.o.log(`store: published config.json's change to ${paths} as the team's config version ${r.version.version}${lww}`);
    }
    this.take(r.version);
  }

  /** A version read from the store: applied whole when it has no problem, else the last good one stays whole. */
  private apply(v: Version): void {
    this.seen = v.version;
    const problems = docProblems(v.doc);
    if (problems.length > 0) {
      this.note(`store: the team's config version ${v.version} (from ${v.by || 'the store'}) is not applied: ${problems.join('; ')}; keeping version ${this.applied.version}`);
      return;
    }
    const changed = changedSections(this.applied.doc, v.doc);
    if (v.version !== this.applied.version && changed.length > 0 && v.by !== this.o.shared.daemonId) {
      this.o.log(`store: applied the team's config version ${v.version} from ${v.by}: ${changed.join(', ')} changed`);
    }
    this.take(v);
  }

  /** Serves `v` from now on, and writes it into the files. */
  private take(v: Version): void {
    this.applied = v;
    this.seen = Math.max(this.seen, v.version);
    this.lastNote = '';
    this.writeFiles();
  }

  /**
   * Writes the version served into the files, holding the state directory's lock; while a CLI
   * command holds it, tries again shortly (the daemon never waits on it). What was edited here and
   * is not in the version (a change refused, or not yet published) stays in the files on top of
   * it. A config.json that cannot be read is left alone, and the base with it, so that the edit is
   * measured right once it can be.
   */
  private writeFiles(): void {
    clearTimeout(this.retry);
    const release = tryLockState(this.o.dir);
    if (!release) {
      this.retry = setTimeout(() => {
        try { this.writeFiles(); } catch (e) { this.note(`store: the team's config could not be written into the files: ${(e as Error).message}`); }
      }, FILE_RETRY_MS);
      this.retry.unref();
      return;
    }
    try {
      const v = this.applied;
      let now: LocalConfig;
      try { now = readLocal(this.o.dir); } catch { this.filesBehind = true; return; }
      this.filesBehind = false;
      const pending = mergePatch(this.base.doc, now.doc);
      const files = pending ? normalizeDoc(applyPatch(v.doc, pending)) : v.doc;
      writeLocal(this.o.dir, now, files);
      // An edit still not in the version keeps the reason it is not (refused, store unreachable).
      const unpublished = mergePatch(v.doc, files) !== undefined ? this.base.unpublished ?? 'not published yet' : undefined;
      this.base = { store: this.o.shared.display, version: v.version, doc: v.doc };
      this.saveBase(unpublished ? { unpublished } : {});
    } finally {
      release();
    }
  }

  private saveBase(extra: { unpublished?: string }): void {
    const { unpublished: _previous, ...base } = this.base;
    const next = { ...base, ...extra };
    // The backstop finds a refused edit again every period: the file is rewritten only when it changes.
    if (sameJson(next, readTeamBase(this.o.dir))) { this.base = next; return; }
    this.base = next;
    writeTeamBase(this.o.dir, this.base);
  }

  /** Logs a problem once per distinct text (the backstop would repeat it every period). */
  private note(line: string): void {
    if (line === this.lastNote) return;
    this.lastNote = line;
    this.o.log(line);
  }

  /** The store's current version, or undefined when it is still `unless` (its document is then not sent). */
  private async fetch(unless: number): Promise<Version | undefined> {
    // Bounded, as every query of a sync: a reload waits for the sync (/admin/reload, every CLI
    // config edit), and a store gone silent must not hold it for good.
    const { rows } = await this.o.shared.query<{ version: string; doc: unknown; updated_by: string }>(
      'SELECT version, CASE WHEN version <> $1 THEN doc END AS doc, updated_by FROM shared_config', [unless], QUIET_MS,
    );
    const row = rows[0];
    if (!row) throw new Error('the store has no shared_config row; its schema is damaged');
    const version = Number(row.version);
    return version === unless ? undefined : { version, doc: normalizeDoc(row.doc), by: row.updated_by };
  }

  /**
   * Applies `patch` to the store's current document under its row lock: a new version (announced
   * at commit) unless nothing changes or the result has a problem. `seed`: only onto version 0.
   */
  private async publish(patch: Record<string, unknown>, base: SharedDoc, seed: boolean): Promise<Published> {
    let client: PoolClient;
    try {
      client = await this.o.shared.pool.connect();
    } catch (e) {
      if (isConnectionError(e)) this.o.shared.failed(e);
      throw e;
    }
    let broken: Error | undefined;
    // Each statement bounded (fetch says why); one cut off fails the change, which stays to publish.
    const q = <R extends QueryResultRow>(text: string, values?: unknown[]) => client.query<R>({ text, values, query_timeout: QUIET_MS } as QueryConfig);
    try {
      await q('BEGIN');
      const { rows } = await q<{ version: string; doc: unknown; updated_by: string }>('SELECT version, doc, updated_by FROM shared_config FOR UPDATE');
      const cur: Version = { version: Number(rows[0]!.version), doc: normalizeDoc(rows[0]!.doc), by: rows[0]!.updated_by };
      const next = normalizeDoc(applyPatch(cur.doc, patch));
      let result: Published | undefined;
      if (seed && cur.version > 0) result = { kind: 'seeded-by-another', version: cur };
      else if (sameJson(next, cur.doc)) result = { kind: 'unchanged', version: cur };
      else {
        const problems = docProblems(next);
        if (problems.length > 0) result = { kind: 'refused', problems };
      }
      if (result) {
        await q('ROLLBACK');
        return result;
      }
      const up = await q<{ version: string }>(
        'UPDATE shared_config SET version = version + 1, doc = $1::json, updated_by = $2, updated_at = now() RETURNING version',
        [JSON.stringify(next), this.o.shared.daemonId],
      );
      const version = Number(up.rows[0]!.version);
      await q('SELECT pg_notify($1, $2)', [CONFIG_CHANNEL, String(version)]);
      await q('COMMIT');
      return { kind: 'published', version: { version, doc: next, by: this.o.shared.daemonId }, overwritten: overwrittenPaths(patch, base, cur.doc) };
    } catch (e) {
      if (isConnectionError(e)) { broken = e as Error; this.o.shared.failed(e); }
      else await q('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release(broken);
    }
  }
}
