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
   * For a tool configured by a file rather than variables: its settings as dotted keys and JSON
   * literals (which are TOML literals too, for the values used here). `run` hands them over per run
   * (settingsFlag or settingsHome); `env` prints them as the block to add to the tool's file.
   */
  settings?(url: string, model: string | undefined): Array<[string, string]>;
  /** The tool's own settings file, which env names, and its format. */
  readonly settingsFile?: string;
  readonly settingsFormat?: 'toml' | 'json';
  /** How run passes one setting (`-c key=value`)... */
  readonly settingsFlag?: string;
  /**
   * ...or, for a tool with no such flag, where its home is: run points `envVar` at a throwaway
   * overlay of the user's `<home>/<dir>` (every entry linked back, `file` a merged copy with our
   * settings on top), so the user's own file is never written. See tool-home.ts.
   */
  readonly settingsHome?: { readonly envVar: string; readonly dir: string; readonly file: string };
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
  settingsFormat: 'toml',
};

/**
 * gemini-cli speaks Gemini's generateContent family at GOOGLE_GEMINI_BASE_URL (+ /v1beta/models/…),
 * the key in GEMINI_API_KEY (sent as x-goog-api-key), the model from GEMINI_MODEL (its -m flag
 * wins). With a base URL set and no auth type chosen it picks its "gateway" auth type, which
 * headless mode refuses ("Invalid auth method selected"), so its settings must choose
 * `gemini-api-key`. It has no per-run settings flag, and its system settings path
 * (GEMINI_CLI_SYSTEM_SETTINGS_PATH) is read only from a root-owned file in root-owned directories,
 * so run overlays its home (GEMINI_CLI_HOME). The rest keeps it quiet offline: no usage
 * statistics (sent to play.googleapis.com) and no update checks.
 */
const gemini: ToolPreset = {
  name: 'gemini',
  title: 'gemini-cli, on any model',
  vars: (url, key, model) => [
    ['GOOGLE_GEMINI_BASE_URL', url],
    ['GEMINI_API_KEY', key],
    ...(model === undefined ? [] : ([['GEMINI_MODEL', model]] as Array<[string, string]>)),
  ],
  preferred: [],
  settings: () => [
    ['security.auth.selectedType', '"gemini-api-key"'],
    ['privacy.usageStatisticsEnabled', 'false'],
    ['general.enableAutoUpdate', 'false'],
    ['general.enableAutoUpdateNotification', 'false'],
  ],
  settingsFile: '~/.gemini/settings.json',
  settingsFormat: 'json',
  settingsHome: { envVar: 'GEMINI_CLI_HOME', dir: '.gemini', file: 'settings.json' },
};

export const TOOLS: readonly ToolPreset[] = [claude, codex, gemini];

/** The tool's command line with the preset's settings put in front of the user's own arguments. */
export function toolCommand(tool: ToolPreset | undefined, command: string[], url: string, model: string | undefined): string[] {
  const settings = tool?.settings?.(url, model);
  if (!settings || !tool?.settingsFlag) return command;
  return [command[0]!, ...settings.flatMap(([k, v]) => [tool.settingsFlag!, `${k}=${v}`]), ...command.slice(1)];
}

export function findTool(name: string): ToolPreset | undefined {
  return TOOLS.find((t) => t.name === name);
}
