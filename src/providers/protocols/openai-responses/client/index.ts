// The OpenAI Responses API as a door of the hub (POST /v1/responses for models that are not
// OpenAI's). Errors have Chat's shape: both are OpenAI's `{"error":{message,type,param,code}}`.
import type { ClientProtocol } from '../../../ir/protocol.js';
import { renderChatError } from '../../openai-chat/client/render-error.js';
import { parseResponsesRequest } from './parse-request.js';
import { renderResponse } from './render-response.js';
import { createResponsesStreamRenderer } from './render-stream.js';

export const openaiResponsesClient: ClientProtocol = {
  id: 'openai-responses',
  parseRequest: parseResponsesRequest,
  renderResponse,
  createStreamRenderer: createResponsesStreamRenderer,
  renderError: renderChatError,
};
