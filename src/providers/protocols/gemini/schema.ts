// OpenAI tool `parameters` (JSON Schema) → Gemini `Schema`, the OpenAPI 3.0 subset accepted in
// `functionDeclarations[].parameters` (provider-reference.md §3.8).
//
// Why `parameters` and not `parametersJsonSchema`: the `Schema` field list is verified (js-genai
// `Schema` type) and works on every Gemini model, while the keywords `parametersJsonSchema`
// accepts are unverified (§3.8, §6) and one unknown keyword anywhere fails the whole request.
// So we emit an allowlist only (schema-keywords.ts): every key is a `Schema` field, and
// type-specific keywords are kept only on the type they belong to (Gemini answers "field predicate failed: $type ==
// Type.ARRAY" for `items` on another type, "only 'enum' and 'date-time' are supported for STRING
// type" for other formats, "enum only allowed for STRING type", "items: missing field").
// The conversion loosens what it cannot express (additionalProperties, oneOf exactness, numeric
// enums go to the description); the client still validates the arguments it receives.
import { TranslationError } from '../../types.js';
import { isRecord, type JsonRecord } from '../../shared/lenient-json.js';
import { convertKeywords, inferType, type GeminiSchema } from './schema-keywords.js';

export type { GeminiSchema, GeminiType } from './schema-keywords.js';

/** Keywords that only mean something for one JSON type; they move into matching union branches. */
const TYPE_SPECIFIC = [
  'properties', 'required', 'propertyOrdering', 'minProperties', 'maxProperties', 'items', 'prefixItems', 'minItems',
  'maxItems', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
];

/**
 * Converts a tool's `parameters`. Returns `undefined` when the function takes no arguments:
 * Gemini rejects an OBJECT with empty `properties` there, and an unset `parameters` is allowed.
 */
export function toGeminiParameters(schema: unknown, param: string): GeminiSchema | undefined {
  if (schema === undefined || schema === null) return undefined;
  if (!isRecord(schema)) throw new TranslationError(`${param} must be a JSON Schema object.`, param);
  const converted = toGeminiSchema(schema, param);
  if (converted.type !== 'OBJECT') {
    throw new TranslationError(`${param} must be a JSON Schema of type "object"; Gemini takes function arguments as an object.`, param);
  }
  return converted.properties === undefined ? undefined : converted;
}

/** Converts any JSON Schema; local `$ref`s (`#/$defs/…`, `#/definitions/…`, `#`) are inlined. */
export function toGeminiSchema(schema: unknown, param: string): GeminiSchema {
  return new Converter(isRecord(schema) ? schema : {}, param).convert(schema, param, []);
}

class Converter {
  constructor(private readonly root: JsonRecord, private readonly param: string) {}

  convert(node: unknown, path: string, refs: string[]): GeminiSchema {
    if (!isRecord(node)) return {}; // `true`/`false` schemas: nothing Gemini can express
    if (typeof node.$ref === 'string') return this.convertRef(node, path, refs);
    if (Array.isArray(node.allOf)) return this.convert(this.flattenAllOf(node, path, refs), path, refs);
    const branches = [...(Array.isArray(node.anyOf) ? node.anyOf : []), ...(Array.isArray(node.oneOf) ? node.oneOf : [])];
    if (branches.length > 0) return this.convertUnion(node, branches, path, refs);
    if (Array.isArray(node.type)) return this.convertTypeArray(node, node.type, path, refs);
    return this.convertPlain(node, path, refs);
  }

  /** `$ref` is replaced by its target; keywords next to it (usually `description`) win. */
  private convertRef(node: JsonRecord, path: string, refs: string[]): GeminiSchema {
    const ref = node.$ref as string;
    const target = this.resolve(ref, `${path}.$ref`);
    const { $ref: _ref, ...siblings } = node;
    if (refs.includes(ref)) {
      // A recursive schema cannot be inlined: keep the level's type and description, stop there.
      const type = inferType(target);
      const description = siblings.description ?? target.description;
      const stub: GeminiSchema = type === undefined ? {} : { type };
      if (typeof description === 'string') stub.description = description;
      if (type === 'ARRAY') stub.items = { type: 'STRING' };
      return stub;
    }
    return this.convert({ ...target, ...siblings }, path, [...refs, ref]);
  }

