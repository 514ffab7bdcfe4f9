// `gateway usage`: requests, tokens, cost and what the prompt cache did (reads, writes, hit ratio,
// savings) from the usage history, grouped by model, key, provider, provider key, day, session or
// daemon; `--requests` lists the requests themselves. With the daemon running it asks GET
// /admin/usage/summary or /admin/usage/requests (so rows still queued in the recorder count);
// otherwise it reads usage.db itself. Both paths run the same query. In team mode usage.db holds
// the whole team's history (observe/usage/team-history.ts), so either path shows every daemon's rows.
import { Option, type Command } from 'commander';
import { existsSync } from 'node:fs';
import { CliError, cliStateDir, note, out, printJson } from '../common.js';
import { adminRequest, findDaemon } from '../daemon-client.js';
import { percent } from '../ui/common/format.js';
import type { UsageSummary } from '../../daemon/observe/usage/index.js';
import type { GroupBy, StoredRequest, UsageTotals } from '../../daemon/observe/usage/queries.js';
import { parseSince } from '../../daemon/observe/usage/settings.js';
import { remoteOf, remoteRequest, type Remote } from '../remote.js';

type By = GroupBy;
/** The groupings GET /admin/usage/summary takes (listed here so the CLI does not load the query module to parse its options). */
const BY_CHOICES = ['model', 'key', 'provider', 'provider-key', 'day', 'session', 'daemon'] as const satisfies readonly GroupBy[];
interface UsageOpts { since: string; by: By; json?: boolean; requests?: boolean; limit: string }
/** Rows per page of GET /admin/usage/requests (its most). */
const PAGE = 500;

export function registerUsage(program: Command): void {
  program.command('usage')
    .description('show requests, tokens, cost and prompt-cache use from the usage history')
    .option('--since <when>', 'the period: 24h, 7d, 2w, 30d, 1y, or a date like 2026-11-01', '7d')
    .addOption(new Option('--by <group>', 'one row per (key: the proxy key a client used; provider-key: the provider key that served, by its pool label; session: the session the client named; daemon: the daemon that served)').choices(BY_CHOICES).default('model'))
    .option('--requests', 'list the requests themselves, newest first, instead of a summary')
    .option('--limit <n>', 'with --requests: at most this many', '50')
    .option('--json', 'print the summary as JSON (the same document as GET /admin/usage/summary); with --requests, the requests as GET /admin/usage/requests gives them')
    .addHelpText('after', [
      '',
      'Totals cover whole hours (the window starts at the top of the hour). Costs use the price table in',
      'data/prices.json plus usage.prices in config.json; models without a price count as unpriced, never guessed.',
      'INPUT counts every prompt token, the cache reads (CACHE READ) and writes (CACHE WRITE) included, for',
      'every door and provider alike; HIT is cache reads / input; SAVED is what the cache saved: its tokens at',
      'the input price, less what they cost (negative when writes cost more than reads saved).',
      '--by session reads the individual requests, kept usage.retentionDays (30 by default); a session is the',
      'one the client names (Claude Code, Codex, x-gateway-session), kept as its UUID or a short hash.',
      '--by daemon: the daemon that served, by its GATEWAY_DAEMON_ID (else <hostname>:<port>). With --store',
      '(team mode) every daemon shows the whole team\'s history: rows reach the others within a few seconds.',
    ].join('\n'))
    .action((opts: UsageOpts) => usage(opts, remoteOf(program)));
}

async function fromDaemon(dir: string, opts: UsageOpts): Promise<UsageSummary | undefined> {
  if (!findDaemon(dir)) return undefined;
  try {
    return await adminRequest<UsageSummary>(dir, 'GET', summaryPath(opts), 10_000);
  } catch (e) {
    note(`note: the running gateway did not answer (${(e as Error).message}); reading the history file directly`);
    return undefined;
  }
}

