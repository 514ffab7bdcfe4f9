// Gemini's countTokens as a door (POST models/{model}:countTokens for a model that is not
// Gemini's; provider-reference.md §3.7): the body is `{contents}` or, exclusively,
// `{generateContentRequest: {model, contents, systemInstruction, tools, …}}`, read by the
// generateContent parser; the answer is `{totalTokens}`.
import type { Target } from '../../../ir/protocol.js';
import type { Request } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { fail, get, isObj } from './fields.js';
import { parseGenerateContentRequest } from './parse-request.js';

const INNER = 'generateContentRequest';

export function parseCountTokensRequest(raw: unknown, target: Target): Request {
  if (!isObj(raw)) fail('body', 'must be a JSON object');
  const inner = get(raw, INNER);
  if (inner === undefined || inner === null) return parseGenerateContentRequest({ contents: raw.contents }, target);
  if (!isObj(inner)) fail(INNER, 'must be an object');
  if (raw.contents !== undefined && raw.contents !== null) fail('contents', `cannot be set together with ${INNER}`);
  try {
    return parseGenerateContentRequest({ ...inner, stream: false }, target);
  } catch (e) {
    // The field named as the client sent it: inside generateContentRequest.
    if (e instanceof TranslationError && e.param !== null) throw new TranslationError(`${INNER}.${e.message}`, `${INNER}.${e.param}`, e.code);
    throw e;
  }
}

export function renderCountTokens(tokens: number): { totalTokens: number } {
  return { totalTokens: tokens };
}
