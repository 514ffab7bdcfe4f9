// OpenAI Responses (`POST /v1/responses`) as an upstream of the hub: a request that came in by
// another door (Chat Completions, Messages, Gemini), sent statelessly to OpenAI.
import type { ProviderProtocol } from '../../../ir/protocol.js';
import { buildResponsesRequest } from './build-request.js';
import { readResponsesError } from './read-error.js';
import { readResponsesResponse } from './read-response.js';
import { createResponsesStreamReader } from './read-stream.js';

export const openaiResponsesProvider: ProviderProtocol = {
  id: 'openai-responses',
  buildRequest: buildResponsesRequest,
  readResponse: readResponsesResponse,
  createStreamReader: createResponsesStreamReader,
  readError: readResponsesError,
};