async function fromFile(dir: string, opts: UsageOpts, since: number): Promise<UsageSummary> {
  const { summarize, usageConfig, usageDbPath, UsageStore } = await import('../../daemon/observe/usage/index.js');
  const { readConfig } = await import('../../daemon/store/config.js');
  const { prices } = usageConfig(readConfig(dir).usage);
  const path = usageDbPath(dir);
  // No history yet: answer from an empty in-memory database rather than create the file.
  const store = await UsageStore.open(existsSync(path) ? path : ':memory:');
  try {
    return summarize(store.db, { since, until: Date.now(), by: opts.by }, prices);
  } finally {
    store.close();
  }
}

const summaryPath = (opts: UsageOpts): string => `usage/summary?since=${encodeURIComponent(opts.since)}&by=${opts.by}`;

async function usage(opts: UsageOpts, remote: Remote | undefined): Promise<void> {
  let since: number;
  try { since = parseSince(opts.since); } catch (e) { throw new CliError((e as Error).message, 2); }
  const dir = cliStateDir();
  if (opts.requests) { await listRequests(dir, opts, since, remote); return; }
  const summary = remote
    ? await remoteRequest<UsageSummary>(remote, 'GET', summaryPath(opts), undefined, 30_000)
    : (await fromDaemon(dir, opts)) ?? (await fromFile(dir, opts, since));
  if (opts.json) { printJson(summary); return; }
  printTable(summary, opts.since);
}

interface RequestsPage { rows: StoredRequest[]; next: string | null }

/** `--requests`: up to `--limit` requests, newest first, page by page from the daemon (or usage.db). */
async function listRequests(dir: string, opts: UsageOpts, since: number, remote: Remote | undefined): Promise<void> {
  if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1) throw new CliError('--limit must be a whole number of requests (1 or more)', 2);
  const limit = Number(opts.limit);
  const page = async (before: string | null, n: number): Promise<RequestsPage> => {
    const path = `usage/requests?since=${encodeURIComponent(opts.since)}&limit=${n}${before ? `&before=${encodeURIComponent(before)}` : ''}`;
    if (remote) return remoteRequest<RequestsPage>(remote, 'GET', path, undefined, 30_000);
    if (findDaemon(dir)) {
      try { return await adminRequest<RequestsPage>(dir, 'GET', path, 10_000); } catch (e) {
        note(`note: the running gateway did not answer (${(e as Error).message}); reading the history file directly`);
      }
    }
    return requestsFromFile(dir, since, before, n);
  };
  const rows: StoredRequest[] = [];
  let next: string | null = null;
  do {
    const p = await page(next, Math.min(PAGE, limit - rows.length));
    rows.push(...p.rows);
    next = p.next;
  } while (next !== null && rows.length < limit);
  if (opts.json) { printJson({ rows, next }); return; }
  printRequests(rows, next !== null);
}

async function requestsFromFile(dir: string, since: number, before: string | null, limit: number): Promise<RequestsPage> {
  const { usageDbPath, UsageStore } = await import('../../daemon/observe/usage/index.js');
  const { recentRequests } = await import('../../daemon/observe/usage/queries.js');
  const path = usageDbPath(dir);
  if (!existsSync(path)) return { rows: [], next: null };
  const store = await UsageStore.open(path);
  try {
    return recentRequests(store.db, { since, limit, ...(before ? { before } : {}) });
  } finally {
    store.close();
  }
}

