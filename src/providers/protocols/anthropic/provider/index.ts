// Anthropic Messages as an upstream of the hub: IR requests → Messages calls, and Anthropic's
// answers, streams and errors → the IR. Pure: no I/O, clock or globals.
import type { ProviderProtocol } from '../../../ir/protocol.js';
import { buildAnthropicRequest } from './build-request.js';
import { readAnthropicError } from './read-error.js';
import { readAnthropicResponse } from './read-response.js';
import { createAnthropicStreamReader } from './read-stream.js';

export const anthropicProvider: ProviderProtocol = {
  id: 'anthropic',
  buildRequest: buildAnthropicRequest,
  readResponse: readAnthropicResponse,
  createStreamReader: createAnthropicStreamReader,
  readError: readAnthropicError,
};
