// The Responses door at the root: POST /v1/responses for any routed model, and the stored
// answers behind it (GET and DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items).
// A provider that speaks Responses (OpenAI) takes the fast path: the body goes to its
// /v1/responses as it came (model and key changed), and the provider keeps its own state. Other
// models go through the IR; their answers are kept in the gateway's store unless the client says
// `store: false`, so `previous_response_id` chains work as at OpenAI: the stored conversation is
// put in front of the new input, and the provider sees the same conversation a client resending
// its items would send. The runner (runner.ts) runs POST /v1/responses; `prepare` is this door's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { provider as descriptor, upstreamPath } from '../../providers/registry.js';
import { extractKey } from '../access/auth.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { readBody, upstreamQuery } from '../http/http-util.js';
import { sendJson } from '../http/send.js';
import { sseData } from '../http/sse.js';
import { RequestTracker } from '../observe/tracker.js';
import { relayAsIs } from '../relay/relay-as-is.js';
import { providerHeaders } from '../relay/upstream.js';
import type { KeyRecord } from '../store/keys.js';
import type { Chain, StoredResponse } from '../store/responses.js';
import { newIdSuffix, type Door, type DoorRun, type Obj } from './door.js';
import { peerOf } from '../http/peer.js';

export const RESPONSES_DOOR: Door = {
  mode: 'responses',
  protocol: 'openai-responses',
  path: '/v1/responses',
  client: async () => (await import('../../providers/protocols/openai-responses/client/index.js')).openaiResponsesClient,
  newId: () => `resp_${newIdSuffix()}`,
  prepare: (run) => prepare(run),
  heldInput: (run) => heldInput(run),
  // OpenAI's own `error` event (the stream's response object is the provider's, not the gateway's to fail).
  streamError: (error) => `event: error\n${sseData({ type: 'error', code: error.code ?? error.kind, message: error.message, param: null })}`,
};

/** `input` as a list of items: a string is one user message, as OpenAI stores it. */
function inputItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return Array.isArray(input) ? input : [];
}

/**
 * The chain a request's previous_response_id names, read once for the request: its limits'
 * reservation and each attempt ask (in team mode each read is a query, and one that finds nothing
 * waits for another daemon's insert: store/pg-responses.ts).
 */
const chains = new WeakMap<Obj, Promise<Chain | undefined>>();
function chainOf(run: DoorRun, previousId: string): Promise<Chain | undefined> {
  let chain = chains.get(run.clientBody);
  if (!chain) chains.set(run.clientBody, chain = run.ctx.responses.conversation(previousId, run.key.id));
  return chain;
}

/**
 * What a request continues by reference, for its key's limits: the bytes of a chain the gateway
 * holds; Infinity for one its provider keeps (or an OpenAI `conversation`), whose size only it knows.
 */
async function heldInput(run: DoorRun): Promise<number> {
  const { clientBody: body } = run;
  const previousId = typeof body.previous_response_id === 'string' && body.previous_response_id !== '' ? body.previous_response_id : null;
  if (body.conversation !== undefined && body.conversation !== null) return Infinity;
  if (previousId === null) return 0;
  const chain = await chainOf(run, previousId);
  // Not ours: OpenAI may keep it (it goes there as it is), or the attempt refuses it as not found.
  if (chain === undefined || !('items' in chain)) return Infinity;
  return Buffer.byteLength(JSON.stringify(chain.items));
}

/**
 * Before the path is chosen: a `previous_response_id` chain the gateway holds is put in front of
 * the input (on any provider, OpenAI's included: it cannot read the gateway's chains); one OpenAI
 * keeps goes on to OpenAI as it is; and what happens to the answer (kept unless `store: false`).
 */
async function prepare(run: DoorRun): Promise<void> {
  const { ctx, clientBody: body, key, route } = run;
  const previousId = typeof body.previous_response_id === 'string' && body.previous_response_id !== '' ? body.previous_response_id : null;
  const own = inputItems(body.input);
  // A chain the gateway holds (its answers came from a model that is not OpenAI's), or one OpenAI keeps.
  const chain = previousId === null ? undefined : await chainOf(run, previousId);
  const prior = chain && 'items' in chain ? chain.items : undefined;
  const store = body.store !== false;

  if (route.protocol === RESPONSES_DOOR.protocol) {
    // The provider keeps the answer; the gateway records whose it is, for GET /v1/responses/{id}.
    if (store) run.extras.onAnswered = (tap) => { const id = tap.responseId(); if (id !== null) ctx.responses.putHeld(id, key.id, route.p.id); };
    // OpenAI keeps its own chains; one of ours moving to OpenAI is sent whole instead.
    if (prior !== undefined) {
      const whole: Obj = { ...body, input: [...prior, ...own] };
      delete whole.previous_response_id;
      run.body = whole;
      run.raw = Buffer.from(JSON.stringify(whole), 'utf8');
    }
    return;
  }
  if (chain && 'heldBy' in chain) {
    const holder = descriptor(chain.heldBy).displayName;
    throw new GatewayError('invalid_request', `previous_response_id: '${previousId}' is kept by ${holder} (it was made on one of its models), so the gateway cannot give it to ${route.p.displayName}; continue it on one of ${holder}'s models, or send its items as input`, 'previous_response_id');
  }
  if (previousId !== null && prior === undefined) {
    throw new GatewayError('previous_response_not_found', `Previous response with id '${previousId}' not found.`, 'previous_response_id');
  }
  if (prior) run.body = { ...body, input: [...prior, ...own] };
  run.extras.render = {
    echo: { ...body, store },
    onFinal: (answer, json) => {
      if (!store || typeof answer.id !== 'string') return;
      ctx.responses.put({
        id: answer.id, keyId: key.id, createdAt: ctx.clock(), previousId,
        input: withItemIds(own, answer.id), output: Array.isArray(answer.output) ? answer.output : [], response: answer, responseJson: json,
      });
    },
  };
}

