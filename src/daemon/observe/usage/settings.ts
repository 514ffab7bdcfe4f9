// The `usage` section of config.json: retention, debug body logging and price overrides, checked
// leniently (a bad value falls back to its default with a warning, it never stops the daemon).
//
//   "usage": { "retentionDays": 30, "rollupRetentionDays": 400, "logBodies": false, "bodyCapBytes": 65536,
//              "prices": { "openai/my-finetune": { "input": 3, "output": 12, "cachedInput": 1.5 },
//                          "anthropic/claude-x": { "input": 5, "output": 25, "cachedInput": 0.5, "cacheWrite": 6.25, "cacheWrite1h": 10 } } }

export interface UsageSettings {
  /** Raw request rows older than this are pruned. */
  retentionDays: number;
  /** Hourly rollups (charts, totals, `gateway usage`) are kept this long. */
  rollupRetentionDays: number;
  /** Debugging only: store request and response bodies (capped, credentials redacted). */
  logBodies: boolean;
  /** Each stored body keeps at most this many bytes. */
  bodyCapBytes: number;
  prices: Record<string, unknown>;
}

export const USAGE_DEFAULTS: Readonly<Omit<UsageSettings, 'prices'>> = {
  retentionDays: 30,
  rollupRetentionDays: 400,
  logBodies: false,
  bodyCapBytes: 65_536,
};

const days = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 36_500;

export function parseUsageSettings(raw: unknown): { settings: UsageSettings; warnings: string[] } {
  const warnings: string[] = [];
  const obj = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  if (raw !== undefined && obj !== raw) warnings.push('config "usage" must be an object; using defaults');
  const pick = (name: 'retentionDays' | 'rollupRetentionDays'): number => {
    const v = obj[name];
    if (v === undefined) return USAGE_DEFAULTS[name];
    if (days(v)) return v;
    warnings.push(`config usage.${name} must be a number of days between 0 and 36500; using ${USAGE_DEFAULTS[name]}`);
    return USAGE_DEFAULTS[name];
  };
  const retentionDays = pick('retentionDays');
  const rollupRetentionDays = Math.max(pick('rollupRetentionDays'), retentionDays);
  let logBodies = USAGE_DEFAULTS.logBodies;
  if (typeof obj.logBodies === 'boolean') logBodies = obj.logBodies;
  else if (obj.logBodies !== undefined) warnings.push('config usage.logBodies must be true or false');
  let bodyCapBytes = USAGE_DEFAULTS.bodyCapBytes;
  const cap = obj.bodyCapBytes;
  if (typeof cap === 'number' && Number.isSafeInteger(cap) && cap >= 1_024 && cap <= 16_777_216) bodyCapBytes = cap;
  else if (cap !== undefined) warnings.push(`config usage.bodyCapBytes must be a whole number of bytes between 1024 and 16777216; using ${USAGE_DEFAULTS.bodyCapBytes}`);
  let prices: Record<string, unknown> = {};
  if (obj.prices && typeof obj.prices === 'object' && !Array.isArray(obj.prices)) prices = obj.prices as Record<string, unknown>;
  else if (obj.prices !== undefined) warnings.push('config usage.prices must be an object of "<provider>/<model>": { input, output, cachedInput, cacheWrite, cacheWrite1h }');
  return { settings: { retentionDays, rollupRetentionDays, logBodies, bodyCapBytes, prices }, warnings };
}

const UNIT_MS = { h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 365 * 86_400_000 } as const;

/**
 * `24h`, `7d`, `2w`, `1y`, or a date (`2026-11-01`, local midnight) / ISO time → ms since epoch.
 * Throws a message that says what is accepted.
 */
export function parseSince(text: string, now = Date.now()): number {
  const t = text.trim();
  const m = /^(\d+)\s*([hdwy])$/i.exec(t);
  if (m) {
    const n = Number(m[1]);
    if (n <= 0) throw new Error(`--since must be positive, got "${text}"`);
    return now - n * UNIT_MS[m[2]!.toLowerCase() as keyof typeof UNIT_MS];
  }
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  const ms = date ? new Date(Number(date[1]), Number(date[2]) - 1, Number(date[3])).getTime() : Date.parse(t);
  if (Number.isNaN(ms)) throw new Error(`--since takes a duration like 24h, 7d, 2w, 1y or a date like 2026-11-01, got "${text}"`);
  if (ms > now) throw new Error(`--since ${text} is in the future`);
  return ms;
}
