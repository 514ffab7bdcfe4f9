// Gemini generateContent as an upstream of the hub (a Messages request for a Gemini model, say).
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
