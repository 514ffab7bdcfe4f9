// A provider's key pool as stored: the key it always had (label `default`, kept where it always
// was: keychain account = the provider id, or that entry in the insecure file) plus extra keys
// added with `providers set <p> --add`, each in its own entry `<provider>#<label>`. The labels of
// the extra keys are listed, in the order they were added, in `key-pools.json` (0600, no secret in
// it) so the daemon can find them without enumerating the keychain, which no backend does alike.
import { join } from 'node:path';
import { FILES } from './paths.js';
import { readJsonSync, writePrivateFileSync } from './atomic.js';
import { withStateLock } from './state-lock.js';

/** The label of the key `providers set <p>` (without --add) stores, and every single key has. */
export const DEFAULT_LABEL = 'default';

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

/** The keychain account (and insecure-file entry) that holds one key of a provider's pool. */
export function keyAccount(provider: string, label: string): string {
  return label === DEFAULT_LABEL ? provider : `${provider}#${label}`;
}

/** Labels from GATEWAY_<P>_API_KEY=k1,k2 (env1, env2, …): never stored, so never given by a user. */
export function envLabel(index: number): string {
  return `env${index + 1}`;
}

/** A label a user may give a stored key; throws the message the CLI prints. */
export function validatePoolLabel(label: string): string {
  if (!LABEL.test(label)) throw new Error(`a key label is 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit (got "${label}")`);
  if (/^env\d+$/.test(label)) throw new Error(`"${label}" names a key from the environment (GATEWAY_<P>_API_KEY=k1,k2 gives env1, env2); choose another label`);
  return label;
}

/** The first of key2, key3, … not already used. */
export function nextPoolLabel(used: readonly string[]): string {
  for (let n = 2; ; n++) if (!used.includes(`key${n}`)) return `key${n}`;
}

export type KeyPoolIndex = Record<string, string[]>;

function indexPath(dir: string): string {
  return join(dir, FILES.keyPools);
}

/** provider → the labels of its extra keys, in pool order; a missing or odd file is no extras. */
export function readKeyPoolIndex(dir: string): KeyPoolIndex {
  let raw: unknown;
  try { raw = readJsonSync<unknown>(indexPath(dir), {}); } catch { return {}; }
  return parseKeyPoolIndex(raw);
}

/** The index in `raw` (the file's content, or team mode's shared copy): what is not a label list of a provider is left out. */
export function parseKeyPoolIndex(raw: unknown): KeyPoolIndex {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: KeyPoolIndex = {};
  for (const [p, labels] of Object.entries(raw)) {
    if (!Array.isArray(labels)) continue;
    const ok = [...new Set(labels.filter((l): l is string => typeof l === 'string' && LABEL.test(l) && l !== DEFAULT_LABEL))];
    if (ok.length) out[p] = ok;
  }
  return out;
}

/** Every label a provider's stored pool may hold, in pool order: `default` first. */
export function storedLabels(dir: string, provider: string): string[] {
  return [DEFAULT_LABEL, ...(readKeyPoolIndex(dir)[provider] ?? [])];
}

/** Replaces the whole index (team mode writes the team's copy here, holding the state lock). */
export function writeKeyPoolIndex(dir: string, index: KeyPoolIndex): void {
  writePrivateFileSync(indexPath(dir), JSON.stringify(index, null, 2) + '\n');
}

/** Lists an extra label (at the end of the pool); `default` is never listed. */
export function addPoolLabel(dir: string, provider: string, label: string): void {
  if (label === DEFAULT_LABEL) return;
  withStateLock(dir, () => {
    const index = readKeyPoolIndex(dir);
    const labels = index[provider] ?? [];
    if (labels.includes(label)) return;
    writeKeyPoolIndex(dir, { ...index, [provider]: [...labels, label] });
  });
}

/** Unlists a label, or every extra label of the provider when `label` is undefined. */
export function removePoolLabel(dir: string, provider: string, label?: string): void {
  if (!readKeyPoolIndex(dir)[provider]) return; // nothing to unlist (the state directory may not even exist)
  withStateLock(dir, () => {
    const index = readKeyPoolIndex(dir);
    if (!index[provider]) return;
    const rest = label === undefined ? [] : index[provider].filter((l) => l !== label);
    if (rest.length) index[provider] = rest;
    else delete index[provider];
    writeKeyPoolIndex(dir, index);
  });
}
