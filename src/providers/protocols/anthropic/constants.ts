// Facts of Anthropic's Messages protocol that every side of it shares.

/** The API version every call names (the SDK hard-codes the same, provider-reference.md §2.1). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic has no JSON mode, and structured outputs need a schema, so JSON output without one
 * becomes this instruction as the last system block. (OpenAI's own JSON mode also relies on the
 * prompt asking for JSON; it only adds a guarantee of valid syntax.)
 */
export const JSON_OBJECT_INSTRUCTION =
  'Respond with a single valid JSON object and nothing else: no prose before or after it and no Markdown code fences.';
