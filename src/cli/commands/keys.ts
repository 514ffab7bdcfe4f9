// `gateway keys create|set|show|list|revoke`: sk-proxy- keys, and sk-gwadmin- admin keys
// (`create --admin`). A new key is printed once, alone on stdout; afterwards only its id, name and
// metadata exist (the store keeps a SHA-256 hash). Limits are stored with the rest; what a key used
// of them is the running daemon's to count, so `show` and `list` ask it (GET /admin/keys). With
// `gateway --url …` every subcommand goes through that gateway's admin API instead (remote.ts),
// printing the same. A team daemon's state directory (its keys are the shared store's) is acted on
// through that daemon's admin API while it runs, so it holds the change before the command ends;
// otherwise on the shared store directly (key-store.ts), whose notification reaches every daemon.
import type { Command } from 'commander';
import { join } from 'node:path';
import { ADMIN_KEY_HAS_NO_LIMITS, keyStatus, parseExpiry, type KeyRecord, type KeyStatus } from '../../daemon/store/keys.js';
import { ensureStateDir, FILES } from '../../daemon/store/paths.js';
import { readJsonSync } from '../../daemon/store/atomic.js';
import { describeLimits, LimitInputError, type KeyLimits, type LimitsPatch } from '../../daemon/limits/limits.js';
import { isEmptyPatch, limitsPatchOf, patchedLimits } from '../../daemon/limits/limits-input.js';
import { budgetText, describeStanding, type StandingView } from '../../daemon/limits/standing-view.js';
import { CliError, cliStateDir, note, out, printJson, shortDate, table } from '../common.js';
import { keyStandings, reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { localAdminApi, remoteOf, remoteRequest, type Remote } from '../remote.js';
import { teamStoreUrl, withKeyStore } from '../key-store.js';
import type { KeyView } from '../../daemon/dashboard/keys-api.js';

/** The limit flags `create` and `set` share (`set` adds a --no-… for each). */
const LIMIT_FLAGS = [
  ['budget', '<amount>', 'a spend ceiling in USD: 5/day, 20/week, 100/month, or 50 (a total that never resets)'],
  ['rpm', '<n>', 'requests a minute (a sliding minute)'],
  ['tpm', '<n>', 'tokens a minute, input and output (a sliding minute)'],
  ['concurrency', '<n>', 'requests in flight at once'],
  ['tz', '<zone>', "the IANA time zone the budget's day, week and month follow (default UTC)"],
] as const;

/** Team mode: what the limits do while the shared store is unreachable (a switch, so not in LIMIT_FLAGS). */
const FAIL_CLOSED_HELP = 'team mode: while the shared store is unreachable, refuse this key\'s requests (503) instead of serving them on this daemon\'s share of its limits';

type LimitOpts = { [K in (typeof LIMIT_FLAGS)[number][0]]?: string | false } & { failClosed?: boolean };

export function registerKeys(program: Command): void {
  const cmd = program.command('keys').description('create, list and revoke the sk-proxy- keys clients use, and admin keys (here, or on the gateway of --url)');

  const create = cmd.command('create')
    .description(`create a proxy key; prints it once, alone on stdout (KEY=$(${gatewayCmd('keys create')})), details on stderr`)
    .option('--name <name>', 'a name to find and revoke it by (letters, digits, . _ -); default key-<id>')
    .option('--expires <when>', 'expiry: a duration like 30d, 12h, 45m, 2w, or an ISO date; default never')
    .option('--models <list>', 'comma-separated models this key may use (e.g. claude-sonnet-4-5,gpt-4o); default all');
  for (const [flag, arg, help] of LIMIT_FLAGS) create.option(`--${flag} ${arg}`, help);
  create.option('--fail-closed', FAIL_CLOSED_HELP);
  create.option('--admin', 'an admin key (sk-gwadmin-…) instead: for the admin API over the network (gateway --url, GATEWAY_ADMIN_KEY) and the dashboard; never a client\'s key, so no --models or limits')
    .option('--json', 'print {id,name,key,createdAt,expiresAt,models,limits} instead')
    .action((opts: CreateOpts) => createKey(opts, adminApiOf(program)));

  const set = cmd.command('set')
    .description('change a key\'s limits; a running gateway holds the key to them from its next request')
    .argument('<id-or-name>', `the key's id or name (see: ${gatewayCmd('keys list')})`);
  for (const [flag, arg, help] of LIMIT_FLAGS) set.option(`--${flag} ${arg}`, help).option(`--no-${flag}`, `remove the key's ${flag === 'tz' ? 'time zone (back to UTC)' : flag === 'budget' ? 'budget' : `${flag} limit`}`);
  set.option('--fail-closed', FAIL_CLOSED_HELP).option('--no-fail-closed', 'serve the key on this daemon\'s share of its limits while the shared store is unreachable (the default)');
  set.addHelpText('after', `\nExample: ${gatewayCmd('keys set ci --budget 10/week --no-rpm')}`)
    .action((idOrName: string, opts: LimitOpts) => setLimits(idOrName, opts, adminApiOf(program)));

  cmd.command('show')
    .description('show one key: its metadata, its limits and, from the running gateway, what it used and has left of them')
    .argument('<id-or-name>', `the key's id or name (see: ${gatewayCmd('keys list')})`)
    .option('--json', 'machine-readable output')
    .action((idOrName: string, opts: { json?: boolean }) => showKey(idOrName, opts, adminApiOf(program)));

  cmd.command('list')
    .description('list keys: id, name (admin keys marked), created, last used, expiry, models, status, limits (never the key or its hash)')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => listKeys(opts, adminApiOf(program)));

  cmd.command('revoke')
    .description('revoke a key by id or name; it stops working on its next request')
    .argument('<id-or-name>', `the key's id or name (see: ${gatewayCmd('keys list')})`)
    .action((idOrName: string) => revokeKey(idOrName, adminApiOf(program)));
}

