// `gateway env [<provider>|<tool>|all]`: `export` lines for eval that point the official SDKs at
// each provider's native prefix, or a coding tool (Claude Code) at the root for any model, with a
// client key.
import { Argument, type Command } from 'commander';
import { cliStateDir, note, out, shQuote } from '../common.js';
import { clientEnvVars, conflictingVars, ensureClientKey, ENV_TARGETS, DEFAULT_CLIENT_KEY_NAME, type EnvTarget } from '../client-env.js';
import { gatewayUrl } from '../daemon-client.js';
import { gatewayCmd } from '../invocation.js';
import { findTool, TOOLS } from '../tools.js';
import { jsonBlock, tomlBlock } from '../tool-settings.js';

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
    .addArgument(new Argument('[target]', 'which SDK\'s or coding tool\'s variables to print').choices([...new Set([...ENV_TARGETS, ...TOOLS.map((t) => t.name)])]).default('all'))
    .option('-m, --model <name>', 'for a coding tool: the model it uses, any the gateway routes (e.g. openai/gpt-5.4)')
    .option('--key <name>', `client key to use (created on first use; default "${DEFAULT_CLIENT_KEY_NAME}")`)
    .option('--insecure-storage', 'when creating the client key, keep its plaintext in the 0600 insecure file instead of the keychain')
    .addHelpText('after', `
Variables: OPENAI_BASE_URL (<url>/openai/v1) + OPENAI_API_KEY, ANTHROPIC_BASE_URL (<url>/anthropic)
+ ANTHROPIC_API_KEY, GOOGLE_GEMINI_BASE_URL (<url>/gemini) + GEMINI_API_KEY. The URL is the running
gateway's, else http://127.0.0.1:$GATEWAY_PORT (default 8080).
Coding tools: claude (ANTHROPIC_BASE_URL at the root, ANTHROPIC_AUTH_TOKEN, with -m the model and
its background model: Claude Code on any model), e.g. eval "$(${gatewayCmd('env claude -m openai/gpt-5.4')})";
codex (GATEWAY_API_KEY, and the ~/.codex/config.toml block naming the gateway as a Responses provider);
gemini (gemini-cli: GOOGLE_GEMINI_BASE_URL at the root, which serves @google/genai's generateContent
family for every model too, GEMINI_API_KEY, with -m GEMINI_MODEL, and the ~/.gemini/settings.json
object choosing API-key auth, which headless gemini needs; Gemini's own prefix is in \`env all\`).
${clientKeyHelp()}`)
    .action((target: EnvTarget, opts: { key?: string; insecureStorage?: boolean; model?: string }) => printEnv(target, opts));
}

async function printEnv(target: EnvTarget, opts: { key?: string; insecureStorage?: boolean; model?: string }): Promise<void> {
  const tool = findTool(target);
  if (opts.model !== undefined && !tool) note(`note: --model is for the coding tools (${TOOLS.map((t) => t.name).join(', ')}); the SDK variables name no model`);
  const dir = cliStateDir();
  const { key } = await ensureClientKey({ dir, env: process.env, name: opts.key, insecureStorage: opts.insecureStorage });
  const { url, running } = gatewayUrl(dir);
  const vars = tool ? tool.vars(url, key, opts.model) : clientEnvVars(url, key, target);
  for (const [name, value] of vars) out(`export ${name}=${shQuote(value)}`);
  const settings = tool?.settings?.(url, opts.model);
  if (settings) {
    // Comments, so eval "$(gateway env codex)" still works; the block is for the tool's own file.
    const json = tool!.settingsFormat === 'json';
    out(`# ${tool!.name} reads its settings from ${tool!.settingsFile}: ${json ? 'merge this object into it' : 'add these lines (top-level keys before any [table])'},`);
    out(`# or run it as ${gatewayCmd(`run${opts.model ? ` -m ${opts.model}` : ''} -- ${tool!.name}`)}, which passes them for you.`);
    for (const line of json ? jsonBlock(settings) : tomlBlock(settings)) out(`# ${line}`);
  }
  if (!running) note(`note: the gateway is not running; start it with: ${gatewayCmd('start')}`);
  const preferred = tool ? tool.preferred.filter((n) => process.env[n]) : conflictingVars(target, process.env);
  for (const v of preferred) note(`note: ${v} is set and some tools prefer it over the variables above; unset it`);
}
