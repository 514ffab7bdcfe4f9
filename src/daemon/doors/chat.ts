// The Chat door: POST /v1/chat/completions for any routed model. A provider that speaks Chat
// Completions itself takes the fast path with two edits: a stream always asks for usage (for
// accounting), and the client sees that usage only if it asked for it; and the provider's quirk
// profile (apply-quirks.ts, the same function the translated path uses) fixes what it departs from.
import { hideUsage } from '../../providers/protocols/openai-chat/client/hide-usage.js';
import { applyChatQuirks } from '../../providers/protocols/openai-chat/provider/apply-quirks.js';
import { validateChatRequest } from '../../providers/validate.js';
import { rewriteEvents, sseData } from '../http/sse.js';
import { newIdSuffix, type Door, type Obj } from './door.js';

/** The client asked for the usage chunk itself. */
const includeUsage = (body: Obj): boolean =>
  body.stream === true && (body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true;

export const CHAT_DOOR: Door = {
  mode: 'unified',
  protocol: 'openai-chat',
  path: '/v1/chat/completions',
  client: async () => (await import('../../providers/protocols/openai-chat/client/index.js')).openaiChatClient,
  newId: () => `chatcmpl-${newIdSuffix()}`,
  validate: (body) => { validateChatRequest(body); },
  includeUsage,
  editBody: (body, route) => {
    let out = body;
    if (body.stream === true && !includeUsage(body)) {
      out = { ...body, stream_options: { ...(body.stream_options as Obj | null | undefined ?? {}), include_usage: true } };
    }
    if (route.target.quirks) out = applyChatQuirks(out, route.target.quirks, route.model, route.p.displayName);
    return out === body ? undefined : out;
  },
  rewriteStream: (body) => (includeUsage(body) ? undefined : rewriteEvents(hideUsage)),
  streamError: (error, client) => sseData(client.renderError(error).body),
};
