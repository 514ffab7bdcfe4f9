// A Gemini `Schema` (the OpenAPI 3.0 subset of `parameters` and `responseSchema`, types in
// capitals: "OBJECT", "STRING"…) → JSON Schema, the IR's dialect (provider-reference.md §3.8).
// Its fields are JSON Schema keywords already, but for `type` (lowercased), `nullable` (a "null"
// type, or a null branch for untyped unions) and `example` (JSON Schema `examples`);
// `propertyOrdering` is Gemini's alone and is dropped. Unknown keys are kept: the provider judges.
import type { JsonSchema } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPES: Readonly<Record<string, string>> = {
  STRING: 'string', NUMBER: 'number', INTEGER: 'integer', BOOLEAN: 'boolean', ARRAY: 'array', OBJECT: 'object', NULL: 'null',
};

export function fromGeminiSchema(schema: unknown, param: string): JsonSchema {
  if (!isObj(schema)) throw new TranslationError(`${param}: must be a Schema object`, param, 'invalid_value');
  const out: JsonSchema = {};
  let type: string | undefined;
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case 'type': {
        if (typeof value !== 'string') throw new TranslationError(`${param}.type: must be a string`, `${param}.type`, 'invalid_value');
        const upper = value.toUpperCase();
        if (upper === 'TYPE_UNSPECIFIED') break;
        type = TYPES[upper];
        if (type === undefined) throw new TranslationError(`${param}.type: "${value}" is not a Schema type (${Object.keys(TYPES).join(', ')})`, `${param}.type`, 'invalid_value');
        break;
      }
      case 'nullable': case 'propertyOrdering': case 'property_ordering': break; // handled below / Gemini's own
      case 'example': out.examples = [value]; break;
      case 'items': out.items = fromGeminiSchema(value, `${param}.items`); break;
      case 'properties': {
        if (!isObj(value)) throw new TranslationError(`${param}.properties: must be an object`, `${param}.properties`, 'invalid_value');
        const properties: Obj = {};
        for (const [name, sub] of Object.entries(value)) properties[name] = fromGeminiSchema(sub, `${param}.properties.${name}`);
        out.properties = properties;
        break;
      }
      case 'anyOf': case 'any_of': {
        if (!Array.isArray(value)) throw new TranslationError(`${param}.anyOf: must be an array`, `${param}.anyOf`, 'invalid_value');
        out.anyOf = value.map((sub, i) => fromGeminiSchema(sub, `${param}.anyOf[${i}]`));
        break;
      }
      default: out[snakeToCamel(key)] = value;
    }
  }
  if (schema.nullable === true) {
    if (type !== undefined) out.type = [type, 'null'];
    else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  } else if (type !== undefined) {
    out.type = type;
  }
  return out;
}

/** Proto JSON also takes snake_case names (`min_items`); JSON Schema's keywords are camelCase. */
function snakeToCamel(key: string): string {
  return key.includes('_') ? key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) : key;
}

/** Keywords of a JSON Schema whose values are schemas (one, a list, or a map of them). */
const SUB_ONE = ['items', 'not', 'contains', 'additionalProperties', 'additionalItems', 'if', 'then', 'else'];
const SUB_MANY = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];
const SUB_MAP = ['properties', '$defs', 'definitions', 'patternProperties'];

/**
 * A `responseJsonSchema` / `parametersJsonSchema` as Gemini reads it → standard JSON Schema.
 * Gemini takes type names in any case, and gemini-cli sends its own in capitals (`Type.OBJECT`
 * from @google/genai inside a JSON Schema); other providers want them lowercase. The rest is kept.
 */
export function normalizeJsonSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') out.type = typeof value === 'string' ? lowerType(value) : Array.isArray(value) ? value.map((t) => (typeof t === 'string' ? lowerType(t) : t)) : value;
    else if (SUB_ONE.includes(key) && isObj(value)) out[key] = normalizeJsonSchema(value);
    else if (SUB_MANY.includes(key) && Array.isArray(value)) out[key] = value.map((v) => (isObj(v) ? normalizeJsonSchema(v) : v));
    else if (SUB_MAP.includes(key) && isObj(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObj(v) ? normalizeJsonSchema(v) : v]));
    else out[key] = value;
  }
  return out;
}

/** A Gemini type name in capitals is the JSON Schema one; anything else is left for the provider to judge. */
function lowerType(t: string): string {
  return TYPES[t] ?? t;
}
