// Gemini `generateContent` as an upstream of the hub: IR requests → Gemini calls, and Gemini's
// answers, streams and errors → the IR. Pure: no I/O, clock or globals.
import type { ProviderProtocol } from '../../../ir/protocol.js';
import { buildGeminiRequest } from './build-request.js';
import { readGeminiError } from './read-error.js';
import { readGeminiResponse } from './read-response.js';
import { createGeminiStreamReader } from './read-stream.js';

export const geminiProvider: ProviderProtocol = {
  id: 'gemini',
  buildRequest: buildGeminiRequest,
  readResponse: readGeminiResponse,
  createStreamReader: createGeminiStreamReader,
  readError: readGeminiError,
};
