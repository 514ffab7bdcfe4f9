// A per-run home for a coding tool that reads its settings only from a file in its home directory
// and has no flag to override one (gemini-cli: ~/.gemini/settings.json). `run` makes a throwaway
// directory whose <dir> links back every entry of the user's own (history, trust decisions,
// commands, extensions…, so the tool reads and writes them as usual) except the settings file,
// which is a copy of the user's with the gateway's settings merged on top. The tool is pointed at
// it by its home variable; the user's settings file is never written; all of it is removed when
// the command exits.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { deepMerge, parseJsonWithComments, type JsonObject } from './tool-settings.js';

export interface ToolHomeSpec { readonly envVar: string; readonly dir: string; readonly file: string }

export interface ToolHome {
  /** The variable to set for the command (the tool's home variable → the overlay). */
  readonly vars: Array<[string, string]>;
  /** What keeps the user's settings or ours from applying as meant, if anything (for a note). */
  readonly problem?: string;
  remove(): void;
}

/** The home the tool would use: its own variable if set, else the user's home. */
function userHome(spec: ToolHomeSpec, env: NodeJS.ProcessEnv): string {
  return env[spec.envVar] || env.HOME || homedir();
}

function readUserSettings(path: string): { settings: JsonObject; problem?: string } {
  if (!existsSync(path)) return { settings: {} };
  try {
    const parsed = parseJsonWithComments(readFileSync(path, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { settings: parsed as JsonObject };
    return { settings: {}, problem: `${path} is not a JSON object` };
  } catch (e) {
    return { settings: {}, problem: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The dotted keys of `ours` whose leaf values `theirs` sets differently. */
function overridden(ours: JsonObject, theirs: JsonObject, prefix = ''): string[] {
  return Object.entries(ours).flatMap(([k, v]) => {
    const t = theirs[k];
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return typeof t === 'object' && t !== null ? overridden(v as JsonObject, t as JsonObject, `${prefix}${k}.`) : [];
    return t !== undefined && JSON.stringify(t) !== JSON.stringify(v) ? [`${prefix}${k}`] : [];
  });
}

const samePath = (a: string, b: string) => { try { return realpathSync(a) === realpathSync(b); } catch { return false; } };

/**
 * `cwd`: where the tool runs. Run from the home directory itself, gemini-cli also reads
 * <home>/.gemini/settings.json as that folder's workspace settings, which rank above the user
 * settings the overlay holds: a value there that differs from ours is reported as a problem.
 */
export function overlayToolHome(spec: ToolHomeSpec, ours: JsonObject, env: NodeJS.ProcessEnv, cwd = process.cwd()): ToolHome {
  const home = userHome(spec, env);
  const userDir = join(home, spec.dir);
  const overlay = mkdtempSync(join(tmpdir(), 'gateway-tool-home-'));
  const dir = join(overlay, spec.dir);
  mkdirSync(dir);
  const linked: string[] = [];
  const link = (target: string, at: string) => { symlinkSync(target, at); linked.push(at); };
  let entries: string[] = [];
  try { entries = lstatSync(userDir).isDirectory() ? readdirSync(userDir) : []; } catch { /* no such directory yet */ }
  for (const name of entries) if (name !== spec.file) link(join(userDir, name), join(dir, name));
  // Files a tool looks for in the home itself (gemini-cli: ~/.env, its last .env fallback).
  for (const name of ['.env']) if (existsSync(join(home, name))) link(join(home, name), join(overlay, name));
  const read = readUserSettings(join(userDir, spec.file));
  const { settings } = read;
  let problem = read.problem && `${read.problem}; it runs with the gateway's settings only`;
  const clash = samePath(cwd, home) ? overridden(ours, settings) : [];
  if (!problem && clash.length > 0) {
    problem = `run from your home directory, the tool also reads ${join(userDir, spec.file)} as this folder's settings, and its ${clash.join(', ')} win over the gateway's: run it from another directory`;
  }
  writeFileSync(join(dir, spec.file), `${JSON.stringify(deepMerge(settings, ours), null, 2)}\n`, { mode: 0o600 });
  return {
    vars: [[spec.envVar, overlay]],
    problem,
    remove() {
      // The links first, one by one, so removing the overlay can never reach into what they point at.
      for (const at of linked) { try { unlinkSync(at); } catch { /* already gone */ } }
      rmSync(overlay, { recursive: true, force: true });
    },
  };
}