/** `YYYY-MM-DD HH:MM:SS` in this machine's time zone, as the summary's window is shown. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

function printRequests(rows: readonly StoredRequest[], more: boolean): void {
  if (rows.length === 0) { out('No requests in this period.'); return; }
  const head = ['TIME', 'DAEMON', 'KEY', 'MODEL', 'STATUS', 'INPUT', 'OUTPUT', 'COST', 'REQUEST'];
  const table = [head, ...rows.map((r) => [
    localTime(r.startedAt), r.daemon || '-', r.keyName, `${r.provider}/${r.model ?? '(unknown)'}`,
    String(r.status), r.inputTokens === null ? '-' : int(r.inputTokens), r.outputTokens === null ? '-' : int(r.outputTokens),
    formatCost(r.cost, r.cost === null ? 1 : 0, 1), r.requestId,
  ])];
  const widths = head.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) out(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  if (more) { out(''); out('More requests are in this period: raise --limit or narrow --since.'); }
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');

export function formatCost(cost: number | null, unpriced: number, requests: number): string {
  if (requests === 0) return '-';
  if (cost === null) return 'unknown';
  const text = cost >= 1 ? cost.toFixed(2) : cost >= 0.01 ? cost.toFixed(4) : cost.toFixed(6);
  return `$${text}${unpriced > 0 ? '*' : ''}`;
}

/** A signed amount: what the cache saved can be negative (writes that were never read). */
function formatSaved(saved: number | null, unpriced: number, requests: number): string {
  if (saved === null || requests === 0 || saved >= 0) return formatCost(saved, unpriced, requests);
  return `-${formatCost(-saved, unpriced, requests)}`;
}

function cells(label: string, t: UsageTotals): string[] {
  return [
    label, int(t.requests), int(t.errors), int(t.inputTokens), int(t.cachedTokens), int(t.cacheWriteTokens), percent(t.cacheHitRatio),
    int(t.outputTokens), int(t.reasoningTokens), formatCost(t.cost, t.unpricedRequests, t.requests), formatSaved(t.cacheSaved, t.unpricedRequests, t.requests),
  ];
}

function printTable(s: UsageSummary, sinceText: string): void {
  const start = new Date(s.since);
  const when = `${start.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })} ${String(start.getHours()).padStart(2, '0')}:00`;
  out(`Usage since ${when} (${sinceText}), by ${s.by} · prices of ${s.prices.date}${s.prices.overrides ? ` + ${s.prices.overrides} from config` : ''}`);
  out('');
  if (s.totals.requests === 0) {
    out('No requests in this period.');
    return;
  }
  const head = [s.by.toUpperCase(), 'REQUESTS', 'ERRORS', 'INPUT', 'CACHE READ', 'CACHE WRITE', 'HIT', 'OUTPUT', 'REASONING', 'COST', 'SAVED'];
  // By key: the key's name and id; the summed session keys of chat and run have no id.
  const rows = s.rows.map((r) => cells(s.by === 'key' && r.group !== r.label ? `${r.label} (${r.group})` : r.label, r));
  const total = cells('TOTAL', s.totals);
  const all = [head, ...rows, total];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  out(line(head));
  for (const r of rows) out(line(r));
  out(line(total));
  out('');
  out('INPUT includes CACHE READ and CACHE WRITE; HIT = cache reads / input; SAVED = cached tokens at the input price, less what they cost.');
  if (s.totals.unpricedRequests > 0) {
    out('');
    out(`* ${int(s.totals.unpricedRequests)} of ${int(s.totals.requests)} requests could not be priced (model not in the price table, or no token counts);`);
    out('  add prices under "usage": { "prices": { "<provider>/<model>": { "input": …, "output": …, "cachedInput": …, "cacheWrite": …, "cacheWrite1h": … } } } in config.json.');
  }
  const refused = refusalsText(s);
  if (refused) { out(''); out(refused); }
}

/** `Refused by a key's limit: budget 3, rpm 12, tpm 0, concurrency 1; for an unpriced model: 2`, or nothing when none was. */
function refusalsText(s: UsageSummary): string | undefined {
  const r = s.refusals;
  if (!r) return undefined; // a daemon from before limits
  const limits = r.budget + r.rpm + r.tpm + r.concurrency;
  if (limits === 0 && r.unpricedModel === 0) return undefined;
  const parts: string[] = [];
  if (limits > 0) parts.push(`Refused by a key's limit: budget ${int(r.budget)}, rpm ${int(r.rpm)}, tpm ${int(r.tpm)}, concurrency ${int(r.concurrency)}`);
  if (r.unpricedModel > 0) parts.push(`${limits > 0 ? 'r' : 'R'}efused for a model without a price (a key with a budget): ${int(r.unpricedModel)}`);
  return `${parts.join('; ')}.`;
}
