// `gateway doctor`: one line per check, ✓, ! (a warning) or ✗ with the fix; exit 1 when any check fails.
import type { Command } from 'commander';
import { cliStateDir, out, printJson } from '../common.js';
import { runChecks, type Check } from '../doctor-checks.js';

export function registerDoctor(program: Command): void {
  program.command('doctor')
    .description('check Node, the state directory, the keychain, provider keys, the daemon and its port, and proxy variables')
    .option('--json', 'print the checks as a JSON array of {id, ok, warning?, title, detail, fix}')
    .action((opts: { json?: boolean }) => doctor(opts));
}

async function doctor(opts: { json?: boolean }): Promise<void> {
  const checks: Check[] = await runChecks(cliStateDir(), process.env);
  if (opts.json) printJson(checks);
  else for (const c of checks) out(`${c.ok ? (c.warning ? '!' : '✓') : '✗'} ${c.title}: ${c.detail}${c.fix ? ` — ${c.ok ? '' : 'fix: '}${c.fix}` : ''}`);
  if (checks.some((c) => !c.ok)) process.exitCode = 1;
}
