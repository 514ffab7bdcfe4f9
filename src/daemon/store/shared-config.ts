// Team mode's shared configuration, as a document: the parts of config.json (and key-pools.json)
// that every daemon of a team must serve alike, kept in the store as one versioned JSON document.
// This module is pure: which sections are shared, taking them out of and putting them into a
// config.json object, the change a local edit makes (a JSON merge patch, RFC 7386), and what is
// wrong with a document. team-config.ts keeps the document in the store and in step with the files.
//
// Shared, and why: `aliases` and `routing` (fallbacks, retries, the breaker, per-provider settings)
// decide where a request goes, and an added provider (`providers`) is what an alias may name; the
// `cache` marks change what a request sends upstream and what it costs; `usage.prices` (here
// `prices`) are what a budget is charged by, and a budget is one across the team, so one request
// costs the same whichever daemon serves it; `keyPools` lists the labels of each provider's extra
// keys (never a key: each daemon fills each label from its own keychain or secret file, or replaces
// the pool whole from its environment). Everything else in config.json is the machine's own.
import { parseKeyPoolIndex } from './key-pools.js';
import { parseConfig } from './config.js';
import { parseModelPrice } from '../observe/usage/prices.js';
import { PROVIDER_ROUTING_FIELDS } from '../routing/settings.js';
import { unknownProviderFields } from '../../providers/configured.js';

export const SHARED_SECTIONS = ['aliases', 'routing', 'providers', 'cache', 'prices', 'keyPools'] as const;
export type SharedSection = (typeof SHARED_SECTIONS)[number];

/** The team's document: each section as written (checked by docProblems before it is used). */
export type SharedDoc = Partial<Record<SharedSection, unknown>>;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The sections config.json holds at its top level (prices sit under `usage`, key pools in their own file). */
const TOP_LEVEL = ['aliases', 'routing', 'providers', 'cache'] as const;

/** Equal as JSON: objects whatever their key order, arrays in order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

/** The document without absent or empty sections: `"aliases": {}` and no aliases are one state. */
export function normalizeDoc(doc: unknown): SharedDoc {
  const out: SharedDoc = {};
  if (!isObject(doc)) return out;
  for (const s of SHARED_SECTIONS) {
    const v = doc[s];
    if (v === undefined || (isObject(v) && Object.keys(v).length === 0)) continue;
    out[s] = v;
  }
  return out;
}

/** The shared sections of a config.json object and a key-pool index (key-pools.json). */
export function sharedOf(config: Obj, keyPools: unknown): SharedDoc {
  const doc: SharedDoc = {};
  for (const s of TOP_LEVEL) doc[s] = config[s];
  doc.prices = isObject(config.usage) ? config.usage.prices : undefined;
  doc.keyPools = keyPools;
  return normalizeDoc(doc);
}

/** A copy of config.json object `config` whose shared sections are the document's (key pools live in their own file). */
export function withShared(config: Obj, doc: SharedDoc): Obj {
  const out: Obj = { ...config };
  for (const s of TOP_LEVEL) {
    if (doc[s] === undefined) delete out[s];
    else out[s] = doc[s];
  }
  const usage: Obj = isObject(config.usage) ? { ...config.usage } : {};
  if (doc.prices === undefined) delete usage.prices;
  else usage.prices = doc.prices;
  if (Object.keys(usage).length > 0) out.usage = usage;
  else delete out.usage;
  return out;
}

/**
 * The merge patch (RFC 7386) that turns `from` into `to`: objects compared key by key, anything
 * else replaced whole; `null` removes. Undefined when they are the same. A `null` written in the
 * config itself would read as a removal; no setting takes null.
 */
