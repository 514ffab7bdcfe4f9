// One level of a JSON Schema → the Gemini `Schema` keywords for it (provider-reference.md §3.8).
// schema.ts resolves the structure first ($ref, allOf, anyOf/oneOf, type arrays); this file maps
// what is left, keeping only `Schema` fields and only the keywords that belong to the node's type.
import { isRecord, type JsonRecord } from '../../shared/lenient-json.js';

export type GeminiType = 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN' | 'ARRAY' | 'OBJECT' | 'NULL';

export interface GeminiSchema {
  type?: GeminiType;
  format?: string;
  title?: string;
  description?: string;
  nullable?: boolean;
  enum?: string[];
  items?: GeminiSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, GeminiSchema>;
  required?: string[];
  propertyOrdering?: string[];
  minProperties?: number;
  maxProperties?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: GeminiSchema[];
  default?: unknown;
  example?: unknown;
}

const TYPES: Record<string, GeminiType> = {
  string: 'STRING', number: 'NUMBER', integer: 'INTEGER', boolean: 'BOOLEAN', array: 'ARRAY', object: 'OBJECT', null: 'NULL',
};

const FORMATS: Partial<Record<GeminiType, readonly string[]>> = {
  STRING: ['enum', 'date-time'], NUMBER: ['float', 'double'], INTEGER: ['int32', 'int64'],
};

/** Converts a nested schema (a property, `items`) with the caller's reference tracking. */
export type ConvertChild = (schema: unknown, path: string) => GeminiSchema;

export function convertKeywords(node: JsonRecord, path: string, convertChild: ConvertChild): GeminiSchema {
  const out: GeminiSchema = {};
  const type = inferType(node);
  if (type !== undefined) out.type = type;
  if (typeof node.title === 'string') out.title = node.title;
  if (typeof node.description === 'string') out.description = node.description;
  if (node.nullable === true) out.nullable = true;
  applyEnum(node, out);
  if (node.default !== undefined && node.default !== null) out.default = node.default;
  if (node.example !== undefined) out.example = node.example;
  const format = typeof node.format === 'string' && type !== undefined ? node.format : undefined;
  if (format !== undefined && FORMATS[type!]?.includes(format)) out.format = format;
  // Type-specific keywords only on their own type (an untyped schema keeps none of them).
  if (type === 'OBJECT') applyObject(node, out, path, convertChild);
  if (type === 'ARRAY') applyArray(node, out, path, convertChild);
  if (type === 'STRING') {
    copyCount(node, out, 'minLength');
    copyCount(node, out, 'maxLength');
    if (typeof node.pattern === 'string') out.pattern = node.pattern;
  }
  if (type === 'NUMBER' || type === 'INTEGER') applyBounds(node, out, type);
  return out;
}

function applyObject(node: JsonRecord, out: GeminiSchema, path: string, convertChild: ConvertChild): void {
  if (isRecord(node.properties) && Object.keys(node.properties).length > 0) {
    const properties: Record<string, GeminiSchema> = {};
    for (const [name, value] of Object.entries(node.properties)) properties[name] = convertChild(value, `${path}.properties.${name}`);
    out.properties = properties;
    const known = (list: unknown): string[] => (Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string' && n in properties) : []);
    // Gemini rejects `required` names that are not declared properties.
    const required = known(node.required);
    if (required.length > 0) out.required = [...new Set(required)];
    const ordering = known(node.propertyOrdering);
    if (ordering.length > 0) out.propertyOrdering = ordering;
  }
  copyCount(node, out, 'minProperties');
  copyCount(node, out, 'maxProperties');
}

function applyArray(node: JsonRecord, out: GeminiSchema, path: string, convertChild: ConvertChild): void {
  const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : undefined;
  if (tuple !== undefined && tuple.length > 0) {
    out.items = tuple.length === 1 ? convertChild(tuple[0], `${path}.items`) : convertChild({ anyOf: tuple }, `${path}.items`);
  } else if (isRecord(node.items) && Object.keys(node.items).length > 0) {
    out.items = convertChild(node.items, `${path}.items`);
  } else {
    out.items = { type: 'STRING' }; // Gemini requires `items` on ARRAY; any JSON array passes the client's check
  }
  copyCount(node, out, 'minItems');
  copyCount(node, out, 'maxItems');
}

/** `const` is a one-value enum. Gemini enums are strings on STRING only; others go to the text. */
function applyEnum(node: JsonRecord, out: GeminiSchema): void {
  const values = 'const' in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;
  if (values === undefined) return;
  const nonNull = values.filter((v) => v !== null);
  if (nonNull.length < values.length) out.nullable = true;
  if (nonNull.length === 0) return;
  if (nonNull.every((v) => typeof v === 'string') && (out.type === undefined || out.type === 'STRING')) {
    out.type = 'STRING';
    out.enum = nonNull as string[];
    return;
  }
  const list = nonNull.map((v) => JSON.stringify(v)).join(', ');
  out.description = out.description === undefined ? `Allowed values: ${list}` : `${out.description} (allowed values: ${list})`;
}

/** The Gemini type of a schema, inferred from its keywords when `type` is missing. */
export function inferType(node: JsonRecord): GeminiType | undefined {
  if (typeof node.type === 'string') return TYPES[node.type.toLowerCase()];
  if (isRecord(node.properties)) return 'OBJECT';
  if (node.items !== undefined || Array.isArray(node.prefixItems)) return 'ARRAY';
  const values = 'const' in node ? [node.const] : Array.isArray(node.enum) ? node.enum : [];
  if (values.length > 0 && values.every((v) => typeof v === 'string' || v === null)) return 'STRING';
  return undefined;
}

function copyCount(node: JsonRecord, out: GeminiSchema, key: 'minLength' | 'maxLength' | 'minItems' | 'maxItems' | 'minProperties' | 'maxProperties'): void {
  const value = node[key];
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) out[key] = value;
}

/** `minimum`/`maximum`; a numeric `exclusiveMinimum`/`exclusiveMaximum` becomes the nearest bound. */
function applyBounds(node: JsonRecord, out: GeminiSchema, type: GeminiType): void {
  const step = type === 'INTEGER' ? 1 : 0;
  if (typeof node.minimum === 'number') out.minimum = node.minimum;
  else if (typeof node.exclusiveMinimum === 'number') out.minimum = node.exclusiveMinimum + step;
  if (typeof node.maximum === 'number') out.maximum = node.maximum;
  else if (typeof node.exclusiveMaximum === 'number') out.maximum = node.exclusiveMaximum - step;
}