  private resolve(ref: string, param: string): JsonRecord {
    if (ref === '#') return this.root;
    if (ref.startsWith('#/')) {
      let node: unknown = this.root;
      for (const raw of ref.slice(2).split('/')) {
        const key = safeDecode(raw).replace(/~1/g, '/').replace(/~0/g, '~');
        node = isRecord(node) ? node[key] : undefined;
      }
      if (isRecord(node)) return node;
    }
    throw new TranslationError(
      `${param}: cannot resolve "${ref}"; only references inside the same schema (#/$defs/…) can be inlined for Gemini.`,
      this.param,
    );
  }

  /** `allOf` members are merged into one schema: properties joined, `required` unioned. */
  private flattenAllOf(node: JsonRecord, path: string, refs: string[]): JsonRecord {
    const { allOf, ...merged } = node;
    for (const member of allOf as unknown[]) {
      let m: JsonRecord = isRecord(member) ? member : {};
      let memberRefs = refs;
      if (typeof m.$ref === 'string' && !refs.includes(m.$ref)) {
        memberRefs = [...refs, m.$ref];
        m = { ...this.resolve(m.$ref, `${path}.allOf`), ...m, $ref: undefined };
      }
      if (Array.isArray(m.allOf)) m = this.flattenAllOf(m, path, memberRefs);
      for (const [key, value] of Object.entries(m)) {
        if (value === undefined || key === '$ref') continue;
        if (key === 'properties' && isRecord(value)) merged.properties = { ...(isRecord(merged.properties) ? merged.properties : {}), ...value };
        else if (key === 'required' && Array.isArray(value)) merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...value])];
        else if (!(key in merged)) merged[key] = value;
      }
    }
    return merged;
  }

  /** `anyOf`/`oneOf`: null branches become `nullable`; one branch left is merged into the parent. */
  private convertUnion(node: JsonRecord, branches: unknown[], path: string, refs: string[]): GeminiSchema {
    const { anyOf: _a, oneOf: _o, ...parent } = node;
    const rest = branches.filter((b) => !isNullSchema(b));
    const nullable = rest.length < branches.length;
    let out: GeminiSchema;
    if (rest.length === 0) out = this.convert({ ...parent, type: 'null' }, path, refs);
    else if (rest.length === 1) out = this.convert({ ...(isRecord(rest[0]) ? rest[0] : {}), ...parent }, path, refs);
    else {
      const shared = pick(parent, (k) => !TYPE_SPECIFIC.includes(k) && k !== 'type');
      const specific = pick(parent, (k) => TYPE_SPECIFIC.includes(k) || k === 'type');
      out = this.convertPlain(shared, path, refs);
      out.anyOf = rest.map((b, i) => this.convert(isRecord(b) ? { ...specific, ...b } : specific, `${path}.anyOf[${i}]`, refs));
    }
    if (nullable && out.type !== 'NULL') out.nullable = true;
    return out;
  }

  /** `type: ["string","null"]` → nullable STRING; several non-null types → one branch per type. */
  private convertTypeArray(node: JsonRecord, types: unknown[], path: string, refs: string[]): GeminiSchema {
    const named = types.filter((t): t is string => typeof t === 'string');
    const nonNull = named.filter((t) => t !== 'null');
    const nullable = nonNull.length < named.length;
    const rest = { ...node, type: undefined };
    const out = nonNull.length <= 1
      ? this.convertPlain({ ...rest, type: nonNull[0] ?? (nullable ? 'null' : undefined) }, path, refs)
      : this.convertUnion(rest, nonNull.map((type) => ({ type })), path, refs);
    if (nullable && out.type !== 'NULL') out.nullable = true;
    return out;
  }

  private convertPlain(node: JsonRecord, path: string, refs: string[]): GeminiSchema {
    return convertKeywords(node, path, (child, childPath) => this.convert(child, childPath, refs));
  }
}

function isNullSchema(schema: unknown): boolean {
  if (!isRecord(schema)) return false;
  if (schema.type === 'null') return true;
  if (Array.isArray(schema.type) && schema.type.length === 1 && schema.type[0] === 'null') return true;
  return 'const' in schema && schema.const === null;
}

function pick(node: JsonRecord, keep: (key: string) => boolean): JsonRecord {
  return Object.fromEntries(Object.entries(node).filter(([k]) => keep(k)));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
