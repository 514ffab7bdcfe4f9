// `gateway models alias|unalias|aliases|fallback|fallbacks`: short names for `provider/model` (or
// a list of targets tried in order) and the fallbacks of any model, in config.json.
import type { Command } from 'commander';
import { CliError, cliStateDir, out, printJson, table } from '../common.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

export function registerModels(program: Command): void {
  const cmd = program.command('models').description('manage model aliases (name → provider/model) and fallbacks');

  cmd.command('alias')
    .description(`create or replace an alias, e.g. ${gatewayCmd('models alias fast anthropic/claude-haiku-4-5')}; several targets are tried in order`)
    .argument('<name>', 'the alias (letters, digits, . _ : -; no /)')
    .argument('<target...>', 'provider/model, provider one of anthropic, openai, gemini, google (or one you added); more than one makes a route tried in order')
    .action((name: string, targets: string[]) => addAlias(name, targets));

  cmd.command('unalias')
    .description('remove an alias')
    .argument('<name>', 'the alias to remove')
    .action((name: string) => dropAlias(name));

  cmd.command('aliases')
    .description('list the aliases')
    .option('--json', 'print the alias → target (or list of targets) object')
    .action((opts: { json?: boolean }) => listAliases(opts));

  cmd.command('fallback')
    .description(`set the targets tried, in order, after a model fails retryably, e.g. ${gatewayCmd('models fallback claude-sonnet-4-5 openai/gpt-5.4')}`)
    .argument('<model>', 'any name a client sends: a bare claude-sonnet-4-5, a provider/model, an alias')
    .argument('[target...]', 'provider/model targets, tried in order after the model itself')
    .option('--remove', 'remove the fallbacks of the model')
    .action((model: string, targets: string[], opts: { remove?: boolean }) => fallback(model, targets, opts));

  cmd.command('fallbacks')
    .description('list the models that have fallbacks')
    .option('--json', 'print the model → targets object')
    .action((opts: { json?: boolean }) => listFallbacks(opts));
}

/** Runs a config.json edit; what it refuses becomes the CLI's one-line error. */
async function edit<T>(write: (dir: string) => Promise<T>): Promise<T> {
  try {
    return await write(cliStateDir());
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

async function addAlias(name: string, targets: string[]): Promise<void> {
  const { setAlias } = await import('../../daemon/store/config.js');
  await edit((dir) => setAlias(dir, name, targets));
  out(`${name} → ${targets.join(' → ')}`);
  await reloadAndReport(cliStateDir());
}

async function dropAlias(name: string): Promise<void> {
  const { removeAlias } = await import('../../daemon/store/config.js');
  const dir = cliStateDir();
  if (!(await removeAlias(dir, name))) throw new CliError(`no alias named "${name}" (see: ${gatewayCmd('models aliases')})`);
  out(`Removed alias ${name}.`);
  await reloadAndReport(dir);
}

async function listAliases(opts: { json?: boolean }): Promise<void> {
  const { readConfig } = await import('../../daemon/store/config.js');
  const { aliasTargets } = readConfig(cliStateDir());
  if (opts.json) return printJson(aliasTargets);
  const names = Object.keys(aliasTargets).sort();
  if (names.length === 0) return out(`No aliases. Add one: ${gatewayCmd('models alias fast anthropic/claude-haiku-4-5')}`);
  const shown = (t: string | string[]) => (Array.isArray(t) ? t.join(' → ') : t);
  for (const l of table([['ALIAS', 'TARGET'], ...names.map((n) => [n, shown(aliasTargets[n]!)])])) out(l);
}

async function fallback(model: string, targets: string[], opts: { remove?: boolean }): Promise<void> {
  const { setFallbacks, removeFallbacks } = await import('../../daemon/store/config.js');
  const dir = cliStateDir();
  if (opts.remove) {
    if (targets.length > 0) throw new CliError('--remove takes no targets: it removes all of the model\'s fallbacks');
    if (!(await removeFallbacks(dir, model))) throw new CliError(`${model} has no fallbacks (see: ${gatewayCmd('models fallbacks')})`);
    out(`Removed the fallbacks of ${model}.`);
  } else {
    if (targets.length === 0) throw new CliError(`give ${model} at least one target (provider/model), or --remove`);
    await edit((d) => setFallbacks(d, model, targets));
    out(`${model} → ${targets.join(' → ')}`);
  }
  await reloadAndReport(dir);
}

async function listFallbacks(opts: { json?: boolean }): Promise<void> {
  const { readConfig } = await import('../../daemon/store/config.js');
  const { fallbacks } = readConfig(cliStateDir());
  if (opts.json) return printJson(fallbacks);
  const names = Object.keys(fallbacks).sort();
  if (names.length === 0) return out(`No fallbacks. Add one: ${gatewayCmd('models fallback claude-sonnet-4-5 openai/gpt-5.4')}`);
  for (const l of table([['MODEL', 'THEN TRIES'], ...names.map((n) => [n, fallbacks[n]!.join(' → ')])])) out(l);
}
