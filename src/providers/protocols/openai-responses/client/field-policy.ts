// Which Responses fields and tool types the door maps, leaves out or refuses when the model is not
// OpenAI's (OpenAI models take the fast path, where everything goes through untouched). Codex CLI
// sends several of these on every request, so none of its defaults may become a 400 (README,
// "Responses door").

/** Top-level fields translated into the internal representation (parse-request.ts). */
export const MAPPED_FIELDS: readonly string[] = [
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature',
  'top_p', 'text', 'reasoning', 'user', 'safety_identifier', 'stream',
];

/**
 * Handled by the door itself (the store, the stream), or dropped without error: they steer
 * OpenAI's caching, billing, tracing or response shape, and leaving them out does not change what
 * the answer means. `include` values ask for data this door always returns (encrypted reasoning)
 * or has none of (logprobs, search sources).
 */
export const IGNORED_FIELDS: readonly string[] = [
  'store', 'previous_response_id', 'include', 'metadata', 'prompt_cache_key', 'prompt_cache_retention', 'client_metadata',
  'service_tier', 'truncation', 'stream_options', 'max_tool_calls', 'top_logprobs',
];

/** Refused for a foreign model: the answer would lack what they ask for. */
export const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  background: 'background responses run only on OpenAI\'s servers',
  conversation: 'conversations are kept only on OpenAI\'s servers; chain with previous_response_id instead',
  prompt: 'prompt templates are kept only on OpenAI\'s servers',
};

/**
 * Tools OpenAI runs on its own servers: a request that needs one cannot be answered by another
 * model, so it is refused naming the tool.
 */
export const HOSTED_TOOLS: ReadonlySet<string> = new Set([
  'file_search', 'code_interpreter', 'computer_use_preview', 'computer_use', 'image_generation', 'mcp',
]);

/**
 * Tools left out for a foreign model unless the request forces one (tool_choice): Codex CLI sends
 * them by default and works without them (the model just cannot search the web or use Codex's
 * built-in shell; its MCP and function tools still work).
 */
export const OPTIONAL_TOOLS: ReadonlySet<string> = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'local_shell']);
