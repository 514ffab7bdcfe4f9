// What a request cost: the price table shipped in data/prices.json (dated), overlaid with the
// user's `usage.prices` from config.json. A model is priced only when the table names it (exactly,
// or once a trailing release date is removed); anything else is recorded with cost unknown.
// A provider the user added from a preset is priced by `<name>/<model>` (their override) first,
// then by the preset's list prices (the "presets" section), whatever name they gave it.
import { findPreset } from '../../../providers/presets.js';
import { findProvider, providerIds, splitProviderPrefix, withoutProviderPrefix, type ProviderDescriptor } from '../../../providers/registry.js';
import { readFileSync } from 'node:fs';
import type { ProviderId } from '../../../providers/types.js';
import type { TokenUsage } from '../events.js';

/**
 * USD per million tokens. A cache rate the entry leaves out falls back: a cache read to the input
 * price (never guessed lower), a 5-minute cache write to 1.25× and a 1-hour one to 2× the input
 * price (Anthropic's multiples, the providers that bill writes at all).
 */
export interface TierPrice {
  /** Input tokens that are neither cache reads nor cache writes. */
  input: number;
  /** Output tokens, reasoning included. */
  output: number;
  /** A cache read. */
  cachedInput?: number;
  /** A cache write with the 5-minute TTL (the default TTL, and any write whose TTL was not reported). */
  cacheWrite?: number;
  /** A cache write with the 1-hour TTL. */
  cacheWrite1h?: number;
}

/** The fallback multiples of the input price for a cache write without its own rate. */
export const CACHE_WRITE_5M_MULTIPLE = 1.25;
export const CACHE_WRITE_1H_MULTIPLE = 2;

/** Hours of the day (UTC, `[from, to)`), Monday to Friday, when a provider bills its peak rate. */
export interface PeakPrice extends TierPrice {
  utcHours: Array<[number, number]>;
}

export interface ModelPrice extends TierPrice {
  /** Prices that apply when a request's input is larger than `above` tokens. */
  longContext?: TierPrice & { above: number };
  /** Prices that apply to a request made in the peak hours (DeepSeek); other hours take the entry's own. */
  peak?: PeakPrice;
}

