// `gateway run -- <command…>`: runs a command with the `gateway env` variables set, and exits
// with its exit code (128+n when a signal ended it).
import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { CliError, cliStateDir, note } from '../common.js';
import { clientEnvVars, conflictingVars, ensureClientKey, DEFAULT_CLIENT_KEY_NAME } from '../client-env.js';
import { gatewayUrl } from '../daemon-client.js';
import { CLIENT_KEY_HELP } from './env.js';
import { gatewayCmd } from '../invocation.js';

export function registerRun(program: Command): void {
  program.command('run')
    .description('run a command with the SDK variables of `gateway env` set; exits with its exit code')
    .argument('<command...>', 'the command and its arguments (put -- before it)')
    .option('--key <name>', `client key to use (created on first use; default "${DEFAULT_CLIENT_KEY_NAME}")`)
    .option('--insecure-storage', 'when creating the client key, keep its plaintext in the 0600 insecure file instead of the keychain')
    .passThroughOptions()
    .addHelpText('after', `\nExample: ${gatewayCmd('run -- claude')}\n${CLIENT_KEY_HELP}`)
    .action((command: string[], opts: { key?: string; insecureStorage?: boolean }) => runWithEnv(command, opts));
}

async function runWithEnv(command: string[], opts: { key?: string; insecureStorage?: boolean }): Promise<void> {
  const dir = cliStateDir();
  const { key } = await ensureClientKey({ dir, env: process.env, name: opts.key, insecureStorage: opts.insecureStorage });
  const { url, running } = gatewayUrl(dir);
  if (!running) note(`note: the gateway is not running; start it with: ${gatewayCmd('start')}`);
  const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(clientEnvVars(url, key, 'all')) };
  // These would make an SDK send another credential instead of the gateway key.
  for (const v of conflictingVars('all', env)) {
    delete env[v];
    note(`note: ${v} is unset for the command (it would take precedence over the gateway key)`);
  }
  const [file, ...args] = command;
  const child = spawn(file!, args, { stdio: 'inherit', env });
  // The terminal sends Ctrl-C to the whole group; let the child decide, and forward the rest.
  const forward = (sig: NodeJS.Signals) => () => { child.kill(sig); };
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'ENOENT' ? new CliError(`command not found: ${file}`, 127) : new CliError(`cannot run ${file}: ${e.message}`, 126));
    });
    child.on('exit', (c, signal) => resolve(signal ? 128 + (constants.signals[signal] ?? 0) : (c ?? 1)));
  });
  for (const [s, h] of handlers) process.off(s, h);
  process.exitCode = code;
}
