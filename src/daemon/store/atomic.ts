// Atomic, private file writes: write a temp file with mode 0600 beside the target, then rename.
import { writeFileSync, renameSync, readFileSync, chmodSync } from 'node:fs';
import { writeFile, rename, chmod } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';

export function writePrivateFileSync(path: string, data: string): void {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, data, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export async function writePrivateFile(path: string, data: string): Promise<void> {
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, data, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

/** Reads a JSON file; a missing file gives `fallback`, a corrupt one throws a clear error. */
export function readJsonSync<T>(path: string, fallback: T): T {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw e;
  }
  try { return JSON.parse(text) as T; } catch {
    throw new Error(`${path} is not valid JSON; fix or remove it`);
  }
}
