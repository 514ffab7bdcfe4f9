// Gemini `generateContent` as an upstream of the hub: IR requests → Gemini calls, and Gemini's
// answers, streams and errors → the IR. Pure: no I/O, clock or globals.
import type { ProviderProtocol } from '../../../ir/protocol.js';
import { buildGeminiRequest } from './build-request.js';
import { readGeminiError } from './read-error.js';
import { readGeminiResponse } from './read-response.js';
import { createGeminiStreamReader } from './read-stream.js';
import { asNumber, asRecord } from '../../../shared/lenient-json.js';

export const geminiProvider: ProviderProtocol = {
  id: 'gemini',
  buildRequest: buildGeminiRequest,
  readResponse: readGeminiResponse,
  createStreamReader: createGeminiStreamReader,
  readError: readGeminiError,
  // models/{m}:countTokens takes the whole generateContent request (provider-reference.md §3.7).
  countTokens: {
    build(request, target) {
      const call = buildGeminiRequest({ ...request, stream: false }, target);
      const model = target.model.replace(/^models\//, '');
      return { path: `/v1beta/models/${encodeURIComponent(model)}:countTokens`, body: { generateContentRequest: { model: `models/${model}`, ...call.body } } };
    },
    read: (body) => asNumber(asRecord(body).totalTokens),
  },
};
