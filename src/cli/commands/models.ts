// `gateway models alias|unalias|aliases`: short names for `provider/model` in config.json, used
// by the unified endpoint's `model` field.
import type { Command } from 'commander';
import { CliError, cliStateDir, out, printJson, table } from '../common.js';
import { reloadAndReport } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

export function registerModels(program: Command): void {
  const cmd = program.command('models').description('manage model aliases (name → provider/model) for the unified endpoint');

  cmd.command('alias')
    .description(`create or replace an alias, e.g. ${gatewayCmd('models alias fast anthropic/claude-haiku-4-5')}`)
    .argument('<name>', 'the alias (letters, digits, . _ : -; no /)')
    .argument('<target>', 'provider/model, provider one of anthropic, openai, gemini, google')
    .action((name: string, target: string) => addAlias(name, target));

  cmd.command('unalias')
    .description('remove an alias')
    .argument('<name>', 'the alias to remove')
    .action((name: string) => dropAlias(name));

  cmd.command('aliases')
    .description('list the aliases')
    .option('--json', 'print the alias → target object')
    .action((opts: { json?: boolean }) => listAliases(opts));
}

async function addAlias(name: string, target: string): Promise<void> {
  const { setAlias } = await import('../../daemon/store/config.js');
  const dir = cliStateDir();
  try {
    await setAlias(dir, name, target);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  out(`${name} → ${target}`);
  await reloadAndReport(dir);
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
  const { aliases } = readConfig(cliStateDir());
  if (opts.json) return printJson(aliases);
  const names = Object.keys(aliases).sort();
  if (names.length === 0) return out(`No aliases. Add one: ${gatewayCmd('models alias fast anthropic/claude-haiku-4-5')}`);
  for (const l of table([['ALIAS', 'TARGET'], ...names.map((n) => [n, aliases[n]!])])) out(l);
}
