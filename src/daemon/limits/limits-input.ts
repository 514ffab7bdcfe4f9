// Limits as the CLI's flags and the admin API's fields give them, checked as a whole before a key
// is written: each value by parseLimitsPatch, and here what only makes sense together.
import { applyLimitsPatch, LimitInputError, parseLimitsPatch, type KeyLimits, type LimitsPatch } from './limits.js';

/** The fields (and flags) that carry a key's limits. */
export const LIMIT_FIELDS = ['budget', 'rpm', 'tpm', 'concurrency', 'tz', 'failClosed'] as const;

/** The patch the limit fields of `input` make (others are ignored); throws LimitInputError naming the field. */
export function limitsPatchOf(input: Record<string, unknown>): LimitsPatch {
  const fields: Record<string, unknown> = {};
  for (const f of LIMIT_FIELDS) if (input[f] !== undefined) fields[f] = input[f];
  return parseLimitsPatch(fields);
}

export function isEmptyPatch(patch: LimitsPatch): boolean {
  return Object.values(patch).every((v) => v === undefined);
}

/**
 * The limits a key has after `patch`. A zone set where no budget is left is refused rather than
 * dropped: it only says which calendar a budget's day, week and month follow.
 */
export function patchedLimits(current: KeyLimits | undefined, patch: LimitsPatch): KeyLimits | undefined {
  const next = applyLimitsPatch(current, patch);
  if (typeof patch.tz === 'string' && next?.budget === undefined) {
    throw new LimitInputError('tz', 'tz sets the calendar a budget\'s day, week and month follow, and this key has no budget; give it a budget too');
  }
  if (patch.failClosed === true && next === undefined) {
    throw new LimitInputError('failClosed', 'failClosed only says what a key\'s limits do while the shared store is unreachable, and this key has no limits; give it a budget, rpm, tpm or concurrency too');
  }
  return next;
}
