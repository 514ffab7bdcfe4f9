// Coding tools `gateway env <tool>` and `gateway run -- <tool>` set up for any model: the variables
// each tool reads, pointed at the gateway's root door for its protocol (not at a provider's native
// prefix, which reaches only that provider). Client-side facts: no provider is named here.

export interface ToolPreset {
  /** The `env` argument, and the command name `run` recognises. */
  readonly name: string;
  /** What it is, for help text. */
  readonly title: string;
  vars(url: string, key: string, model: string | undefined): Array<[string, string]>;
  /** Variables the tool would prefer over ours (another credential): unset by run, warned by env. */
  readonly preferred: readonly string[];
  /**
   * For a tool configured by a file rather than variables: the settings as `key = value` lines
   * (TOML dotted keys). `run` passes each as an override before the tool's own arguments; `env`
   * prints them as the block to add to the tool's file.
   */
  settings?(url: string, model: string | undefined): Array<[string, string]>;
  /** How run passes one setting (`-c key=value`), and the file env names. */
  readonly settingsFlag?: string;
  readonly settingsFile?: string;
}

/**
 * Claude Code speaks Anthropic Messages at ANTHROPIC_BASE_URL's /v1/messages, with
 * ANTHROPIC_AUTH_TOKEN as Bearer; the model (and the small background model it uses for titles and
 * summaries) comes from ANTHROPIC_MODEL and ANTHROPIC_DEFAULT_HAIKU_MODEL /
 * ANTHROPIC_SMALL_FAST_MODEL; nonessential traffic (telemetry, update checks) is turned off.
 */
const claude: ToolPreset = {
  name: 'claude',
  title: 'Claude Code, on any model',
  vars: (url, key, model) => [
    ['ANTHROPIC_BASE_URL', url],
    ['ANTHROPIC_AUTH_TOKEN', key],
    ['CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC', '1'],
    ...(model === undefined ? [] : ([['ANTHROPIC_MODEL', model], ['ANTHROPIC_DEFAULT_HAIKU_MODEL', model], ['ANTHROPIC_SMALL_FAST_MODEL', model]] as Array<[string, string]>)),
  ],
  preferred: ['ANTHROPIC_API_KEY'],
};

/**
 * Codex CLI speaks only the Responses API, at a provider's `base_url` + /responses; its provider
 * comes from ~/.codex/config.toml (`model_provider` and a `[model_providers.<id>]` block whose
 * `env_key` names the variable holding the key), which `-c key=value` overrides per run. The rest
 * keeps it quiet offline: no update check, analytics or plugin lookups (which call github.com and
 * chatgpt.com).
 */
const codex: ToolPreset = {
  name: 'codex',
  title: 'Codex CLI, on any model',
  vars: (_url, key) => [['GATEWAY_API_KEY', key]],
  preferred: [],
  settings: (url, model) => [
    ['model_provider', '"gateway"'],
    ...(model === undefined ? [] : ([['model', JSON.stringify(model)]] as Array<[string, string]>)),
    ['model_providers.gateway.name', '"gateway"'],
    ['model_providers.gateway.base_url', JSON.stringify(`${url}/v1`)],
    ['model_providers.gateway.env_key', '"GATEWAY_API_KEY"'],
    ['model_providers.gateway.wire_api', '"responses"'],
    ['check_for_update_on_startup', 'false'],
    ['analytics.enabled', 'false'],
    ['features.plugins', 'false'],
  ],
  settingsFlag: '-c',
  settingsFile: '~/.codex/config.toml',
};

export const TOOLS: readonly ToolPreset[] = [claude, codex];

/** The tool's command line with the preset's settings put in front of the user's own arguments. */
export function toolCommand(tool: ToolPreset | undefined, command: string[], url: string, model: string | undefined): string[] {
  const settings = tool?.settings?.(url, model);
  if (!settings || !tool?.settingsFlag) return command;
  return [command[0]!, ...settings.flatMap(([k, v]) => [tool.settingsFlag!, `${k}=${v}`]), ...command.slice(1)];
}

export function findTool(name: string): ToolPreset | undefined {
  return TOOLS.find((t) => t.name === name);
}
