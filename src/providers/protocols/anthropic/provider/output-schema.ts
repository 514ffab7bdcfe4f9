// A JSON Schema → what Anthropic's structured outputs (`output_config.format`) take. Their
// documented subset: every object closed (`additionalProperties: false`, which the SDKs add
// themselves), and no numeric, length or count constraints (a 400 otherwise). So objects that
// say nothing are closed, and each unsupported constraint moves into the description, in words,
// as Anthropic's SDKs do; an object the client left open on purpose cannot be expressed, and the
// builder asks for the JSON in words instead (provider-reference.md §2, "structured outputs").
import type { JsonSchema } from '../../../ir/types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Constraints Anthropic refuses, said in words in the description instead. */
const UNSUPPORTED: ReadonlySet<string> = new Set([
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
]);
const FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);
/** Keywords whose value is one schema, a list of schemas, or a map of them. */
const ONE = ['items', 'not', 'contains', 'additionalItems'];
const MANY = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];
const MAP = ['properties', '$defs', 'definitions', 'patternProperties'];

class Open extends Error {}

/** The schema as Anthropic takes it, or undefined when it keeps an object open (no equivalent there). */
export function toAnthropicOutputSchema(schema: JsonSchema): JsonSchema | undefined {
  try { return fit(schema); } catch (e) { if (e instanceof Open) return undefined; throw e; }
}

function fit(s: Obj): Obj {
  const out: Obj = {};
  const notes: string[] = [];
  for (const [key, value] of Object.entries(s)) {
    if (UNSUPPORTED.has(key) || (key === 'minItems' && typeof value === 'number' && value > 1) || (key === 'format' && typeof value === 'string' && !FORMATS.has(value))) {
      notes.push(`${key}: ${JSON.stringify(value)}`);
    } else if (ONE.includes(key) && isObj(value)) out[key] = fit(value);
    else if (MANY.includes(key) && Array.isArray(value)) out[key] = value.map((v) => (isObj(v) ? fit(v) : v));
    else if (MAP.includes(key) && isObj(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObj(v) ? fit(v) : v]));
    else out[key] = value;
  }
  const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || (s.type === undefined && isObj(s.properties));
  if (isObject) {
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) throw new Open();
    out.additionalProperties = false;
  }
  if (notes.length > 0) {
    const said = `(${notes.join(', ')})`;
    out.description = typeof s.description === 'string' && s.description !== '' ? `${s.description} ${said}` : said;
  }
  return out;
}
