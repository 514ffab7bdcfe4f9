// Team mode's shared configuration on the state directory's side: the shared sections as the files
// hold them (config.json, key-pools.json), the team's copy written into them, and `team-config.json`,
// the document this directory last took from the team: the base a local edit is measured against
// (config.json minus the base is what was edited here: the CLI or a hand edit), and the reason a
// local edit is not the team's yet, for the CLI to tell its user.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonSync, writePrivateFileSync } from './atomic.js';
import { configPath, readRawConfig } from './config.js';
import { parseKeyPoolIndex, readKeyPoolIndex, writeKeyPoolIndex } from './key-pools.js';
import { FILES } from './paths.js';
import { normalizeDoc, sameJson, sharedOf, withShared, type SharedDoc } from './shared-config.js';

export interface LocalConfig {
  /** config.json as written. */
  config: Record<string, unknown>;
  /** Its shared sections, with key-pools.json's index. */
  doc: SharedDoc;
}

/** The state directory's config and its shared sections; throws when config.json is not valid JSON. */
export function readLocal(dir: string): LocalConfig {
  const config = readRawConfig(dir);
  return { config, doc: sharedOf(config, readKeyPoolIndex(dir)) };
}

/**
 * Makes the files hold `doc` as their shared sections (config.json keeps every other setting as
 * it is). A file is written only when its part differs, atomically and 0600 as conf writes it.
 */
export function writeLocal(dir: string, local: LocalConfig, doc: SharedDoc): void {
  const { keyPools: pools, ...rest } = normalizeDoc(doc);
  const { keyPools: localPools, ...localRest } = local.doc;
  if (!sameJson(rest, localRest)) writePrivateFileSync(configPath(dir), `${JSON.stringify(withShared(local.config, rest), null, '\t')}\n`);
  if (!sameJson(pools ?? {}, localPools ?? {})) writeKeyPoolIndex(dir, parseKeyPoolIndex(pools));
}

/** Keeps config.json as it was before this directory's daemon took the team's sections over its own. */
export function keepBeforeTeam(dir: string): string | undefined {
  if (!existsSync(configPath(dir))) return undefined;
  const to = join(dir, FILES.configBeforeTeam);
  copyFileSync(configPath(dir), to);
  return to;
}

export interface TeamBase {
  /** The store it came from (`user@host:port/db`): a base from another store means nothing here. */
  store: string;
  version: number;
  doc: SharedDoc;
  /** Why config.json's own change is not the team's yet (refused, or the store unreachable); absent when there is none. */
  unpublished?: string;
}

export function readTeamBase(dir: string): TeamBase | undefined {
  let raw: unknown;
  try { raw = readJsonSync<unknown>(join(dir, FILES.teamConfig), undefined); } catch { return undefined; }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const b = raw as Record<string, unknown>;
  if (typeof b.store !== 'string' || typeof b.version !== 'number' || !Number.isSafeInteger(b.version) || b.version < 0) return undefined;
  return { store: b.store, version: b.version, doc: normalizeDoc(b.doc), ...(typeof b.unpublished === 'string' ? { unpublished: b.unpublished } : {}) };
}

export function writeTeamBase(dir: string, base: TeamBase): void {
  writePrivateFileSync(join(dir, FILES.teamConfig), `${JSON.stringify(base, null, 2)}\n`);
}

/**
 * For the CLI after it changed config.json or key-pools.json of a state directory whose daemon
 * runs on the store `store` (display form): why the change is not the team's yet, or undefined
 * when it is (or the directory is not in a team).
 */
export function unpublishedChange(dir: string, store: string, running: boolean): string | undefined {
  const base = readTeamBase(dir);
  if (!base || base.store !== store) return undefined;
  let local: LocalConfig;
  try { local = readLocal(dir); } catch (e) { return (e as Error).message; }
  if (sameJson(local.doc, base.doc)) return undefined;
  if (!running) return 'the gateway is not running; it publishes the change to the team when it starts';
  return base.unpublished ?? 'the gateway has not published it yet';
}