export function mergePatch(from: unknown, to: unknown): Obj | undefined {
  if (!isObject(from) || !isObject(to)) throw new Error('mergePatch takes two objects');
  const patch: Obj = {};
  for (const k of Object.keys(from)) if (from[k] !== undefined && to[k] === undefined) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined || sameJson(from[k], v)) continue;
    patch[k] = isObject(from[k]) && isObject(v) ? mergePatch(from[k], v)! : v;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** `target` with `patch` applied (RFC 7386); neither is changed. */
export function applyPatch(target: unknown, patch: Obj): Obj {
  const out: Obj = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = isObject(v) ? applyPatch(out[k], v) : v;
  }
  return out;
}

/** The settings a patch sets or removes, as dotted paths (`aliases.fast`, `routing.retries`), for the log. */
export function patchPaths(patch: Obj, prefix = ''): string[] {
  return Object.entries(patch).flatMap(([k, v]) => (isObject(v) ? patchPaths(v, `${prefix}${k}.`) : [`${prefix}${k}`]));
}

/**
 * The paths `patch` sets that were changed in `current` since `base` (by another daemon): the
 * edit wins there (last writer wins), and the log says so.
 */
export function overwrittenPaths(patch: Obj, base: unknown, current: unknown, prefix = ''): string[] {
  const b = isObject(base) ? base : {};
  const c = isObject(current) ? current : {};
  return Object.entries(patch).flatMap(([k, v]) => {
    if (isObject(v) && isObject(c[k])) return overwrittenPaths(v, b[k], c[k], `${prefix}${k}.`);
    return sameJson(b[k], c[k]) || sameJson(c[k], v === null ? undefined : v) ? [] : [`${prefix}${k}`];
  });
}

/** The sections whose content differs between two documents. */
export function changedSections(a: SharedDoc, b: SharedDoc): SharedSection[] {
  return SHARED_SECTIONS.filter((s) => !sameJson(a[s], b[s]));
}

/**
 * Everything wrong with a document, each naming its setting; empty when every daemon can serve
 * it as it is. A document with a problem is never published and never applied: a daemon keeps
 * the last good one whole, so nothing of a bad change is ever half in force.
 */
export function docProblems(doc: SharedDoc): string[] {
  const problems: string[] = [];
  for (const s of SHARED_SECTIONS) if (doc[s] !== undefined && !isObject(doc[s])) problems.push(`${s} must be an object`);
  if (problems.length > 0) return problems;
  const c = parseConfig(withShared({}, doc));
  problems.push(...c.problems, ...c.routing.problems, ...c.cache.problems);
  // A field that is no setting would be published as written, to every daemon and the database's
  // dumps: a provider's key typed into its entry by hand (`apiKey`) most of all. The laptop's
  // parsers pass over such a field (saying so); the team's document refuses it where a key would go.
  const unknown = [
    ...Object.entries(isObject(doc.providers) ? doc.providers : {}).flatMap(([name, v]) => unknownProviderFields(name, v)),
    ...Object.entries(isObject(doc.routing) && isObject(doc.routing.providers) ? doc.routing.providers : {})
      .flatMap(([id, v]) => (isObject(v) ? Object.keys(v).filter((k) => !PROVIDER_ROUTING_FIELDS.includes(k)).map((k) => `routing.providers.${id}.${k}`) : [])),
  ];
  for (const path of unknown) problems.push(`${path} is not a setting (a provider's key is never shared: each daemon keeps its own, gateway providers set)`);
  for (const [model, v] of Object.entries(isObject(doc.prices) ? doc.prices : {})) {
    const p = parseModelPrice(v);
    if (!/^[^/\s]+\/\S+$/.test(model)) problems.push(`usage.prices: "${model}" must be <provider>/<model>`);
    else if (typeof p === 'string') problems.push(`usage.prices.${model}: ${p}`);
  }
  if (doc.keyPools !== undefined && !sameJson(parseKeyPoolIndex(doc.keyPools), doc.keyPools)) {
    problems.push('keyPools must map a provider to the labels of its extra keys (letters, digits, ".", "_", "-"; "default" is never listed)');
  }
  return problems;
}
