// The usage history as the daemon and the CLI see it: open the store with the config's settings
// and prices, and the one summary shape `gateway usage --json` and `GET /admin/usage/summary` share.
import { dirname, join } from 'node:path';
import { createBodyLog } from '../body-log.js';
import type { DaemonContext } from '../../context.js';
import type { EventBus } from '../events.js';
import { buildPriceTable, readShippedPrices, type PriceTable } from './prices.js';
import { refusalCounts, usageGroups, usageTotals, hourRange, type GroupBy, type Refusals, type UsageGroup, type UsageTotals } from './queries.js';
import { UsageRecorder } from './recorder.js';
import { parseUsageSettings, type UsageSettings } from './settings.js';
import { USAGE_DB_FILE, UsageStore } from './store.js';
import { FILES } from '../../store/paths.js';
import { TeamHistory } from './team-history.js';
import type { SharedStore } from '../../store/shared-store.js';
import type { AnswerGate } from '../../http/answer-gate.js';
import type { Database } from '../../store/sqlite.js';

export interface UsageSummary {
  /** Start of the window: the top of the hour containing the requested `since`. */
  since: string;
  until: string;
  by: GroupBy;
  /**
   * How the token counts below count the cache, the same for every door and provider:
   * `inputTokens` includes the cache reads (`cachedTokens`) and writes (`cacheWriteTokens`).
   */
  inputTokensIncludeCacheReads: true;
  inputTokensIncludeCacheWrites: true;
  rows: UsageGroup[];
  totals: UsageTotals;
  /** Requests a key's own limit refused (its 429), per limit, and those refused for an unpriced model (403). */
  refusals: Refusals;
  prices: { date: string; overrides: number };
}

export function summarize(db: Database, q: { since: number; until: number; by: GroupBy }, prices: PriceTable): UsageSummary {
  const range = { since: q.since, until: q.until };
  return {
    since: new Date(hourRange(q.since, q.until).from).toISOString(),
    until: new Date(q.until).toISOString(),
    by: q.by,
    inputTokensIncludeCacheReads: true,
    inputTokensIncludeCacheWrites: true,
    rows: usageGroups(db, range, q.by),
    totals: usageTotals(db, range),
    refusals: refusalCounts(db, range),
    prices: { date: prices.date, overrides: prices.overrides },
  };
}

export interface UsageConfigResult { settings: UsageSettings; prices: PriceTable; warnings: string[] }

/** Settings and the price table from the raw `usage` section of config.json. */
export function usageConfig(raw: unknown): UsageConfigResult {
  const { settings, warnings } = parseUsageSettings(raw);
  const { table, problems } = buildPriceTable(readShippedPrices(), settings.prices);
  return { settings, prices: table, warnings: [...warnings, ...problems] };
}

export function usageDbPath(dir: string): string {
  return join(dir, USAGE_DB_FILE);
}

export interface UsageHistory { store: UsageStore; prices: PriceTable; settings: UsageSettings }

/**
 * Opens the history before the daemon listens (the only slow part), so that `record` can
 * subscribe in the same turn the daemon starts and no request goes unrecorded.
 */
export async function openUsageHistory(opts: { dir: string; config: unknown; log: (line: string) => void }): Promise<UsageHistory> {
  const { settings, prices, warnings } = usageConfig(opts.config);
  for (const w of warnings) opts.log(`usage: ${w}`);
  const store = await UsageStore.open(usageDbPath(opts.dir), { log: opts.log });
  return { store, prices, settings };
}

/**
 * Records every request in the history. `who.daemon` names this daemon in each row. With
 * `who.shared` (team mode) the rows are journaled as they finish, written with their outbox
 * entries, and the returned `team` sends them to the shared store and reads the other daemons';
 * `who.answers` (the server's) holds each turn's answers until the journal has their rows.
 */
export function recordUsage(
  h: UsageHistory, bus: EventBus, log: (line: string) => void, who: { daemon?: string; shared?: SharedStore; answers?: AnswerGate } = {},
): UsageRecorder {
  let team: TeamHistory | undefined;
  const recorder = new UsageRecorder({
    store: h.store, bus, prices: h.prices, log,
    retentionDays: h.settings.retentionDays, rollupRetentionDays: h.settings.rollupRetentionDays,
    ...(who.daemon ? { daemon: who.daemon } : {}),
    ...(who.shared ? { team: { journalDir: join(dirname(h.store.path), FILES.journal), formerJournalDir: dirname(h.store.path), onWritten: () => { team?.soon(); }, ...(who.answers ? { answers: who.answers } : {}) } } : {}),
  }).start();
  if (who.shared) {
    team = new TeamHistory({ store: h.store, shared: who.shared, ...(who.daemon ? { daemon: who.daemon } : {}), log, retentionDays: () => recorder.retention.retentionDays }).start();
    recorder.team = team;
  }
  return recorder;
}

/**
 * With `usage.logBodies` on, gives the request path a body log that stores through the recorder's
 * batches, and says so loudly; off, the context gets nothing and requests pay nothing.
 */
export function storeBodies(h: UsageHistory, recorder: UsageRecorder, ctx: DaemonContext, log: (line: string) => void): void {
  if (!h.settings.logBodies) return;
  ctx.bodyLog = createBodyLog({
    capBytes: h.settings.bodyCapBytes, secrets: () => ctx.providerKeys.values(), store: (row) => recorder.recordBody(row), log,
  });
  log(`usage: WARNING: logBodies is on: request and response bodies (up to ${h.settings.bodyCapBytes} bytes each, credentials redacted) `
    + `are being stored in ${h.store.path} (table "bodies", kept ${h.settings.retentionDays} days); turn usage.logBodies off in config.json when you are done debugging`);
}

export { UsageRecorder, UsageStore };
export type { GroupBy, Refusals, UsageGroup, UsageTotals, PriceTable, UsageSettings };
