// Parses an OpenAI `tool_calls[].function.arguments` string into the JSON object the Anthropic and
// Gemini APIs want. OpenAI documents that arguments "do not always" hold valid JSON (§1.3), so a
// bad value is a client error naming the exact field, never a bare JSON.parse exception.
import { TranslationError } from '../types.js';

/**
 * `''` (sent by some clients for tools without parameters) becomes `{}`; anything that is not a
 * JSON object throws a TranslationError whose `param` is `param` (e.g.
 * `messages[2].tool_calls[0].function.arguments`).
 */
export function parseToolArguments(args: unknown, param: string, provider: string): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'string') {
    throw new TranslationError(`${param} must be a string holding a JSON object.`, param);
  }
  if (args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args) as unknown;
  } catch {
    throw new TranslationError(`${param} is not valid JSON; ${provider} needs the tool arguments as a JSON object.`, param);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new TranslationError(`${param} must be a JSON object; ${provider} does not accept other JSON values as tool input.`, param);
  }
  return parsed as Record<string, unknown>;
}
