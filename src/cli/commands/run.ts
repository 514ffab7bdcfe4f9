// `gateway run -- <command…>`: runs a command with the `gateway env` variables set to the running
// gateway and a short-lived key of its own (ended when the command exits), and exits with the
// command's exit code (128+n when a signal ended it).
import { Option, type Command } from 'commander';
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { CliError, cliStateDir, note } from '../common.js';
import { clientEnvVars, conflictingVars } from '../client-env.js';
import { clientUrl, findDaemon, notRunningMessage } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { openSessionKey } from '../session-key.js';
import { basename } from 'node:path';
import { findTool, toolCommand, TOOLS } from '../tools.js';
import { overlayToolHome, type ToolHome } from '../tool-home.js';
import { settingsObject } from '../tool-settings.js';

export const SESSION_KEY_HELP = `
The key is a short-lived one the running gateway gives this command: nothing is stored, so no
keychain is needed. It is renewed while the command runs, ended when it exits, and expires by
itself within 10 minutes if this process is killed. It shows in keys list as run.<id>.`;

export function registerRun(program: Command): void {
  program.command('run')
    .description(`run a command with the SDK variables of \`${gatewayCmd('env')}\` set (and a short-lived key); exits with its exit code`)
    .argument('<command...>', 'the command and its arguments (put -- before it)')
    // Earlier versions kept a stored client key; both options are accepted, and say they are unused.
    .addOption(new Option('--key <name>').hideHelp())
    .addOption(new Option('--insecure-storage').hideHelp())
    .option('-m, --model <name>', `the model a coding tool uses (${TOOLS.map((t) => t.name).join(', ')}): any model the gateway routes, e.g. openai/gpt-5.4`)
    .passThroughOptions()
    .addHelpText('after', `\nNeeds a running gateway (${gatewayCmd('start')}). A coding tool it knows (${TOOLS.map((t) => t.name).join(', ')}) is pointed at the
gateway's root, which serves its protocol for every model; its settings are passed for this run
only (gemini: a throwaway GEMINI_CLI_HOME linking back to ~/.gemini, its settings.json a merged copy).\nExamples: ${gatewayCmd('run -- claude')}   ${gatewayCmd('run -m openai/gpt-5.4 -- claude -p "hi"')}\n${SESSION_KEY_HELP}`)
    .action((command: string[], opts: { key?: string; insecureStorage?: boolean; model?: string }) => runWithEnv(command, opts));
}

async function runWithEnv(command: string[], opts: { key?: string; insecureStorage?: boolean; model?: string }): Promise<void> {
  const dir = cliStateDir();
  if (opts.key !== undefined) note(`note: --key is ignored: run uses a short-lived key of its own (for a named key: eval "$(${gatewayCmd(`env --key ${opts.key}`)})")`);
  if (opts.insecureStorage) note('note: --insecure-storage is no longer needed: run stores no key');
  const daemon = findDaemon(dir);
  if (!daemon) throw new CliError(notRunningMessage());
  const session = await openSessionKey(dir, 'run');
  let home: ToolHome | undefined;
  try {
    const url = clientUrl(daemon.url);
    const tool = findTool(basename(command[0] ?? ''));
    if (opts.model !== undefined && !tool) note(`note: --model is for the coding tools gateway knows (${TOOLS.map((t) => t.name).join(', ')}); ${command[0]} gets no model variable`);
    const settings = tool?.settings?.(url, opts.model);
    if (tool?.settingsHome && settings) {
      home = overlayToolHome(tool.settingsHome, settingsObject(settings), process.env);
      if (home.problem) note(`note: ${tool.name}: ${home.problem}`);
    }
    const toolVars = [...(tool?.vars(url, session.key, opts.model) ?? []), ...(home?.vars ?? [])];
    const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(clientEnvVars(url, session.key, 'all')), ...Object.fromEntries(toolVars) };
    // These would make an SDK (or the tool) send another credential instead of the gateway key.
    const ours = new Set(toolVars.map(([name]) => name));
    for (const v of [...conflictingVars('all', process.env), ...(tool?.preferred ?? [])].filter((n) => process.env[n] !== undefined && !ours.has(n))) {
      note(`note: ${v} is unset for the command (it would take precedence over the gateway key)`);
    }
    for (const v of [...conflictingVars('all', env), ...(tool?.preferred ?? [])]) if (!ours.has(v)) delete env[v];
    process.exitCode = await runChild(toolCommand(tool, command, url, opts.model), env);
  } finally {
    home?.remove();
    await session.end();
  }
}

function runChild(command: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [file, ...args] = command;
  const child = spawn(file!, args, { stdio: 'inherit', env });
  // The terminal sends Ctrl-C to the whole group; let the child decide, and forward the rest.
  const forward = (sig: NodeJS.Signals) => () => { child.kill(sig); };
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  return new Promise<number>((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'ENOENT' ? new CliError(`command not found: ${file}`, 127) : new CliError(`cannot run ${file}: ${e.message}`, 126));
    });
    child.on('exit', (c, signal) => resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (c ?? 1)));
  }).finally(() => { for (const [s, h] of handlers) process.off(s, h); });
}
