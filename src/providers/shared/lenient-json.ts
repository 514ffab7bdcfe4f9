// Lenient readers for provider output: provider JSON is parsed without trusting its shape, so a
// missing or oddly typed optional field never throws (STYLE habit 4: parse provider output leniently).

export type JsonRecord = Record<string, unknown>;

/** `JSON.parse` that returns `undefined` instead of throwing. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as a record, or an empty record when it is anything else. */
export function asRecord(value: unknown): JsonRecord {
  return isRecord(value) ? value : {};
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A finite number, or `undefined` (so `null`, strings and NaN all read as "absent"). */
export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
