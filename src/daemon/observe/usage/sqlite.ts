// Loads Node's built-in SQLite lazily, so `gateway --help` and commands that never touch usage
// history do not load it. On the Node versions that still flag `node:sqlite` as experimental it
// prints one ExperimentalWarning at load; that single warning is filtered here on purpose (it
// would land in every `gateway usage` output and in daemon.log). Every other warning still shows.
import type * as Sqlite from 'node:sqlite';

export type SqliteModule = typeof Sqlite;
export type Database = Sqlite.DatabaseSync;

let loading: Promise<SqliteModule> | undefined;

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
      throw new Error(`usage history needs node:sqlite (Node >= 22.13): ${(e as Error).message}`);
    } finally {
      process.emitWarning = original;
    }
  })();
  return loading;
}