/**
 * The admin API a command goes through: the gateway of `--url`, or this state directory's daemon
 * when it runs on a team's shared store; undefined: the command acts on the key store itself.
 */
function adminApiOf(program: Command): Remote | undefined {
  const remote = remoteOf(program);
  if (remote) return remote;
  const dir = cliStateDir();
  return teamStoreUrl(dir) !== undefined ? localAdminApi(dir) : undefined;
}

/** An error of the key store (a name taken, no such key, the store unreachable) as one line. */
function oneLine(e: unknown): never {
  throw e instanceof CliError ? e : new CliError((e as Error).message);
}

interface CreateOpts extends LimitOpts { name?: string; expires?: string; models?: string; admin?: boolean; json?: boolean }

/** A limit value the user wrote that cannot be used, as a usage error naming its flag. */
function flagError(e: unknown): never {
  if (!(e instanceof LimitInputError)) throw e;
  // The message starts with the field's name ("rpm must be…"): it becomes the flag's.
  const flag = e.field === 'failClosed' ? 'fail-closed' : e.field;
  const message = e.message.startsWith(e.field) ? `--${flag}${e.message.slice(e.field.length)}` : `--${flag}: ${e.message}`;
  throw new CliError(message, 2);
}

/** The limits flags given (a --no-… is false), as a patch; throws a CliError naming the flag. */
function limitsPatch(opts: LimitOpts): LimitsPatch {
  try { return limitsPatchOf(opts); } catch (e) { return flagError(e); }
}

function checkedLimits(current: KeyLimits | undefined, patch: LimitsPatch): KeyLimits | undefined {
  try { return patchedLimits(current, patch); } catch (e) { return flagError(e); }
}

function parseModels(text: string | undefined): string[] | null {
  if (text === undefined) return null;
  const models = text.split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new CliError('--models needs at least one model name (comma-separated)');
  const bad = models.find((m) => /\s/.test(m));
  if (bad) throw new CliError(`--models: "${bad}" contains whitespace`);
  return models;
}

