// The Gemini door at the root: POST /v1beta/models/{model}:generateContent, :streamGenerateContent
// (SSE with `?alt=sse`, else Google's JSON array) and :countTokens, for any routed model; /v1/
// works the same. The model comes from the URL (model-routes.ts decodes it), the key from where
// Google's clients put it. Gemini models take the fast path: the body as it came (less the
// signatures another provider's state rode in), the key swapped, the query kept but for `key`, to
// the same method and API version at Gemini. Other models go through the IR (translateThrough,
// countThrough), answered in Google's shapes, errors included.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FOREIGN_SIGNATURE_MARK, withoutForeignSignatures } from '../../providers/protocols/gemini/client/thought-signature.js';
import { upstreamProtocol } from '../../providers/registry.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import type { ModelRoute, GeminiMethod } from './model-routes.js';
import { admit, countThrough, fastPath, jsonObject, newIdSuffix, trackDoor, translateThrough, type Door } from './pipeline.js';
import type { RequestFacts } from '../observe/tracker.js';

export const GEMINI_DOOR: Door = {
  mode: 'gemini',
  protocol: 'gemini',
  path: '/v1beta/models/{model}:generateContent',
  // x-goog-api-key (both SDKs, gemini-cli), `?key=` (REST samples), Bearer (OpenAI-minded tools).
  keyPlacements: ['x-goog-api-key', 'query', 'bearer'],
  client: async () => (await import('../../providers/protocols/gemini/client/index.js')).geminiClient,
  // Google's response ids are opaque text without a prefix.
  newId: () => newIdSuffix(),
  withoutForeignState: (raw) => (raw.includes(FOREIGN_SIGNATURE_MARK) ? withoutForeignSignatures(jsonObject(raw)) : undefined),
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

const altSse = (query: string): boolean => query !== '' && new URLSearchParams(query).get('alt') === 'sse';

export async function handleGemini(
  ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, route: ModelRoute & { id: string; method: GeminiMethod },
  path: string, query: string, facts: RequestFacts,
): Promise<void> {
  const door = GEMINI_DOOR;
  let admitted;
  try {
    admitted = await admit(ctx, door, req, query, facts, route.id);
  } catch (e) {
    // Google answers a model it does not serve with 404 NOT_FOUND, and clients read it so.
    if (e instanceof GatewayError && e.code === 'model_not_found') throw new GatewayError('unknown_model', `models/${route.id} is not found: ${e.message}`, 'model');
    throw e;
  }
  const { raw, body, model, p, providerKey } = admitted;
  const stream = route.method === 'streamGenerateContent';
  const { tracker, capture } = trackDoor(ctx, door, admitted, req, facts, { path, stream });
  const fail = (ge: GatewayError): never => { tracker.fail(ge.status, ge.code, ge.message); throw ge; };

  const protocol = upstreamProtocol(p, model, door.protocol);
  if (protocol === door.protocol) {
    let id = '';
    try { id = plainGeminiId(model); } catch (e) { fail(e as GatewayError); }
    const providerPath = `/${route.version}/models/${id}:${route.method}`;
    await fastPath(ctx, door, p, providerKey, req, res, query, raw, body, providerPath, model, tracker, capture, stream);
    return;
  }
  if (route.method === 'countTokens') {
    await countThrough(ctx, door, p, providerKey, res, body, model, tracker, capture);
    return;
  }
  // The module reads the stream flag from the body (the method says it here).
  await translateThrough(ctx, door, p, providerKey, res, { ...body, stream }, model, tracker, capture, {
    protocol, streamFormat: altSse(query) ? 'sse' : 'json-array',
  });
}
