// JSON output asked for in words, for a provider whose structured output cannot hold the schema
// a client gave (OpenAI's needs an object at the root; Anthropic's needs every object closed):
// the schema goes into the system prompt with the instruction, and the answer is the model's text.
import type { JsonSchema, OutputFormat } from '../ir/types.js';

export function jsonSchemaInstruction(schema: JsonSchema): string {
  return 'Respond with only JSON that matches the following JSON Schema, and nothing else: no prose before or after it and no Markdown code fences.\n' +
    JSON.stringify(schema);
}

/**
 * OpenAI's structured outputs take only an object at the root (a 400 otherwise): for JSON output
 * whose schema roots elsewhere (an array, a string), the instruction to put in the system prompt
 * instead of a response format; undefined when the format can be sent.
 */
export function openaiJsonInWords(output: OutputFormat | undefined): string | undefined {
  if (output?.type !== 'json' || output.schema === undefined) return undefined;
  const s = output.schema;
  const objectRoot = s.type === 'object' || (s.type === undefined && typeof s.properties === 'object' && s.properties !== null);
  return objectRoot ? undefined : jsonSchemaInstruction(s);
}
