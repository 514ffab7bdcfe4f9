// Builds the daemon for the bench into bench/.build (not dist/, so a bench never races other
// builds). A failed build (someone's half-finished file) falls back to the last good bench build,
// then to dist/, and says so in the report.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, log, ROOT } from './lib.ts';

export interface Build { dir: string; note: string }

export function buildDaemon(skip: boolean): Build {
  const out = join(BENCH_DIR, '.build');
  const next = join(BENCH_DIR, '.build-next');
  const dist = join(ROOT, 'dist');
  const usable = (d: string) => existsSync(join(d, 'daemon', 'server.js'));
  const age = (d: string) => new Date(statSync(join(d, 'daemon', 'server.js')).mtimeMs).toISOString().replace(/\.\d+Z$/, 'Z');
  const fallback = (why: string): Build => {
    if (usable(out)) return { dir: out, note: `${why}; ran the last good bench build (${age(out)})` };
    if (usable(dist)) return { dir: dist, note: `${why}; ran dist/ (built ${age(dist)})` };
    throw new Error(`${why}, and there is no earlier build to fall back on`);
  };
  if (skip) return fallback('--no-build');
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) return fallback('typescript is not installed (npm install)');
  log('building the daemon (tsc → bench/.build)…');
  rmSync(next, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.json'), '--outDir', next], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0 || !usable(next)) {
    const errors = (r.stdout + r.stderr).split('\n').filter((l) => /error TS/.test(l));
    rmSync(next, { recursive: true, force: true });
    log(`build failed (${errors.length} errors):\n  ${errors.slice(0, 5).join('\n  ')}`);
    return fallback(`the working tree does not build (${errors.length} TypeScript errors, first: ${errors[0] ?? 'unknown'})`);
  }
  rmSync(out, { recursive: true, force: true });
  renameSync(next, out);
  // The build finds the shipped price list where dist/ does, one folder above it (data/prices.json):
  // without it nothing would be priced, and keys with a budget could use no model.
  if (!existsSync(join(BENCH_DIR, 'data'))) symlinkSync(join('..', 'data'), join(BENCH_DIR, 'data'));
  return { dir: out, note: 'built from the working tree just before the run' };
}
