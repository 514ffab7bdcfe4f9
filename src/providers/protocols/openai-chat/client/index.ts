// OpenAI Chat Completions as a door of the hub (POST /v1/chat/completions for any model).
import type { ClientProtocol } from '../../../ir/protocol.js';
import { parseChatRequest } from './parse-request.js';
import { renderChatError } from './render-error.js';
import { renderChatCompletion } from './render-response.js';
import { createChatStreamRenderer } from './render-stream.js';

export const openaiChatClient: ClientProtocol = {
  id: 'openai-chat',
  parseRequest: parseChatRequest,
  renderResponse: renderChatCompletion,
  createStreamRenderer: createChatStreamRenderer,
  renderError: renderChatError,
};

export { SSE_DONE } from './render-stream.js';
export { CHAT_FIELD_POLICY, type FieldRule } from './field-policy.js';
