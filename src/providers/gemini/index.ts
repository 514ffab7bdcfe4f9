// The Gemini translating provider: OpenAI chat requests in, Gemini `generateContent` out, and
// Gemini responses, streams and errors back in OpenAI's shapes. Pure: no I/O, clock or globals.
import type { TranslatingProvider } from '../types.js';
import { fromGeminiError } from './errors.js';
import { toGeminiRequest } from './request.js';
import { fromGeminiResponse } from './response.js';
import { createGeminiStreamTranslator } from './stream.js';

export const gemini: TranslatingProvider = {
  toRequest: toGeminiRequest,
  fromResponse: fromGeminiResponse,
  createStreamTranslator: createGeminiStreamTranslator,
  fromError: fromGeminiError,
};

export { GEMINI_IGNORED_FIELDS, GEMINI_UNSUPPORTED_FIELDS, toGeminiRequest } from './request.js';
export { fromGeminiResponse } from './response.js';
export { createGeminiStreamTranslator } from './stream.js';
export { fromGeminiError, fromGeminiStreamError, GEMINI_AUTH_HINT } from './errors.js';
export { mapGeminiFinishReason } from './finish-reason.js';
export { fromGeminiUsage } from './usage.js';
export { decodeGeminiToolCallId, encodeGeminiToolCallId, type GeminiCallRef } from './tool-call-id.js';
export { toGeminiParameters, toGeminiSchema, type GeminiSchema } from './schema.js';
