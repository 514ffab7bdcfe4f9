// Which Messages fields the door maps, ignores or refuses when the model is not Anthropic's (the
// same-protocol fast path sends everything to Anthropic untouched). Claude Code sends several of
// these on every request, so none of its defaults may become a 400 (README, "Messages door").

/** Top-level fields translated into the internal representation (parse-request.ts). */
export const MAPPED_FIELDS: readonly string[] = [
  'model', 'messages', 'system', 'max_tokens', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k',
  'metadata', 'tools', 'tool_choice', 'thinking', 'output_config',
];

/**
 * Dropped without error: they steer Anthropic's own caching, context editing, routing or billing,
 * which no other provider has, and leaving them out does not change what the answer means.
 * (`cache_control` on blocks and tools, and tools' `defer_loading`, `eager_input_streaming`,
 * `input_examples`, are dropped the same way.)
 */
export const IGNORED_FIELDS: readonly string[] = [
  'cache_control', 'context_management', 'service_tier', 'container', 'inference_geo', 'betas',
];

/** Refused for a foreign model: the answer would silently lack what they ask for. */
export const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  mcp_servers: 'the MCP connector (mcp_servers) runs only on Anthropic\'s servers',
};

/** Tool types only Anthropic runs (web search, code execution, computer use…): refused by name. */
export function isServerTool(tool: Record<string, unknown>): boolean {
  return typeof tool.type === 'string' && tool.type !== 'custom';
}
