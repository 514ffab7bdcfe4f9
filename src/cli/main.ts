// The `gateway` program: one commander tree, commands registered from one file each, and the
// single place errors become one line on stderr and an exit code. Heavy modules (the keychain's
// native module, conf, ink/react, the daemon) are imported inside actions, so --help stays instant.
import { VERSION } from '../version.js';
import { BUILTIN_PROVIDERS } from '../providers/registry.js';
import { Command, CommanderError } from 'commander';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CliError, cliStateDir } from './common.js';
import { loadProviderConfig } from '../daemon/store/config.js';
import { registerProviders } from './commands/providers.js';
import { registerKeys } from './commands/keys.js';
import { registerStart } from './commands/start.js';
import { registerStop } from './commands/stop.js';
import { registerStatus } from './commands/status.js';
import { registerLogs } from './commands/logs.js';
import { registerEnv } from './commands/env.js';
import { registerRun } from './commands/run.js';
import { registerModels } from './commands/models.js';
import { registerDoctor } from './commands/doctor.js';
import { registerUsage } from './commands/usage.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerMonitor } from './commands/monitor.js';
import { registerChat } from './commands/chat.js';
import { registerStore } from './commands/store.js';
import { gatewayCmd, gatewayName } from './invocation.js';
import { registerRemoteOptions } from './remote.js';

/** Each entry adds one top-level command; add new commands here. */
const COMMANDS: ((program: Command) => void)[] = [
  registerStart, registerStop, registerStatus, registerLogs,
  registerProviders, registerKeys, registerEnv, registerRun, registerModels, registerDoctor, registerUsage, registerDashboard, registerMonitor, registerChat, registerStore,
];


export function buildProgram(): Command {
  const program = new Command(gatewayName())
    .description('A localhost gateway for Anthropic, OpenAI and Gemini: provider keys stay in your OS keychain, clients get local sk-proxy- keys.')
    .version(VERSION, '-V, --version', 'print the version')
    .enablePositionalOptions()
    .exitOverride()
    .showSuggestionAfterError()
    .addHelpText('after', `
State lives in $GATEWAY_HOME, else the platform config directory.
Environment: ${BUILTIN_PROVIDERS.map((p) => p.keyEnv).join(', ')} override stored
provider keys; GATEWAY_PORT, GATEWAY_UPSTREAM_TIMEOUT set start defaults. Advanced/testing:
GATEWAY_KEYCHAIN_SERVICE (keychain service name, default model-gateway), GATEWAY_KEYCHAIN_STORE
(Linux: secret-service or keyutils, instead of auto-detection).
On another machine: GATEWAY_ADMIN_KEY=sk-gwadmin-… ${gatewayCmd('--url https://gw.example:8443 keys list')}
(keys, status and usage act on that gateway through its admin API).

Quick start:
  printenv ANTHROPIC_KEY | ${gatewayCmd('providers set anthropic --stdin')}
  ${gatewayCmd('start')}
  eval "$(${gatewayCmd('env')})"`);
  registerRemoteOptions(program);
  for (const register of COMMANDS) register(program);
  return program;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** Runs the CLI and returns the exit code (it never calls process.exit itself). */
export async function main(argv: string[] = process.argv): Promise<number> {
  // The providers the user added are names commands accept: the registry knows them before any
  // command is built. A broken config.json is reported by the commands that read it, not here.
  try { loadProviderConfig(cliStateDir()); } catch { /* see above */ }
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    // commander has already printed its own one-line message (or the help).
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : e.code === 'commander.help' ? e.exitCode : 2;
    const err = e instanceof Error ? e : new Error(String(e));
    process.stderr.write(`error: ${oneLine(err.message) || err.name}\n`);
    if (process.env.GATEWAY_DEBUG && err.stack) process.stderr.write(err.stack + '\n');
    return e instanceof CliError ? e.exitCode : 1;
  }
}

/** Runs the CLI, flushes stdout and exits: a keychain call that timed out must not keep us alive. */
export async function run(argv: string[] = process.argv): Promise<void> {
  // `gateway keys list | head -1`: a closed pipe is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => process.exit(e.code === 'EPIPE' ? 0 : 1));
  const code = await main(argv);
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}

// `gateway start` spawns this file directly (`node dist/cli/main.js start --foreground`).
const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(realpathSync(entry)).href) void run();
