// Anthropic Messages as a door of the hub (POST /v1/messages for models that are not Anthropic's).
import type { ClientProtocol } from '../../../ir/protocol.js';
import { parseMessagesRequest } from './parse-request.js';
import { renderAnthropicError } from './render-error.js';
import { renderMessage } from './render-response.js';
import { createMessagesStreamRenderer } from './render-stream.js';

export const anthropicClient: ClientProtocol = {
  id: 'anthropic',
  parseRequest: parseMessagesRequest,
  renderResponse: renderMessage,
  createStreamRenderer: createMessagesStreamRenderer,
  renderError: renderAnthropicError,
  countTokens: {
    // A count request has no max_tokens; the parser wants one, and it changes no count.
    parseRequest: (body, target) => parseMessagesRequest({ max_tokens: 1, ...(body as object), stream: false }, target),
    render: (tokens) => ({ input_tokens: tokens }),
  },
};
