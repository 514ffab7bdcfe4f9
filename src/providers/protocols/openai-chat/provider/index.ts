// OpenAI Chat Completions as an upstream of the hub (a Messages request for a GPT model, say).
import type { ProviderProtocol } from '../../../ir/protocol.js';
import { buildChatRequest } from './build-request.js';
import { readChatError } from './read-error.js';
import { readChatResponse } from './read-response.js';
import { createChatStreamReader } from './read-stream.js';

export const openaiChatProvider: ProviderProtocol = {
  id: 'openai-chat',
  buildRequest: buildChatRequest,
  readResponse: readChatResponse,
  createStreamReader: createChatStreamReader,
  readError: readChatError,
};
