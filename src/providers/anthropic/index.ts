// The Anthropic translating provider: OpenAI Chat Completions ⇄ Anthropic Messages. Pure.
import type { TranslatingProvider } from '../types.js';
import { fromAnthropicError } from './errors.js';
import { toAnthropicRequest } from './request.js';
import { fromAnthropicResponse } from './response.js';
import { createAnthropicStreamTranslator } from './stream.js';

export const anthropic: TranslatingProvider = {
  toRequest: toAnthropicRequest,
  fromResponse: fromAnthropicResponse,
  createStreamTranslator: createAnthropicStreamTranslator,
  fromError: fromAnthropicError,
};

export { toAnthropicRequest, ANTHROPIC_VERSION, JSON_OBJECT_INSTRUCTION } from './request.js';
export { fromAnthropicResponse, type AnthropicAssistantMessage } from './response.js';
export { createAnthropicStreamTranslator, type AnthropicChunkDelta } from './stream.js';
export { mapAnthropicStopReason } from './finish-reason.js';
export { fromAnthropicUsage } from './usage.js';
export { fromAnthropicError, fromAnthropicStreamError } from './errors.js';
export { defaultMaxTokens } from './max-tokens.js';
export { ANTHROPIC_IGNORED_FIELDS, ANTHROPIC_MAPPED_FIELDS, ANTHROPIC_REJECTED_FIELDS } from './fields.js';
