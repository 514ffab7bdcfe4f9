// The SQLite set-up the usage history and the response store share: Node's built-in SQLite loaded
// lazily, a private (0600) file in WAL mode with synchronous NORMAL and a busy timeout, one
// all-or-nothing transaction helper and a cache of prepared statements. Their writes go through a
// batch writer (batch-writer.ts) and their WAL checkpoints through a worker (sqlite-checkpointer.ts).
import { closeSync, existsSync, openSync } from 'node:fs';
import type * as Sqlite from 'node:sqlite';

export type SqliteModule = typeof Sqlite;
export type Database = Sqlite.DatabaseSync;
export type Statement = Sqlite.StatementSync;
export { startCheckpointer, type Checkpointer } from './sqlite-checkpointer.js';

let loading: Promise<SqliteModule> | undefined;

// `gateway --help` and commands that never touch a database do not load SQLite. On the Node versions
// that still flag `node:sqlite` as experimental it prints one ExperimentalWarning at load; that
// single warning is filtered here on purpose (it would land in every `gateway usage` output and in
// daemon.log). Every other warning still shows.
function isSqliteWarning(warning: string | Error, rest: unknown[]): boolean {
  const message = typeof warning === 'string' ? warning : warning.message;
  const type = typeof warning === 'string'
    ? (typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type)
    : warning.name;
  return type === 'ExperimentalWarning' && /\bSQLite\b/i.test(message);
}

export function loadSqlite(): Promise<SqliteModule> {
  loading ??= (async () => {
    const original = process.emitWarning;
    process.emitWarning = function filtered(this: unknown, warning: string | Error, ...rest: unknown[]) {
      if (isSqliteWarning(warning, rest)) return;
      return (original as (...a: unknown[]) => void).call(process, warning, ...rest);
    } as typeof process.emitWarning;
    try {
      return await import('node:sqlite');
    } catch (e) {
      loading = undefined;
      throw new Error(`the usage history and the response store need node:sqlite (Node >= 22.13): ${(e as Error).message}`);
    } finally {
      process.emitWarning = original;
    }
  })();
  return loading;
}

export interface OpenOptions {
  /** `auto_vacuum = INCREMENTAL`, so deleting gives space back (takes effect only before the first table exists). */
  incrementalVacuum?: boolean;
  /** Runs once the pragmas are set: migrations, CREATE TABLE. */
  setup?(db: Database): void;
}

/**
 * Opens `path` (created 0600 first, so the file is never readable by others even for a moment;
 * `:memory:` for none), closed again if its set-up fails.
 */
export async function openDatabase(path: string, opts: OpenOptions = {}): Promise<Database> {
  const { DatabaseSync } = await loadSqlite();
  if (path !== ':memory:' && !existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  const db = new DatabaseSync(path);
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    if (opts.incrementalVacuum) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    db.exec('PRAGMA journal_mode = WAL');
    // WAL + NORMAL: a commit does not wait on the disk; a committed batch survives a killed process,
    // only a power cut can lose the last one.
    db.exec('PRAGMA synchronous = NORMAL');
    opts.setup?.(db);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/**
 * Runs `fn` in one write transaction: all of it is committed, or none (rolled back, the error
 * rethrown). BEGIN IMMEDIATE takes the write lock up front. A BEGIN that fails (another transaction
 * is open) throws without rolling anything back.
 */
export function transaction(db: Database, fn: () => void): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    fn();
    db.exec('COMMIT');
  } catch (e) {
    db.exec('ROLLBACK');
    throw e;
  }
}

/** Prepared statements by their SQL, each prepared once: preparing them for every batch was a tenth of its cost. */
export class StatementCache {
  private readonly statements = new Map<string, Statement>();
  constructor(private readonly db: Database) {}

  get(sql: string): Statement {
    let st = this.statements.get(sql);
    if (!st) { st = this.db.prepare(sql); this.statements.set(sql, st); }
    return st;
  }
}