export interface PriceTable {
  date: string;
  currency: string;
  /** `provider/model` → price. */
  models: Map<string, ModelPrice>;
  /** `preset/model` → the list price of a provider added from that preset. */
  presets: Map<string, ModelPrice>;
  /** How many entries came from config.json. */
  overrides: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const price = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

const CACHE_RATES = ['cachedInput', 'cacheWrite', 'cacheWrite1h'] as const;
const TIER_FIELDS: readonly string[] = ['input', 'output', ...CACHE_RATES];
/** The keys of object `v` not in `known` (none when `v` is no object). */
const otherFields = (v: unknown, known: readonly string[]): string[] => (isObj(v) ? Object.keys(v).filter((k) => !known.includes(k)) : []);

function parseTier(v: unknown): TierPrice | undefined {
  if (!isObj(v) || !price(v.input) || !price(v.output)) return undefined;
  const tier: TierPrice = { input: v.input, output: v.output };
  for (const rate of CACHE_RATES) {
    if (v[rate] === undefined) continue;
    if (!price(v[rate])) return undefined;
    tier[rate] = v[rate];
  }
  return tier;
}

/**
 * What an entry has that is no price field, said in a sentence; undefined when nothing. The entry
 * is still used (a note beside a price harms nothing), but a misspelt rate (`cachedinput`) would
 * otherwise price its tokens at another rate without a word.
 */
export function unknownPriceFields(v: unknown): string | undefined {
  const unknown = [...otherFields(v, [...TIER_FIELDS, 'longContext', 'peak']),
    ...otherFields(isObj(v) ? v.longContext : undefined, [...TIER_FIELDS, 'above']).map((k) => `longContext.${k}`),
    ...otherFields(isObj(v) ? v.peak : undefined, [...TIER_FIELDS, 'utcHours']).map((k) => `peak.${k}`)];
  if (unknown.length === 0) return undefined;
  return `${unknown.map((k) => `"${k}"`).join(', ')} ${unknown.length === 1 ? 'is not a price field' : 'are not price fields'} (known: ${[...TIER_FIELDS, 'longContext', 'peak'].join(', ')}): ignored`;
}

/** One entry, or a message saying what is wrong with it. */
export function parseModelPrice(v: unknown): ModelPrice | string {
  const base = parseTier(v);
  if (!base) return 'needs numeric "input" and "output" (USD per million tokens, >= 0), and numeric "cachedInput"/"cacheWrite"/"cacheWrite1h" if given';
  const { longContext: lc, peak } = v as Obj;
  if (lc !== undefined && peak !== undefined) return 'has both "longContext" and "peak": one or the other';
  if (peak !== undefined) {
    const tier = parseTier(peak);
    const hours = isObj(peak) ? peak.utcHours : undefined;
    const valid = Array.isArray(hours) && hours.length > 0 && hours.every((h) => Array.isArray(h) && h.length === 2
      && h.every((n) => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 24) && (h[0] as number) < (h[1] as number));
    if (!tier || !valid) return '"peak" needs "utcHours" ([[from, to], …], whole UTC hours, from < to) and numeric "input" and "output"';
    return { ...base, peak: { ...tier, utcHours: (hours as Array<[number, number]>).map(([a, b]) => [a, b]) } };
  }
  if (lc === undefined) return base;
  const tier = parseTier(lc);
  if (!tier || !isObj(lc) || typeof lc.above !== 'number' || !(lc.above > 0)) return '"longContext" needs "above" (tokens) and numeric "input" and "output"';
  return { ...base, longContext: { ...tier, above: lc.above } };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The "presets" section: preset id → { source, checked, note, models }; bad entries are reported. */
function parsePresetPrices(section: unknown, problems: string[]): Map<string, ModelPrice> {
  const out = new Map<string, ModelPrice>();
  if (section === undefined) return out;
  if (!isObj(section)) { problems.push('prices.json: "presets" must be an object of preset id → prices'); return out; }
  for (const [id, entry] of Object.entries(section)) {
    const where = `prices.json: presets.${id}`;
    if (!findPreset(id) || findPreset(id)!.id !== id) { problems.push(`${where}: no preset is named "${id}"`); continue; }
    if (!isObj(entry) || !isObj(entry.models)) { problems.push(`${where}: needs "models" (model id → price)`); continue; }
    const models = Object.entries(entry.models);
    // A price without its source and the day it was read cannot be checked or kept current.
    if (models.length > 0 && (typeof entry.source !== 'string' || typeof entry.checked !== 'string' || !DATE.test(entry.checked))) {
      problems.push(`${where}: needs "source" (where the prices were read) and "checked" (YYYY-MM-DD)`);
      continue;
    }
    for (const [model, v] of models) {
      const p = parseModelPrice(v);
      if (typeof p === 'string' || !/^\S+$/.test(model)) problems.push(`${where}.models.${model}: ${typeof p === 'string' ? p : 'a model id has no spaces'}`);
      else out.set(`${id}/${model}`, p);
    }
  }
  return out;
}

/** `<provider id>/<model>`, the provider named by its id (aliases are normalised first). */
function validKey(k: string): boolean {
  const split = splitProviderPrefix(k);
  return split !== undefined && split.provider.id === k.slice(0, k.indexOf('/')) && /^\S+$/.test(split.rest);
}

/** An alias prefix (`google/…`) → the provider's id. */
function canonicalKey(k: string): string {
  const split = splitProviderPrefix(k);
  return split ? `${split.provider.id}/${split.rest}` : k;
}

/** Builds a table from the shipped JSON and the user's overrides; bad entries are reported, not used. */
export function buildPriceTable(shipped: unknown, overrides: Record<string, unknown> = {}): { table: PriceTable; problems: string[] } {
  const problems: string[] = [];
  const file = isObj(shipped) ? shipped : {};
  const models = new Map<string, ModelPrice>();
  for (const [k, v] of Object.entries(isObj(file.models) ? file.models : {})) {
    const p = parseModelPrice(v);
    if (typeof p === 'string' || !validKey(k)) problems.push(`prices.json: ${k}: ${typeof p === 'string' ? p : 'key must be <provider>/<model>'}`);
    else models.set(k, p);
  }
  let applied = 0;
  for (const [rawKey, v] of Object.entries(overrides)) {
    const k = canonicalKey(rawKey);
    const p = parseModelPrice(v);
    if (!validKey(k)) problems.push(`config usage.prices: "${rawKey}" must be <provider>/<model> (${providerIds().join(', ')})`);
    else if (typeof p === 'string') problems.push(`config usage.prices: ${rawKey}: ${p}`);
    else { models.set(k, p); applied++; }
    const unknown = validKey(k) ? unknownPriceFields(v) : undefined;
    if (unknown) problems.push(`config usage.prices: ${rawKey}: ${unknown}`);
  }
  return {
    table: {
      date: typeof file.date === 'string' ? file.date : 'unknown', currency: typeof file.currency === 'string' ? file.currency : 'USD',
      models, presets: parsePresetPrices(file.presets, problems), overrides: applied,
    },
    problems,
  };
}

const SHIPPED_PRICES = new URL('../../../../data/prices.json', import.meta.url);

export function readShippedPrices(): unknown {
  try {
    return JSON.parse(readFileSync(SHIPPED_PRICES, 'utf8'));
  } catch {
    return {};
  }
}

/** The model id as the table keys it: no provider prefix, no `models/`. */
export function bareModel(model: string): string {
  return withoutProviderPrefix(model).replace(/^models\//, '');
}

// Release-date suffixes providers append to a model's id: -20250929, -2024-08-06, @20240620, -latest.
const DATED = /(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$/;

type Found = { key: string; price: ModelPrice } | undefined;

/**
 * The preset whose list prices a provider is billed at: the one it was added from (or the one that
 * preset is billed as), while its base URL is still that preset's origin. One added with
 * `--base-url` pointing elsewhere (a proxy, another vendor) is not that vendor's bill.
 */
export function pricedPreset(p: Pick<ProviderDescriptor, 'preset' | 'origin'> | undefined): string | undefined {
  const preset = p?.preset ? findPreset(p.preset) : undefined;
  if (!preset) return undefined;
  let origin: string;
  try { origin = new URL(preset.baseUrl).origin; } catch { return undefined; } // a placeholder (Azure's <resource>)
  return origin === p!.origin ? preset.billedAs ?? preset.id : undefined;
}

// Lookups per table, keyed by `provider/model` as recorded (and the preset it is priced by, which
// `providers add` can change while the daemon runs): a busy daemon asks for the same few models on
// every request, and the regexes below cost more than the cost they find.
const lookups = new WeakMap<PriceTable, Map<string, Found>>();

export function findPrice(table: PriceTable, provider: ProviderId, model: string | null): Found {
  if (!model) return undefined;
  let cache = lookups.get(table);
  if (!cache) { cache = new Map(); lookups.set(table, cache); }
  const preset = table.presets.size > 0 ? pricedPreset(findProvider(provider)) : undefined;
  const k = `${preset ?? ''}:${provider}/${model}`;
  if (cache.has(k)) return cache.get(k);
  const found = lookupPrice(table, provider, model, preset);
  if (cache.size >= 4096) cache.clear();
  cache.set(k, found);
  return found;
}

/** `<provider>/<model>` (shipped, or the user's override), then the preset's list price. */
function lookupPrice(table: PriceTable, provider: ProviderId, model: string, preset: string | undefined): Found {
  const bare = bareModel(model);
  const candidates = [bare, bare.replace(DATED, '')];
  for (const candidate of candidates) {
    const key = `${provider}/${candidate}`;
    const p = table.models.get(key);
    if (p) return { key, price: p };
  }
  if (preset) {
    for (const candidate of candidates) {
      const key = `${preset}/${candidate}`;
      const p = table.presets.get(key);
      if (p) return { key: `preset:${key}`, price: p };
    }
  }
  return undefined;
}

/** Whether `at` (ms since epoch) falls in the peak hours: Monday to Friday, UTC. */
export function inPeak(peak: PeakPrice, at: number): boolean {
  const d = new Date(at);
  const day = d.getUTCDay();
  if (day === 0 || day === 6) return false;
  const hour = d.getUTCHours() + d.getUTCMinutes() / 60;
  return peak.utcHours.some(([from, to]) => hour >= from && hour < to);
}

/** A request's tokens by the rate each is billed at, and those rates (USD per million). */
interface Priced {
  uncached: number; read: number; write5m: number; write1h: number; output: number;
  rates: { input: number; read: number; write5m: number; write1h: number; output: number };
}

/**
 * Splits a request's tokens by rate. Input counts include cache reads and writes (the gateway
 * normalizes every provider that way: events.ts TokenUsage), and output includes reasoning tokens,
 * which providers bill as output. `at`: when the request was made (ms since epoch), for an entry
 * with peak hours; without it the entry's own (off-peak) prices apply.
 */
function priced(p: ModelPrice, u: TokenUsage, at?: number): Priced {
  const input = u.inputTokens ?? 0;
  const tier: TierPrice = p.longContext && input > p.longContext.above ? p.longContext
    : p.peak && at !== undefined && inPeak(p.peak, at) ? p.peak : p;
  const read = Math.min(u.cachedTokens ?? 0, input);
  const written = Math.min(u.cacheWriteTokens ?? 0, input - read);
  const write1h = Math.min(u.cacheWrite1hTokens ?? 0, written);
  return {
    uncached: input - read - written, read, write5m: written - write1h, write1h, output: u.outputTokens ?? 0,
    rates: {
      input: tier.input, output: tier.output, read: tier.cachedInput ?? tier.input,
      write5m: tier.cacheWrite ?? tier.input * CACHE_WRITE_5M_MULTIPLE,
      write1h: tier.cacheWrite1h ?? tier.input * CACHE_WRITE_1H_MULTIPLE,
    },
  };
}

/** USD for one request: each part of its input at its own rate (uncached, cache read, 5-minute and 1-hour write), and its output. */
export function costOf(p: ModelPrice, u: TokenUsage, at?: number): number {
  const t = priced(p, u, at);
  return (t.uncached * t.rates.input + t.read * t.rates.read + t.write5m * t.rates.write5m + t.write1h * t.rates.write1h + t.output * t.rates.output) / 1_000_000;
}

/**
 * USD the prompt cache saved on one request: its cached tokens (reads and writes) at the uncached
 * input price, less what they were billed. Negative when writes cost more than reads saved.
 */
export function cacheSavingsOf(p: ModelPrice, u: TokenUsage, at?: number): number {
  const t = priced(p, u, at);
  const cached = t.read + t.write5m + t.write1h;
  return (cached * t.rates.input - t.read * t.rates.read - t.write5m * t.rates.write5m - t.write1h * t.rates.write1h) / 1_000_000;
}

/**
 * The cost to record: 0 for a local provider; null when the model is not in the table, or when a
 * successful request reported no token counts (the provider did not say, so the gateway does not guess).
 */
export function requestCost(table: PriceTable, provider: ProviderId, model: string | null, usage: TokenUsage, status: number, at?: number): number | null {
  return priceRequest(table, provider, model, usage, status, costOf, at);
}

/** What the prompt cache saved on a request (cacheSavingsOf), known and unknown as its cost is. */
export function requestCacheSavings(table: PriceTable, provider: ProviderId, model: string | null, usage: TokenUsage, status: number, at?: number): number | null {
  return priceRequest(table, provider, model, usage, status, cacheSavingsOf, at);
}

function priceRequest(
  table: PriceTable, provider: ProviderId, model: string | null, usage: TokenUsage, status: number,
  price: (p: ModelPrice, u: TokenUsage, at?: number) => number, at?: number,
): number | null {
  return charge(priceOf(table, provider, model), usage, status, price, at);
}

/** A model's price as requestCost finds it: 0 for a local provider (it bills nobody), undefined when unpriced. */
type Priceable = ModelPrice | 0 | undefined;

function priceOf(table: PriceTable, provider: ProviderId, model: string | null): Priceable {
  // A server on this machine (or one that takes no key) bills nobody.
  if (findProvider(provider)?.local) return 0;
  return findPrice(table, provider, model)?.price;
}

function charge(p: Priceable, usage: TokenUsage, status: number, price: (p: ModelPrice, u: TokenUsage, at?: number) => number, at?: number): number | null {
  if (p === 0) return 0;
  if (!p) return null;
  const reported = usage.inputTokens !== undefined || usage.outputTokens !== undefined;
  if (!reported) return status >= 400 ? 0 : null;
  return price(p, usage, at);
}

/**
 * requestCost for one provider and model with the table looked up once: for a caller that prices
 * many requests of the same model (the metrics recorder keeps one per label set).
 */
export function costFor(table: PriceTable, provider: ProviderId, model: string | null): (usage: TokenUsage, status: number, at?: number) => number | null {
  const p = priceOf(table, provider, model);
  return (usage, status, at) => charge(p, usage, status, costOf, at);
}
