// The Gemini door at the root: POST /v1beta/models/{model}:generateContent, :streamGenerateContent
// (SSE with `?alt=sse`, else Google's JSON array) and :countTokens, for any routed model; /v1/
// works the same. The model comes from the URL (model-routes.ts decodes it), the key from where
// Google's clients put it. Gemini models take the fast path: the body as it came (less the
// signatures another provider's state rode in), the key swapped, the query kept but for `key`, to
// the same method and API version at Gemini. Other models go through the IR, answered in Google's
// shapes, errors included.
import { FOREIGN_SIGNATURE_MARK, withoutForeignSignatures } from '../../providers/protocols/gemini/client/thought-signature.js';
import { GatewayError } from '../http/errors.js';
import { jsonObject } from '../http/json-body.js';
import { sseData } from '../http/sse.js';
import { newIdSuffix, type Door, type DoorCall } from './door.js';
import type { GeminiMethod, ModelRoute } from './model-routes.js';

export const GEMINI_DOOR: Door = {
  mode: 'gemini',
  protocol: 'gemini',
  path: '/v1beta/models/{model}:generateContent',
  client: async () => (await import('../../providers/protocols/gemini/client/index.js')).geminiClient,
  // Google's response ids are opaque text without a prefix.
  newId: () => newIdSuffix(),
  withoutForeignState: (raw) => (raw.includes(FOREIGN_SIGNATURE_MARK) ? withoutForeignSignatures(jsonObject(raw)) : undefined),
  // Google's JSON-array stream cannot take an event after the provider's own bytes: it is cut instead.
  streamError: (error, client, call) => (call.streamFormat === 'sse' ? sseData(client.renderError(error).body) : undefined),
  // Google answers a model it does not serve with 404 NOT_FOUND, and its clients read it so.
  modelNotFound: (asked, err) => new GatewayError('unknown_model', `models/${asked} is not found: ${err.message}`, 'model'),
};

/**
 * A Gemini model id as it may stand in an upstream path: one segment of letters, digits, `.`, `_`
 * and `-` (gemini-3.5-flash, gemma-3-27b-it), never `..`. Anything else cannot be Google's.
 */
const PLAIN_GEMINI_ID = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?$/;

export function plainGeminiId(model: string): string {
  if (!PLAIN_GEMINI_ID.test(model) || model.includes('..')) {
    throw new GatewayError('invalid_request', `"${model}" is not a Gemini model id (letters, digits, ".", "_" and "-")`, 'model');
  }
  return model;
}

/** What a Gemini URL says of its request: the model, the method (count or generate, streamed or not), the framing. */
export function geminiCall(route: ModelRoute & { id: string; method: GeminiMethod }, path: string, query: string): DoorCall {
  return {
    model: route.id,
    path,
    count: route.method === 'countTokens',
    stream: route.method === 'streamGenerateContent',
    providerPath: (model) => `/${route.version}/models/${plainGeminiId(model)}:${route.method}`,
    streamFormat: query !== '' && new URLSearchParams(query).get('alt') === 'sse' ? 'sse' : 'json-array',
  };
}