/** Input items as input_items lists them: each with an id (the client's, else one derived from the response's). */
function withItemIds(items: unknown[], responseId: string): unknown[] {
  const base = responseId.startsWith('resp_') ? responseId.slice(5) : responseId;
  return items.map((item, i) => {
    if (typeof item !== 'object' || item === null || typeof (item as Obj).id === 'string') return item;
    const o = item as Obj;
    const type = o.type ?? 'message';
    const prefix = type === 'message' ? 'msg' : type === 'function_call_output' ? 'fco' : 'item';
    return { id: `${prefix}_${base}i${i.toString(16).padStart(2, '0')}`, ...(o.type === undefined ? { type: 'message' } : {}), ...o };
  });
}

/** `/v1/responses/{id}` and `/v1/responses/{id}/input_items`; `rest` is what follows `/v1/responses/`. */
export async function handleStoredResponse(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, rest: string, query: string): Promise<void> {
  const record = ctx.keys.authenticate(extractKey(req, null, PROTOCOL_FACTS[RESPONSES_DOOR.protocol].clientKeyPlacements), 'openai');
  if (!req.complete) await readBody(req, ctx.settings.bodyLimitBytes);
  const [id = '', sub, ...more] = rest.split('/');
  if (more.length > 0 || (sub !== undefined && sub !== 'input_items')) throw new GatewayError('not_found', `no route for ${req.method} /v1/responses/${rest}`);
  if (sub === 'input_items' ? req.method !== 'GET' : req.method !== 'GET' && req.method !== 'DELETE') {
    throw new GatewayError('method_not_allowed', sub === 'input_items' ? 'use GET for /v1/responses/{id}/input_items' : 'use GET or DELETE for /v1/responses/{id}');
  }
  const stored = await ctx.responses.get(id, record.id);
  if (!stored) throw new GatewayError('response_not_found', `Response with id '${id}' not found.`);
  if (stored.heldBy !== undefined) {
    await fromHolder(ctx, req, res, record, stored.heldBy, rest, query);
    if (req.method === 'DELETE' && res.statusCode < 300) await ctx.responses.delete(id, record.id);
    return;
  }
  if (sub === 'input_items') sendJson(res, 200, listItems(stored, new URLSearchParams(query)));
  else if (req.method === 'DELETE') {
    await ctx.responses.delete(id, record.id);
    sendJson(res, 200, { id, object: 'response', deleted: true });
  } else {
    if (new URLSearchParams(query).get('stream') === 'true') throw new GatewayError('invalid_request', 'stream=true: replaying a stored response as a stream is not supported by the gateway; retrieve it without stream', 'stream');
    sendJson(res, 200, stored.response);
  }
}

/**
 * A stored-response call for an answer its provider keeps (made on one of OpenAI's models through
 * the fast path): sent to the provider's own /v1/responses/… as it came, its answer relayed untouched.
 */
async function fromHolder(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, record: KeyRecord, heldBy: string, rest: string, query: string): Promise<void> {
  const p = descriptor(heldBy);
  const providerKey = ctx.providerKeys.cached(p.id) ?? await ctx.providerKeys.require(p.id);
  const path = `${RESPONSES_DOOR.path}/${rest}`;
  const stream = new URLSearchParams(query).get('stream') === 'true';
  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: RESPONSES_DOOR.mode, provider: p.id, model: null,
    method: req.method ?? 'GET', path, stream, requestBytes: 0, headers: req.headers, client: peerOf(req).client,
  });
  const headers = providerHeaders(p.id, req.headers, providerKey);
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  const q = upstreamQuery(query);
  await relayAsIs(ctx, p.id, res, tracker, { stream, model: null, capture: undefined, protocol: RESPONSES_DOOR.protocol }, { method: req.method as 'GET' | 'DELETE', path: upstreamPath(p, `${path}${q ? `?${q}` : ''}`), headers });
}

/** OpenAI's list page: `order` (default desc), `after` (an item id), `limit` (1–100, default 20). */
function listItems(stored: StoredResponse, q: URLSearchParams): Obj {
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_request', 'order must be "asc" or "desc"', 'order');
  const limitText = q.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new GatewayError('invalid_request', 'limit must be a whole number from 1 to 100', 'limit');
  let items = order === 'asc' ? [...stored.input] : [...stored.input].reverse();
  const after = q.get('after');
  if (after !== null) {
    const at = items.findIndex((it) => (it as Obj | null)?.id === after);
    if (at === -1) throw new GatewayError('invalid_request', `after: no input item '${after}' in this response`, 'after');
    items = items.slice(at + 1);
  }
  const page = items.slice(0, limit);
  const idOf = (it: unknown): string | null => ((it as Obj | null)?.id as string | undefined) ?? null;
  return { object: 'list', data: page, first_id: page.length ? idOf(page[0]) : null, last_id: page.length ? idOf(page[page.length - 1]) : null, has_more: items.length > limit };
}

