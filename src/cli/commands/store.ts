// `gateway store migrate --to postgres://…`: moving from a laptop to team mode. With this machine's
// daemon stopped, it connects to the store the way a daemon does (one-line errors, never the
// password; the schema created or migrated), copies the state directory's keys, limit ledger, usage
// history and stored Responses answers into it once (store-migrate.ts: running it again copies
// nothing twice), and says how to start in team mode. The state directory is left as it was.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { PG_SCHEMA_VERSION } from '../../daemon/store/pg-schema.js';
import type { SharedStore } from '../../daemon/store/shared-store.js';
import { parseStoreUrl, redact, STORE_ENV, type StoreUrl } from '../../daemon/store/store-url.js';
import { CliError, cliStateDir, note, out, printJson, table } from '../common.js';
import { readDaemonRecord } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import type { Copied, MigrationResult } from '../store-migrate.js';

interface MigrateOpts { to?: string; json?: boolean }

export function registerStore(program: Command): void {
  const cmd = program.command('store').description('team mode\'s shared PostgreSQL store');
  cmd.command('migrate')
    .description('copy this machine\'s keys, limits, usage and stored responses into a team\'s PostgreSQL store, once (with the daemon stopped)')
    .option('--to <url>', `the store, postgres://user:password@host:5432/database (default: $${STORE_ENV}, which keeps the password out of the process list and shell history)`)
    .option('--json', 'print what was copied as JSON')
    .addHelpText('after', `
Run it with this machine's daemon stopped (${gatewayCmd('stop')}). The store's schema is created or
migrated as a daemon would. Copied: every key (proxy, admin and session keys, as their hashes, with
their models, limits, expiry and revocation), the usage history's request rows (a row recorded
before daemons were named gets $GATEWAY_DAEMON_ID, else the name this machine's daemon last
recorded) and the hourly and daily totals of the history older than them (kept only as totals
past usage.retentionDays), what each key's budget has spent, and the stored Responses answers within the retention.
Each is keyed by its id, so running it again copies nothing twice. Not copied: provider keys (each
daemon takes its own from its keychain, environment or secret file) and config.json, which stays
this machine's file. Nothing in the state directory is changed.

Example: ${STORE_ENV}='postgres://gw:secret@db.example:5432/gateway' ${gatewayCmd('store migrate')}`)
    .action((opts: MigrateOpts) => migrateCommand(opts));
}

async function migrateCommand(opts: MigrateOpts): Promise<void> {
  const given = opts.to ?? process.env[STORE_ENV];
  if (given === undefined || given.trim() === '') {
    throw new CliError(`give the store to copy into: --to postgres://user:password@host:5432/database, or set ${STORE_ENV} (which keeps the password out of the process list)`, 2);
  }
  let store: StoreUrl;
  try { store = parseStoreUrl(given); } catch (e) { throw new CliError((e as Error).message, 2); }
  const dir = cliStateDir();
  if (!existsSync(dir)) throw new CliError(`there is no gateway state to copy at ${dir} (set GATEWAY_HOME to the state directory)`);
  const daemon = readDaemonRecord(dir);
  if (daemon?.alive) {
    throw new CliError(`the gateway is running (pid ${daemon.pid}, ${daemon.url}); stop it first (${gatewayCmd('stop')}): the copy is made of a stopped daemon's state, so that nothing changes under it`);
  }

  // Loaded here, not with the command list: --help stays instant.
  const [{ isConnectionError, SharedStore }, { copyLaptopState }] = await Promise.all([import('../../daemon/store/shared-store.js'), import('../store-migrate.js')]);
  let shared: SharedStore;
  try {
    shared = await SharedStore.open({ store, daemonId: `migrate@${hostname()}`, log: () => {}, poolSize: 2 });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  let result: MigrationResult;
  try {
    result = await copyLaptopState(dir, shared, process.env);
  } catch (e) {
    // Whatever was committed stays; running it again copies the rest.
    const why = isConnectionError(e) ? shared.describeError(e) : redact(`could not finish copying into the store at ${shared.display}: ${(e as Error).message}`, store);
    throw new CliError(`${why}; what was copied stays, and running this again copies the rest`);
  } finally {
    await shared.close();
  }

  if (opts.json) {
    printJson({ store: store.display, schemaVersion: PG_SCHEMA_VERSION, ...result });
  } else {
    report(dir, store, result, opts.to === undefined);
  }
  for (const k of result.keys.refused) note(`error: key ${k.id} ("${k.name}") was not copied: ${k.reason}`);
  if (result.keys.refused.length > 0) process.exitCode = 1;
}

const counted = (c: Copied): string => `copied ${c.copied}, already there ${c.already}`;

function report(dir: string, store: StoreUrl, r: MigrationResult, fromEnv: boolean): void {
  out(`Copied ${dir} into the store ${store.display} (schema version ${PG_SCHEMA_VERSION}):`);
  const lines = table([
    ['keys', counted(r.keys) + (r.keys.refused.length > 0 ? `, ${r.keys.refused.length} not copied (below)` : '')],
    ['usage rows', counted(r.usage) + (r.usage.unnamed > 0 ? ` (${r.usage.unnamed} recorded before daemons were named, as ${r.usage.daemon}'s)` : '')],
    ['older usage', `${counted(r.usage.rollups)} (rollup rows of the history older than the usage rows)`],
    ['limit ledger', `${counted(r.limits)} (what the keys' budgets have spent)`],
    ['responses', counted(r.responses) + (r.responses.expired > 0 ? `, ${r.responses.expired} past the retention left out` : '')],
  ]);
  for (const l of lines) out(`  ${l}`);
  out('');
  out(`Nothing in ${dir} was changed: keys.json, usage.db and responses.db were read from copies.`);
  out('Not copied: provider keys (each daemon takes its own from its keychain, environment or secret file), and');
  out('config.json (routing, aliases, added providers), which stays this machine\'s file: a team daemon started');
  out('from this directory seeds the store\'s shared settings from it.');
  out('');
  out('To run in team mode, start the daemon on the store:');
  const shown = `postgres://${store.display}`;
  if (fromEnv) out(`  ${gatewayCmd('start')}                      (with ${STORE_ENV} set as for this command)`);
  out(`  ${STORE_ENV}='${shown}' ${gatewayCmd('start')}${store.password ? '   (the URL with its password)' : ''}`);
  out(`  or: ${gatewayCmd(`start --store ${shown}`)}, or "store": {"url": "${shown}"} in config.json`);
}
