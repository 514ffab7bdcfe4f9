// `gateway env [openai|anthropic|gemini|all]`: `export` lines for eval that point the official
// SDKs (and Claude Code, gemini-cli…) at the running gateway with a client key.
import { Argument, type Command } from 'commander';
import { cliStateDir, note, out, shQuote } from '../common.js';
import { clientEnvVars, conflictingVars, ensureClientKey, ENV_TARGETS, DEFAULT_CLIENT_KEY_NAME, type EnvTarget } from '../client-env.js';
import { gatewayUrl } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';

function clientKeyHelp(): string {
  return `
The key is a "client key": a proxy key whose plaintext the gateway keeps in the OS keychain
(account proxy-key:<name>) so it can be printed again. It is created on first use, named
"${DEFAULT_CLIENT_KEY_NAME}" unless --key NAME is given, and revoked like any key
(${gatewayCmd('keys revoke NAME')}). Keys made with \`${gatewayCmd('keys create')}\` are shown only once and cannot
be used with --key.

Without a keychain (SSH boxes, containers, CI): --insecure-storage keeps the client key in a 0600
file, or set the variables yourself with a key from ${gatewayCmd('keys create')}. ${gatewayCmd('run')} and
${gatewayCmd('chat')} need neither: they get a short-lived key from the running gateway.`;
}

export function registerEnv(program: Command): void {
  program.command('env')
    .description(`print shell exports that point the official SDKs at the gateway: eval "$(${gatewayCmd('env')})"`)
    .addArgument(new Argument('[provider]', 'which SDK variables to print').choices(ENV_TARGETS).default('all'))
    .option('--key <name>', `client key to use (created on first use; default "${DEFAULT_CLIENT_KEY_NAME}")`)
    .option('--insecure-storage', 'when creating the client key, keep its plaintext in the 0600 insecure file instead of the keychain')
    .addHelpText('after', `
Variables: OPENAI_BASE_URL (<url>/openai/v1) + OPENAI_API_KEY, ANTHROPIC_BASE_URL (<url>/anthropic)
+ ANTHROPIC_API_KEY, GOOGLE_GEMINI_BASE_URL (<url>/gemini) + GEMINI_API_KEY. The URL is the running
gateway's, else http://127.0.0.1:$GATEWAY_PORT (default 8080).
${clientKeyHelp()}`)
    .action((target: EnvTarget, opts: { key?: string; insecureStorage?: boolean }) => printEnv(target, opts));
}

async function printEnv(target: EnvTarget, opts: { key?: string; insecureStorage?: boolean }): Promise<void> {
  const dir = cliStateDir();
  const { key } = await ensureClientKey({ dir, env: process.env, name: opts.key, insecureStorage: opts.insecureStorage });
  const { url, running } = gatewayUrl(dir);
  for (const [name, value] of clientEnvVars(url, key, target)) out(`export ${name}=${shQuote(value)}`);
  if (!running) note(`note: the gateway is not running; start it with: ${gatewayCmd('start')}`);
  for (const v of conflictingVars(target, process.env)) note(`note: ${v} is set and some tools prefer it over the variables above; unset it`);
}
