// The Messages door: POST /v1/messages (and /v1/messages/count_tokens) for any routed model, so
// Claude Code and the Anthropic SDKs can use every provider's models. A model of a provider that
// speaks Anthropic's protocol takes the fast path: the client's bytes with only the model (and the
// key) changed, less the thinking blocks another provider minted.
import { FOREIGN_STATE_MARK, withoutForeignThinking } from '../../providers/protocols/anthropic/client/provider-state.js';
import { jsonObject } from '../http/json-body.js';
import { sseData } from '../http/sse.js';
import { newIdSuffix, type Door } from './door.js';

export const MESSAGES_DOOR: Door = {
  mode: 'messages',
  protocol: 'anthropic',
  path: '/v1/messages',
  client: async () => (await import('../../providers/protocols/anthropic/client/index.js')).anthropicClient,
  newId: () => `msg_${newIdSuffix()}`,
  withoutForeignState: (raw) => (raw.includes(FOREIGN_STATE_MARK) ? withoutForeignThinking(jsonObject(raw)) : undefined),
  streamError: (error, client) => `event: error\n${sseData(client.renderError(error).body)}`,
};
