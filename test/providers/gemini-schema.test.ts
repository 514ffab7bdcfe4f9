// One test per JSON Schema → Gemini Schema rule (provider-reference.md §3.8).
import { describe, expect, it } from 'vitest';
import { toGeminiParameters, toGeminiSchema } from '../../src/providers/protocols/gemini/schema.js';
import { TranslationError } from '../../src/providers/types.js';

const convert = (schema: unknown): unknown => toGeminiSchema(schema, 'tools[0].function.parameters');
const params = (schema: unknown): unknown => toGeminiParameters(schema, 'tools[0].function.parameters');

describe('toGeminiSchema', () => {
  it('upper-cases types', () => {
    expect(convert({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'number' }, d: { type: 'boolean' } } }))
      .toStrictEqual({ type: 'OBJECT', properties: { a: { type: 'STRING' }, b: { type: 'INTEGER' }, c: { type: 'NUMBER' }, d: { type: 'BOOLEAN' } } });
  });

  it('drops keywords Schema does not have: additionalProperties, $schema, $id, strict, examples, $comment, uniqueItems, multipleOf, patternProperties, not', () => {
    expect(convert({
      $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'urn:x', $comment: 'c', strict: true, additionalProperties: false,
      type: 'object', patternProperties: { '^x': { type: 'string' } }, not: { required: ['z'] },
      properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, examples: [['a']] }, n: { type: 'number', multipleOf: 2 } },
    })).toStrictEqual({ type: 'OBJECT', properties: { tags: { type: 'ARRAY', items: { type: 'STRING' } }, n: { type: 'NUMBER' } } });
  });

  it('keeps the Schema keywords it has', () => {
    expect(convert({
      type: 'object', title: 'T', description: 'D', minProperties: 1, maxProperties: 3, propertyOrdering: ['s', 'gone'],
      properties: {
        s: { type: 'string', minLength: 1, maxLength: 9, pattern: '^a', default: 'a', example: 'ab' },
        n: { type: 'number', minimum: 0, maximum: 10 },
        l: { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 2 },
      },
    })).toStrictEqual({
      type: 'OBJECT', title: 'T', description: 'D', minProperties: 1, maxProperties: 3, propertyOrdering: ['s'],
      properties: {
        s: { type: 'STRING', minLength: 1, maxLength: 9, pattern: '^a', default: 'a', example: 'ab' },
        n: { type: 'NUMBER', minimum: 0, maximum: 10 },
        l: { type: 'ARRAY', items: { type: 'INTEGER' }, minItems: 1, maxItems: 2 },
      },
    });
  });

  it('inlines $ref to $defs and definitions, siblings winning, and drops $defs', () => {
    expect(convert({
      type: 'object',
      $defs: { point: { type: 'object', description: 'A point', properties: { x: { type: 'number' } } } },
      definitions: { name: { type: 'string' } },
      properties: { p: { $ref: '#/$defs/point', description: 'Where' }, n: { $ref: '#/definitions/name' } },
    })).toStrictEqual({
      type: 'OBJECT',
      properties: { p: { type: 'OBJECT', description: 'Where', properties: { x: { type: 'NUMBER' } } }, n: { type: 'STRING' } },
    });
  });

  it('cuts a recursive $ref after one level instead of looping', () => {
    expect(convert({
      $defs: { node: { type: 'object', description: 'Tree node', properties: { value: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      $ref: '#/$defs/node',
    })).toStrictEqual({
      type: 'OBJECT', description: 'Tree node',
      properties: { value: { type: 'STRING' }, children: { type: 'ARRAY', items: { type: 'OBJECT', description: 'Tree node' } } },
    });
  });

  it('refuses a $ref it cannot resolve, naming the parameter', () => {
    expect(() => convert({ type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } })).toThrow(TranslationError);
    expect(() => convert({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toThrow(expect.objectContaining({
      name: 'TranslationError', param: 'tools[0].function.parameters', message: expect.stringContaining('#/$defs/missing'),
    }));
  });

  it('turns a type array with null into nullable', () => {
    expect(convert({ type: ['string', 'null'], description: 'd' })).toStrictEqual({ type: 'STRING', description: 'd', nullable: true });
  });

  it('turns a type array of several types into anyOf, type-specific keywords going to their branch', () => {
    expect(convert({ type: ['string', 'array', 'null'], description: 'd', minLength: 2, items: { type: 'number' } })).toStrictEqual({
      description: 'd', nullable: true,
      anyOf: [{ type: 'STRING', minLength: 2 }, { type: 'ARRAY', items: { type: 'NUMBER' } }],
    });
  });

  it('turns anyOf with a null branch into nullable and merges the one branch left', () => {
    expect(convert({ description: 'Due date', anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] }))
      .toStrictEqual({ type: 'STRING', description: 'Due date', format: 'date-time', nullable: true });
  });

  it('keeps anyOf with several branches and treats oneOf as anyOf', () => {
    expect(convert({ oneOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] }))
      .toStrictEqual({ nullable: true, anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }] });
  });

  it('pushes a parent type and properties into anyOf branches', () => {
    expect(convert({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] }))
      .toStrictEqual({ anyOf: [
        { type: 'OBJECT', properties: { a: { type: 'STRING' }, b: { type: 'STRING' } }, required: ['a'] },
        { type: 'OBJECT', properties: { a: { type: 'STRING' }, b: { type: 'STRING' } }, required: ['b'] },
      ] });
  });

  it('merges allOf members', () => {
    expect(convert({
      $defs: { base: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
      allOf: [{ $ref: '#/$defs/base' }, { properties: { n: { type: 'integer' } }, required: ['n', 'id'] }],
      description: 'merged',
    })).toStrictEqual({
      type: 'OBJECT', description: 'merged', properties: { id: { type: 'STRING' }, n: { type: 'INTEGER' } }, required: ['id', 'n'],
    });
  });

  it('turns const into a single-value enum', () => {
    expect(convert({ const: 'support' })).toStrictEqual({ type: 'STRING', enum: ['support'] });
    expect(convert({ type: 'string', const: 'x', description: 'd' })).toStrictEqual({ type: 'STRING', description: 'd', enum: ['x'] });
  });

  it('keeps string enums (typing them STRING), moves null into nullable', () => {
    expect(convert({ enum: ['a', 'b', null] })).toStrictEqual({ type: 'STRING', nullable: true, enum: ['a', 'b'] });
  });

  it('moves non-string enums into the description, since Gemini enums are strings on STRING only', () => {
    expect(convert({ type: 'integer', enum: [1, 2, 4], description: 'Level' })).toStrictEqual({ type: 'INTEGER', description: 'Level (allowed values: 1, 2, 4)' });
    expect(convert({ type: 'boolean', const: true })).toStrictEqual({ type: 'BOOLEAN', description: 'Allowed values: true' });
  });

  it('keeps only the formats Gemini accepts for the type', () => {
    expect(convert({ type: 'object', properties: {
      a: { type: 'string', format: 'email' }, b: { type: 'string', format: 'date-time' }, c: { type: 'integer', format: 'int64' },
      d: { type: 'number', format: 'double' }, e: { type: 'number', format: 'int32' }, f: { type: 'string', format: 'uri' },
    } })).toStrictEqual({ type: 'OBJECT', properties: {
      a: { type: 'STRING' }, b: { type: 'STRING', format: 'date-time' }, c: { type: 'INTEGER', format: 'int64' },
      d: { type: 'NUMBER', format: 'double' }, e: { type: 'NUMBER' }, f: { type: 'STRING' },
    } });
  });

  it('drops type-specific keywords on the wrong type', () => {
    expect(convert({ type: 'string', items: { type: 'string' }, minimum: 1, properties: { a: {} }, maxItems: 3 })).toStrictEqual({ type: 'STRING' });
    expect(convert({ description: 'anything', minLength: 1, maximum: 3 })).toStrictEqual({ description: 'anything' });
  });

  it('infers the type from properties, items and string enums', () => {
    expect(convert({ properties: { a: { items: { enum: ['x'] } } } }))
      .toStrictEqual({ type: 'OBJECT', properties: { a: { type: 'ARRAY', items: { type: 'STRING', enum: ['x'] } } } });
  });

  it('gives an ARRAY without items string items (Gemini requires items)', () => {
    expect(convert({ type: 'array' })).toStrictEqual({ type: 'ARRAY', items: { type: 'STRING' } });
  });

  it('turns tuple items (prefixItems or an items array) into anyOf items', () => {
    expect(convert({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] }))
      .toStrictEqual({ type: 'ARRAY', items: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] } });
    expect(convert({ type: 'array', items: [{ type: 'string' }] })).toStrictEqual({ type: 'ARRAY', items: { type: 'STRING' } });
  });

  it('turns numeric exclusive bounds into the nearest inclusive bound', () => {
    expect(convert({ type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 10 })).toStrictEqual({ type: 'INTEGER', minimum: 1, maximum: 9 });
    expect(convert({ type: 'number', exclusiveMinimum: 0.5 })).toStrictEqual({ type: 'NUMBER', minimum: 0.5 });
  });

  it('keeps only required names that are declared properties', () => {
    expect(convert({ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost', 'a'] }))
      .toStrictEqual({ type: 'OBJECT', properties: { a: { type: 'STRING' } }, required: ['a'] });
  });

  it('drops empty properties and a null default', () => {
    expect(convert({ type: 'object', properties: {}, default: null })).toStrictEqual({ type: 'OBJECT' });
  });
});

describe('toGeminiParameters', () => {
  it('omits parameters for a function without arguments', () => {
    expect(params(undefined)).toBeUndefined();
    expect(params({ type: 'object', properties: {} })).toBeUndefined();
    expect(params({ type: 'object', additionalProperties: false })).toBeUndefined();
  });

  it('refuses a root schema that is not an object', () => {
    expect(() => params({ type: 'string' })).toThrow(/type "object"/);
    expect(() => params('nope')).toThrow(TranslationError);
  });
});

describe('toGeminiSchema on hostile input', () => {
  it('terminates on reference cycles through allOf and $ref chains', () => {
    expect(convert({ $defs: { a: { allOf: [{ $ref: '#/$defs/a' }], type: 'object', properties: { x: { type: 'string' } } } }, $ref: '#/$defs/a' }))
      .toStrictEqual({ type: 'OBJECT', properties: { x: { type: 'STRING' } } });
    expect(convert({ $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, type: 'object', properties: { p: { $ref: '#/$defs/a' } } }))
      .toStrictEqual({ type: 'OBJECT', properties: { p: {} } });
    expect(convert({ $ref: '#' })).toStrictEqual({});
  });

  it('reports a malformed pointer as unresolvable instead of throwing a URIError', () => {
    expect(() => convert({ properties: { a: { $ref: '#/$defs/%E0%A4%A' } } })).toThrow(TranslationError);
  });
});
