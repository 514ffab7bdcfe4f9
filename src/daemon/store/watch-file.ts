// Calls back when one file of the state directory changes (keys.json, config.json), debounced:
// an editor or an atomic rename fires several events for one change. The directory is watched, not
// the file, so a file replaced by rename keeps being seen. Where fs.watch is missing or the
// directory goes away, nothing is called: /admin/reload still works.
import { watch } from 'node:fs';
import { basename } from 'node:path';

export interface FileWatch { close(): void }

export function watchStateFile(dir: string, name: string, onChange: () => void, debounceMs: number): FileWatch {
  let timer: NodeJS.Timeout | undefined;
  try {
    const w = watch(dir, { persistent: false }, (_ev, file) => {
      if (file && basename(file.toString()) !== name) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
    w.on('error', () => { /* directory removed */ });
    return { close: () => { clearTimeout(timer); w.close(); } };
  } catch {
    return { close: () => {} };
  }
}
