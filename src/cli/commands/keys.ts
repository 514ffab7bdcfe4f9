// `gateway keys create|list|revoke`: local sk-proxy- keys. A new key is printed once, alone on
// stdout; afterwards only its id, name and metadata exist (the store keeps a SHA-256 hash).
import type { Command } from 'commander';
import { join } from 'node:path';
import { KeyStore, keyStatus, parseExpiry, type KeyRecord } from '../../daemon/store/keys.js';
import { ensureStateDir, FILES } from '../../daemon/store/paths.js';
import { readJsonSync } from '../../daemon/store/atomic.js';
import { CliError, cliStateDir, note, out, printJson, shortDate, table } from '../common.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

export function registerKeys(program: Command): void {
  const cmd = program.command('keys').description('create, list and revoke the local sk-proxy- keys clients use');

  cmd.command('create')
    .description(`create a proxy key; prints it once, alone on stdout (KEY=$(${gatewayCmd('keys create')})), details on stderr`)
    .option('--name <name>', 'a name to find and revoke it by (letters, digits, . _ -); default key-<id>')
    .option('--expires <when>', 'expiry: a duration like 30d, 12h, 45m, 2w, or an ISO date; default never')
    .option('--models <list>', 'comma-separated models this key may use (e.g. claude-sonnet-4-5,gpt-4o); default all')
    .option('--json', 'print {id,name,key,createdAt,expiresAt,models} instead')
    .action((opts: CreateOpts) => createKey(opts));

  cmd.command('list')
    .description('list proxy keys: id, name, created, last used, expiry, models, status (never the key or its hash)')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => listKeys(opts));

  cmd.command('revoke')
    .description('revoke a key by id or name; it stops working on its next request')
    .argument('<id-or-name>', `the key's id or name (see: ${gatewayCmd('keys list')})`)
    .action((idOrName: string) => revokeKey(idOrName));
}

interface CreateOpts { name?: string; expires?: string; models?: string; json?: boolean }

function parseModels(text: string | undefined): string[] | null {
  if (text === undefined) return null;
  const models = text.split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length === 0) throw new CliError('--models needs at least one model name (comma-separated)');
  const bad = models.find((m) => /\s/.test(m));
  if (bad) throw new CliError(`--models: "${bad}" contains whitespace`);
  return models;
}

async function createKey(opts: CreateOpts): Promise<void> {
  let expiresAt: Date | null = null;
  try {
    if (opts.expires !== undefined) expiresAt = parseExpiry(opts.expires);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const models = parseModels(opts.models);
  const dir = ensureStateDir(cliStateDir());
  let created: { key: string; record: KeyRecord };
  try {
    created = new KeyStore(dir).create({ name: opts.name, expiresAt, models });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const { key, record } = created;
  if (opts.json) {
    printJson({ id: record.id, name: record.name, key, createdAt: record.createdAt, expiresAt: record.expiresAt, models: record.models });
  } else {
    out(key);
    note(`Created key ${record.id} (name "${record.name}")${record.expiresAt ? `, expires ${shortDate(record.expiresAt)}` : ''}${record.models ? `, models: ${record.models.join(', ')}` : ''}.`);
    note('It is shown only this once; store it now.');
  }
  await reloadAndReport(dir);
}

function readUsage(dir: string): Record<string, string> {
  try {
    const raw = readJsonSync<Record<string, unknown>>(join(dir, FILES.keyUsage), {});
    return Object.fromEntries(Object.entries(raw ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

async function listKeys(opts: { json?: boolean }): Promise<void> {
  const dir = cliStateDir();
  const keys = new KeyStore(dir).list();
  const usage = readUsage(dir);
  const rows = keys.map((k) => ({
    id: k.id,
    name: k.name,
    createdAt: k.createdAt,
    lastUsedAt: usage[k.id] ?? null,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
    models: k.models,
    status: keyStatus(k),
  }));
  if (opts.json) {
    printJson(rows);
    return;
  }
  if (rows.length === 0) {
    out(`No proxy keys yet. Create one: ${gatewayCmd('keys create --name my-app')}`);
    return;
  }
  const lines = [['ID', 'NAME', 'CREATED', 'LAST USED', 'EXPIRES', 'MODELS', 'STATUS']];
  for (const r of rows) {
    lines.push([r.id, r.name, shortDate(r.createdAt), r.lastUsedAt ? shortDate(r.lastUsedAt) : 'never', r.expiresAt ? shortDate(r.expiresAt) : 'never', r.models ? r.models.join(',') : 'all', r.status]);
  }
  for (const l of table(lines)) out(l);
}

async function revokeKey(idOrName: string): Promise<void> {
  const dir = cliStateDir();
  const store = new KeyStore(dir);
  const before = store.find(idOrName);
  if (!before) throw new CliError(`no key with id or name "${idOrName}" (see: ${gatewayCmd('keys list')})`);
  if (before.revokedAt) {
    out(`Key ${before.id} ("${before.name}") was already revoked at ${shortDate(before.revokedAt)}.`);
    return;
  }
  const rec = store.revoke(before.id);
  out(`Revoked key ${rec.id} ("${rec.name}").`);
  const { forgetClientKey } = await import('../client-env.js');
  if (await forgetClientKey({ dir, env: process.env, record: rec })) note(`Deleted its stored plaintext (it was a client key).`);
  await reloadAndReport(dir);
}
