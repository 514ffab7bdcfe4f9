// One writer at a time for the state directory's config files (config.json, key-pools.json). The
// CLI reads a section, changes it and writes the file back; in team mode the daemon writes the
// team's config into the same files: without the lock, either could write over what the other wrote
// just after it read, and a change would be undone without a word. The lock is a file made with
// O_EXCL; one older than STALE_MS belongs to a holder that died (a write takes microseconds) and is
// broken.
import { closeSync, openSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FILES } from './paths.js';

const STALE_MS = 10_000;
const WAIT_STEP_MS = 5;

function lockPath(dir: string): string {
  return join(dir, FILES.configLock);
}

/** Takes the lock if it is free (or stale); returns its release, or undefined when another holds it. */
export function tryLockState(dir: string): (() => void) | undefined {
  const path = lockPath(dir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(path, 'wx', 0o600));
      return () => rmSync(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let age: number;
    try { age = Date.now() - statSync(path).mtimeMs; } catch { continue; } // released meanwhile: try again
    if (age < STALE_MS) return undefined;
    rmSync(path, { force: true });
  }
  return undefined;
}

/**
 * Runs `fn` holding the lock, waiting for it as long as a live holder may hold it. For the CLI,
 * whose wait blocks nobody; the daemon uses tryLockState and tries again later instead.
 */
export function withStateLock<T>(dir: string, fn: () => T): T {
  const deadline = Date.now() + STALE_MS + 1_000;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const release = tryLockState(dir);
    if (release) {
      try { return fn(); } finally { release(); }
    }
    if (Date.now() > deadline) throw new Error(`${lockPath(dir)} is held by another gateway command; remove it if none is running`);
    Atomics.wait(sleeper, 0, 0, WAIT_STEP_MS);
  }
}