async function createKey(opts: CreateOpts, remote: Remote | undefined): Promise<void> {
  let expiresAt: Date | null = null;
  try {
    if (opts.expires !== undefined) expiresAt = parseExpiry(opts.expires);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const models = parseModels(opts.models);
  const limits = checkedLimits(undefined, limitsPatch(opts));
  if (opts.admin && (models || limits)) throw new CliError(`--admin: ${ADMIN_KEY_HAS_NO_LIMITS}`, 2);
  if (remote) {
    const body = { name: opts.name, expires: opts.expires, models, ...limitFields(opts), ...(opts.admin ? { admin: true } : {}) };
    const { key, record } = await remoteRequest<{ key: string; record: KeyView }>(remote, 'POST', 'keys', body);
    printCreated(key, viewFacts(record), opts.json);
    return;
  }
  const dir = ensureStateDir(cliStateDir());
  const created = await withKeyStore(dir, (store) => (opts.admin
    ? store.createAdmin({ name: opts.name, expiresAt })
    : store.create({ name: opts.name, expiresAt, models, ...(limits ? { limits } : {}) }))).catch(oneLine);
  printCreated(created.key, keyFacts(created.record, null, null), opts.json);
  await reloadAndReport(dir);
}

function printCreated(key: string, k: KeyFacts, json: boolean | undefined): void {
  if (json) {
    printJson({ id: k.id, name: k.name, key, createdAt: k.createdAt, expiresAt: k.expiresAt, models: k.models, limits: k.limits, ...(k.admin ? { admin: true } : {}) });
    return;
  }
  out(key);
  note(`Created ${k.admin ? 'admin key' : 'key'} ${k.id} (name "${k.name}")${k.expiresAt ? `, expires ${shortDate(k.expiresAt)}` : ''}${k.models ? `, models: ${k.models.join(', ')}` : ''}${k.limits ? `, limits: ${describeLimits(k.limits)}` : ''}.`);
  note('It is shown only this once; store it now.');
  if (k.admin) note(`It opens the admin API and the dashboard from other machines: GATEWAY_ADMIN_KEY=… ${gatewayCmd('--url https://<gateway> keys list')}`);
}

/** The limit flags given, as the admin API's fields (a --no-… is null). */
function limitFields(opts: LimitOpts): Record<string, string | true | null> {
  const fields: Record<string, string | true | null> = {};
  for (const [flag] of LIMIT_FLAGS) {
    const v = opts[flag];
    if (v !== undefined) fields[flag] = v === false ? null : v;
  }
  if (opts.failClosed !== undefined) fields.failClosed = opts.failClosed || null;
  return fields;
}

async function setLimits(idOrName: string, opts: LimitOpts, remote: Remote | undefined): Promise<void> {
  const patch = limitsPatch(opts);
  if (isEmptyPatch(patch)) {
    throw new CliError(`nothing to change: give one or more of --budget, --rpm, --tpm, --concurrency, --tz, --fail-closed (or --no-budget and the like to remove one); see ${gatewayCmd('keys set --help')}`, 2);
  }
  let rec: KeyFacts;
  if (remote) {
    const before = findView(await remoteViews(remote), idOrName, remote);
    if (before.admin) throw new CliError(ADMIN_KEY_HAS_NO_LIMITS);
    checkedLimits(before.limits ?? undefined, patch);
    rec = viewFacts((await remoteRequest<{ key: KeyView }>(remote, 'PATCH', `keys/${encodeURIComponent(before.id)}`, limitFields(opts))).key);
  } else {
    rec = await withKeyStore(cliStateDir(), async (store) => {
      const before = await store.find(idOrName);
      if (!before) throw noKey(idOrName);
      if (before.admin) throw new CliError(ADMIN_KEY_HAS_NO_LIMITS);
      checkedLimits(before.limits, patch);
      return keyFacts(await store.setLimits(before.id, patch), null, null);
    }).catch(oneLine);
  }
  out(`Key ${rec.id} ("${rec.name}") limits: ${describeLimits(rec.limits ?? undefined)}.`);
  if (rec.status !== 'active') note(`note: this key is ${rec.status}; its limits matter only if it is used again.`);
  if (!remote) await reloadAndReport(cliStateDir());
}

/** Every key the remote gateway holds (GET /admin/keys), with what each used of its limits. */
async function remoteViews(remote: Remote): Promise<KeyView[]> {
  return (await remoteRequest<{ keys: KeyView[] }>(remote, 'GET', 'keys')).keys;
}

/** One key by id or name, as the key store's find picks it (an active one wins when a name was reused). */
function findView(views: KeyView[], idOrName: string, remote: Remote): KeyView {
  const found = views.find((k) => k.id === idOrName)
    ?? views.find((k) => k.name === idOrName && k.status === 'active')
    ?? views.find((k) => k.name === idOrName);
  if (!found) throw remote.local ? noKey(idOrName) : new CliError(`no key with id or name "${idOrName}" on that gateway (see: ${gatewayCmd('--url <url> keys list')})`);
  return found;
}

function noKey(idOrName: string): CliError {
  return new CliError(`no key with id or name "${idOrName}" (see: ${gatewayCmd('keys list')})`);
}

function readUsage(dir: string): Record<string, string> {
  try {
    const raw = readJsonSync<Record<string, unknown>>(join(dir, FILES.keyUsage), {});
    return Object.fromEntries(Object.entries(raw ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

/** Every fact of a key that may be shown: never the key or its hash. */
interface KeyFacts {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  models: string[] | null;
  status: KeyStatus;
  session?: true;
  admin?: true;
  limits: KeyLimits | null;
  standing: StandingView | null;
}

function keyFacts(k: KeyRecord, lastUsedAt: string | null, standing: StandingView | null): KeyFacts {
  return {
    id: k.id,
    name: k.name,
    createdAt: k.createdAt,
    lastUsedAt,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
    models: k.models,
    status: keyStatus(k),
    ...(k.session ? { session: true } : {}),
    ...(k.admin ? { admin: true } : {}),
    limits: k.limits ?? null,
    standing,
  };
}

/** The same facts from the admin API's view of a key (a remote gateway's). */
function viewFacts(v: KeyView): KeyFacts {
  return {
    id: v.id, name: v.name, createdAt: v.createdAt, lastUsedAt: v.lastUsedAt, expiresAt: v.expiresAt, revokedAt: v.revokedAt,
    models: v.models, status: v.status, ...(v.session ? { session: true } : {}), ...(v.admin ? { admin: true } : {}),
    limits: v.limits, standing: v.standing,
  };
}

/**
 * What the running daemon counts of the keys' limits, when any of `keys` has limits (the daemon is
 * not asked otherwise); `unavailable` says why there are no numbers.
 */
async function standingsFor(dir: string, keys: KeyRecord[]): Promise<{ of: (id: string) => StandingView | null; unavailable?: string }> {
  if (!keys.some((k) => k.limits)) return { of: () => null };
  const r = await keyStandings(dir);
  if ('unavailable' in r) return { of: () => null, unavailable: r.unavailable };
  return { of: (id) => r.standings.get(id) ?? null };
}

async function listKeys(opts: { json?: boolean }, remote: Remote | undefined): Promise<void> {
  let rows: KeyFacts[];
  let unavailable: string | undefined;
  if (remote) {
    rows = (await remoteViews(remote)).map(viewFacts);
  } else {
    const dir = cliStateDir();
    const keys = await withKeyStore(dir, (store) => store.list()).catch(oneLine);
    const usage = readUsage(dir);
    const standings = await standingsFor(dir, keys);
    rows = keys.map((k) => keyFacts(k, usage[k.id] ?? null, standings.of(k.id)));
    unavailable = standings.unavailable;
  }
  if (opts.json) {
    printJson(rows);
    return;
  }
  if (rows.length === 0) {
    out(`No proxy keys yet. Create one: ${gatewayCmd('keys create --name my-app')}`);
    return;
  }
  const lines = [['ID', 'NAME', 'CREATED', 'LAST USED', 'EXPIRES', 'MODELS', 'STATUS', 'LIMITS']];
  for (const r of rows) {
    const limits = r.limits ? (r.standing ? describeStanding(r.limits, r.standing) : describeLimits(r.limits)) : 'none';
    lines.push([r.id, r.admin ? `${r.name} (admin)` : r.name, shortDate(r.createdAt), r.lastUsedAt ? shortDate(r.lastUsedAt) : 'never', r.expiresAt ? shortDate(r.expiresAt) : 'never', r.admin ? '-' : r.models ? r.models.join(',') : 'all', r.status, limits]);
  }
  for (const l of table(lines)) out(l);
  if (unavailable) note(`Used amounts of the limits are not shown: ${unavailable}.`);
}

/** The lines of `keys show` about limits: each limit, what is used and left, or why that is not known. */
function limitLines(limits: KeyLimits, standing: StandingView | null, unavailable: string | undefined): string[][] {
  const used = (text: string | undefined) => (text === undefined ? ` (used: ${unavailable ?? 'unknown'})` : `: ${text}`);
  const rows: string[][] = [];
  const s = standing ?? {};
  if (limits.budget) rows.push(['budget', `${describeLimits({ budget: limits.budget, ...(limits.tz ? { tz: limits.tz } : {}) })}${used(s.budget && budgetText(s.budget, limits.tz))}`]);
  if (limits.rpm !== undefined) rows.push(['rpm', `${limits.rpm} requests a minute${used(s.rpm && `${s.rpm.used} in the last minute, ${s.rpm.left} left`)}`]);
  if (limits.tpm !== undefined) rows.push(['tpm', `${limits.tpm} tokens a minute${used(s.tpm && `${s.tpm.used} in the last minute, ${s.tpm.left} left`)}`]);
  if (limits.concurrency !== undefined) rows.push(['concurrency', `${limits.concurrency} requests at once${used(s.concurrency && `${s.concurrency.used} in flight`)}`]);
  if (limits.failClosed) rows.push(['fail-closed', 'refused while the shared store is unreachable']);
  return rows;
}

async function showKey(idOrName: string, opts: { json?: boolean }, remote: Remote | undefined): Promise<void> {
  let facts: KeyFacts;
  let unavailable: string | undefined;
  if (remote) {
    facts = viewFacts(findView(await remoteViews(remote), idOrName, remote));
  } else {
    const dir = cliStateDir();
    const k = await withKeyStore(dir, (store) => store.find(idOrName)).catch(oneLine);
    if (!k) throw noKey(idOrName);
    const standings = await standingsFor(dir, [k]);
    facts = keyFacts(k, readUsage(dir)[k.id] ?? null, standings.of(k.id));
    unavailable = standings.unavailable;
  }
  if (opts.json) {
    printJson(facts);
    return;
  }
  const rows: string[][] = [
    ['id', facts.id],
    ['name', facts.name + (facts.session ? ' (a session key of chat or run)' : facts.admin ? ' (an admin key: the admin API and the dashboard, never a door)' : '')],
    ['status', facts.status + (facts.revokedAt ? ` since ${shortDate(facts.revokedAt)}` : '')],
    ['created', shortDate(facts.createdAt)],
    ['last used', facts.lastUsedAt ? shortDate(facts.lastUsedAt) : 'never'],
    ['expires', facts.expiresAt ? shortDate(facts.expiresAt) : 'never'],
    ...(facts.admin ? [] : [['models', facts.models ? facts.models.join(', ') : 'all']]),
    ...(facts.limits ? limitLines(facts.limits, facts.standing, unavailable) : facts.admin ? [] : [['limits', 'none']]),
  ];
  for (const l of table(rows)) out(l);
}

async function revokeKey(idOrName: string, remote: Remote | undefined): Promise<void> {
  if (remote) {
    const before = findView(await remoteViews(remote), idOrName, remote);
    if (before.revokedAt) {
      out(`Key ${before.id} ("${before.name}") was already revoked at ${shortDate(before.revokedAt)}.`);
      return;
    }
    const { key } = await remoteRequest<{ key: KeyView }>(remote, 'POST', `keys/${encodeURIComponent(before.id)}/revoke`);
    out(`Revoked key ${key.id} ("${key.name}").`);
    // A team daemon of this machine: a client key of `env` it held is forgotten here as on a laptop
    // (the admin API never shows a hash, so the record is read from the store itself).
    if (remote.local) {
      const dir = cliStateDir();
      const rec = await withKeyStore(dir, (store) => store.get(key.id)).catch(() => undefined);
      if (rec) await forgetHeld(dir, rec);
    }
    return;
  }
  const dir = cliStateDir();
  const { before, rec } = await withKeyStore(dir, async (store) => {
    const found = await store.find(idOrName);
    if (!found) throw noKey(idOrName);
    return { before: found, rec: found.revokedAt ? undefined : await store.revoke(found.id) };
  }).catch(oneLine);
  if (!rec) {
    out(`Key ${before.id} ("${before.name}") was already revoked at ${shortDate(before.revokedAt)}.`);
    return;
  }
  out(`Revoked key ${rec.id} ("${rec.name}").`);
  await forgetHeld(dir, rec);
  await reloadAndReport(dir);
}

/** Deletes the plaintext this machine holds of a revoked client key of `env`, if it holds it. */
async function forgetHeld(dir: string, rec: KeyRecord): Promise<void> {
  const { forgetClientKey } = await import('../client-env.js');
  if (await forgetClientKey({ dir, env: process.env, record: rec })) note(`Deleted its stored plaintext (it was a client key).`);
}
