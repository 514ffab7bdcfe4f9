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

export const TOOLS: readonly ToolPreset[] = [claude];

export function findTool(name: string): ToolPreset | undefined {
  return TOOLS.find((t) => t.name === name);
}
