// Strict reading of a client's generateContent body: every problem names the field (it becomes a
// 400 naming it). Proto JSON takes both lowerCamelCase (what the SDKs send) and snake_case (what
// Google's REST samples and some gateways send), so a field is looked up under both names.
import { TranslationError } from '../../../types.js';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function fail(param: string, message: string): never {
  throw new TranslationError(`${param}: ${message}`, param, 'invalid_value');
}

/** `o[name]`, or `o[snake_name]` when the camelCase one is absent. */
export function get(o: Obj, name: string): unknown {
  const v = o[name];
  if (v !== undefined) return v;
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return snake === name ? undefined : o[snake];
}

export function str(v: unknown, param: string): string {
  if (typeof v !== 'string') fail(param, v === undefined ? 'is required' : 'must be a string');
  return v;
}

export function optNumber(v: unknown, param: string, min: number, max: number, integer = false): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(param, 'must be a number');
  if (integer && !Number.isInteger(v)) fail(param, 'must be an integer');
  if (v < min || v > max) fail(param, `must be between ${min} and ${max}, got ${v}`);
  return v;
}
