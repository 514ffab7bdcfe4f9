// One request pipeline for the protocol hub's doors (Chat, Messages, Responses, Gemini): authenticate, read,
// parse, route, call, relay, account, and fail in the client's own shape. When the client's
// protocol is the provider's, the request takes the fast path: the client's body with only the
// model (and the key) changed, and the provider's answer relayed as it came. Otherwise the door's
// protocol module parses it into the IR, the provider's builds the upstream call, and the answer or
// stream comes back through the provider's reader and the door's renderer.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ClientProtocol, ProtocolId, RenderContext, Target } from '../../providers/ir/protocol.js';
import type { ProviderError } from '../../providers/ir/types.js';
import { estimateInputTokens } from '../../providers/ir/estimate-tokens.js';
import { loadedProviderSide, providerSide } from '../../providers/protocols/provider-sides.js';
import { resolveModel } from '../../providers/models.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { provider as descriptor, upstreamPath, upstreamProtocol, type KeyPlacement, type ProviderDescriptor } from '../../providers/registry.js';
import { targetOf } from '../../providers/target.js';
import { TranslationError } from '../../providers/types.js';
import { FOREIGN_STATE_MARK, withoutForeignThinking } from '../../providers/protocols/anthropic/client/provider-state.js';
import { validateChatRequest } from '../../providers/validate.js';
import { sendAnswerAsStream, streamsFromWholeAnswer } from './answer-stream.js';
import { chatSameProtocol } from './chat-same-protocol.js';
import { checkModelAllowed, extractKey } from '../access/auth.js';
import type { BodyCapture } from '../observe/body-log.js';
import type { DaemonContext } from '../context.js';
import type { RequestMode } from '../observe/events.js';
import { GatewayError } from '../http/errors.js';
import { readBody, upstreamQuery } from '../http/http-util.js';
import { createIrRelay, irUsageToTokens } from '../relay/ir-relay.js';
import { relayAsIs, type RelayOptions } from '../relay/passthrough.js';
import { RequestTracker, type RequestFacts } from '../observe/tracker.js';
import { callUpstream, type CallOutcome, type OpenStream } from '../relay/upstream-call.js';
import { createRelaySink } from '../relay/stream-relay.js';
import { gatewayCallHeaders, providerHeaders } from '../relay/upstream.js';

/** A door at the root: the protocol its clients speak, where they put the key, how ids look. */
export interface Door {
  /** How the monitor and the usage history name requests that came in by it. */
  readonly mode: RequestMode;
  readonly protocol: ProtocolId;
  /** The path clients post to; also the provider's path on the fast path (Gemini's names the model: its door builds it). */
  readonly path: string;
  readonly keyPlacements: readonly KeyPlacement[];
  /** The door's protocol module, loaded on first use. */
  readonly client: () => Promise<ClientProtocol>;
  /** An id for an answer whose provider gave none in this protocol's form. */
  readonly newId: () => string;
  /**
   * On the fast path: the body without opaque state another provider minted (a conversation that
   * moved to this door's own provider), or undefined when there is none (the common case, checked
   * on the raw bytes first).
   */
  readonly withoutForeignState?: (raw: Buffer) => Record<string, unknown> | undefined;
  /** Strict checks of the body before routing (TranslationError naming the field). */
  readonly validate?: (body: Record<string, unknown>) => void;
  /** Reads what the client asked of the stream's end (OpenAI Chat's stream_options.include_usage). */
  readonly includeUsage?: (body: Record<string, unknown>) => boolean;
  /**
   * The door's own same-protocol path, when the plain fast path would lose something (Chat asks a
   * stream's usage of the provider for accounting, then hides it from a client that did not).
   */
  readonly sameProtocol?: SameProtocol;
}

export type SameProtocol = (
  ctx: DaemonContext, provider: string, providerKey: string, res: ServerResponse, body: Record<string, unknown>,
  model: string, tracker: RequestTracker, capture: BodyCapture | undefined,
) => Promise<void>;

// Ids for answers whose provider gave none: unique per daemon run (a random prefix, then a count),
// without asking the OS for randomness on every request.
const ID_PREFIX = randomBytes(9).toString('hex');
let idCount = 0;
export const newIdSuffix = (): string => `${ID_PREFIX}${(++idCount).toString(16).padStart(6, '0')}`;

export const MESSAGES_DOOR: Door = {
  mode: 'messages',
  protocol: 'anthropic',
  path: '/v1/messages',
  keyPlacements: ['bearer', 'x-api-key'],
  client: async () => (await import('../../providers/protocols/anthropic/client/index.js')).anthropicClient,
  newId: () => `msg_${newIdSuffix()}`,
  withoutForeignState: (raw) => (raw.includes(FOREIGN_STATE_MARK) ? withoutForeignThinking(jsonObject(raw)) : undefined),
};

export const CHAT_DOOR: Door = {
  mode: 'unified',
  protocol: 'openai-chat',
  path: '/v1/chat/completions',
  keyPlacements: ['bearer'],
  client: async () => (await import('../../providers/protocols/openai-chat/client/index.js')).openaiChatClient,
  newId: () => `chatcmpl-${newIdSuffix()}`,
  validate: (body) => { validateChatRequest(body); },
  includeUsage: (body) => body.stream === true && (body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true,
  sameProtocol: chatSameProtocol,
};

// A door's module once loaded is kept, so a request after the first waits on nothing to get it.
const loadedClients = new Map<Door, ClientProtocol>();

async function clientOf(door: Door): Promise<ClientProtocol> {
  let m = loadedClients.get(door);
  if (!m) { m = await door.client(); loadedClients.set(door, m); }
  return m;
}

function asGatewayError(err: unknown): unknown {
  if (err instanceof TranslationError) {
    return new GatewayError(err.code === 'model_not_found' ? 'model_not_found' : 'invalid_request', err.message, err.param);
  }
  return err;
}

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string>, capture: BodyCapture | undefined): number {
  return sendJsonText(res, status, JSON.stringify(body), extra, capture);
}

function sendJsonText(res: ServerResponse, status: number, text: string, extra: Record<string, string>, capture: BodyCapture | undefined): number {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
  capture?.wrote(text);
  return text.length;
}

/** The body as a JSON object, else the 400 naming it. */
export function jsonObject(raw: Buffer): Record<string, unknown> {
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the body must be a JSON object');
    return parsed as Record<string, unknown>;
  } catch (e) {
    throw new GatewayError('invalid_request', `request body is not valid JSON: ${(e as Error).message}`, 'body');
  }
}

/**
 * Reads, authenticates and routes a door's request: what every handler here starts with.
 * `pathModel`: the model a door names in its URL (Gemini's `models/{model}:…`), else the body's.
 * Such a door's fast path reads nothing in the body, so it is not parsed there (`body` is then
 * empty): the bytes go as they came, and the provider answers a body it cannot read itself.
 */
export async function admit(ctx: DaemonContext, door: Door, req: IncomingMessage, query: string, facts: RequestFacts, pathModel?: string) {
  const shape = PROTOCOL_FACTS[door.protocol].errorShape;
  const record = ctx.keys.authenticate(extractKey(req, query ? new URLSearchParams(query) : null, door.keyPlacements), shape);
  facts.key = { id: record.id, name: record.name };
  const raw = await readBody(req, ctx.settings.bodyLimitBytes);
  let body = pathModel === undefined ? jsonObject(raw) : undefined;
  const asked = pathModel ?? body!.model;
  let route;
  try {
    if (typeof asked !== 'string' || asked === '') throw new GatewayError('invalid_request', 'model: is required', 'model');
    route = resolveModel(asked, ctx.settings.aliases);
  } catch (e) { throw asGatewayError(e); }
  facts.provider = route.provider;
  facts.model = route.model;
  checkModelAllowed(record, asked);
  const p = descriptor(route.provider);
  body ??= upstreamProtocol(p, route.model, door.protocol) === door.protocol ? {} : jsonObject(raw);
  const providerKey = ctx.providerKeys.cached(p.id) ?? await ctx.providerKeys.require(p.id);
  return { record, raw, body, model: route.model, p, providerKey };
}

export type Admitted = Awaited<ReturnType<typeof admit>>;

/**
 * The monitor's and the usage history's record of an admitted request, and its body capture
 * (when bodies are logged): every door handler's second step.
 */
export function trackDoor(
  ctx: DaemonContext, door: Door, a: Admitted, req: IncomingMessage, facts: RequestFacts,
  opts: { path?: string; stream?: boolean } = {},
): { tracker: RequestTracker; capture: BodyCapture | undefined } {
  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: a.record.id, keyName: a.record.name, mode: door.mode, provider: a.p.id, model: a.model,
    method: 'POST', path: opts.path ?? door.path, stream: opts.stream ?? a.body.stream === true, requestBytes: a.raw.length, headers: req.headers,
  });
  facts.tracked = true;
  return { tracker, capture: ctx.bodyLog?.begin(tracker, a.raw) };
}

export async function handleDoor(ctx: DaemonContext, door: Door, req: IncomingMessage, res: ServerResponse, query: string, facts: RequestFacts): Promise<void> {
  const admitted = await admit(ctx, door, req, query, facts);
  const { raw, body, model, p, providerKey } = admitted;
  const { tracker, capture } = trackDoor(ctx, door, admitted, req, facts);

  const protocol = upstreamProtocol(p, model, door.protocol);
  if (protocol === door.protocol) {
    // The door's own parser validates on the translated path; here nothing else reads the body.
    try { door.validate?.(body); } catch (e) { const ge = asGatewayError(e) as GatewayError; tracker.fail(ge.status, ge.code, ge.message); throw ge; }
    if (door.sameProtocol) await door.sameProtocol(ctx, p.id, providerKey, res, body, model, tracker, capture);
    else await fastPath(ctx, door, p, providerKey, req, res, query, raw, body, door.path, model, tracker, capture);
    return;
  }
  await translateThrough(ctx, door, p, providerKey, res, body, model, tracker, capture, { protocol, includeUsage: door.includeUsage?.(body) === true });
}

/**
 * `<door>/count_tokens` (Anthropic's POST /v1/messages/count_tokens): Anthropic's own endpoint on
 * the fast path, else countThrough.
 */
export async function handleCountTokens(ctx: DaemonContext, door: Door, req: IncomingMessage, res: ServerResponse, query: string, facts: RequestFacts): Promise<void> {
  const admitted = await admit(ctx, door, req, query, facts);
  const { raw, body, model, p, providerKey } = admitted;
  const path = `${door.path}/count_tokens`;
  const { tracker, capture } = trackDoor(ctx, door, admitted, req, facts, { path, stream: false });
  if (p.protocol === door.protocol) {
    await fastPath(ctx, door, p, providerKey, req, res, query, raw, body, path, model, tracker, capture);
    return;
  }
  await countThrough(ctx, door, p, providerKey, res, body, model, tracker, capture);
}

/**
 * A door's token count for a model of another protocol: the provider's own count where it has
 * one (Gemini's countTokens), else the documented estimate of estimate-tokens.ts, marked
 * `x-gateway-token-count: estimate`; answered in the door's shape (its module's countTokens).
 */
export async function countThrough(
  ctx: DaemonContext, door: Door, p: ProviderDescriptor, providerKey: string, res: ServerResponse,
  body: Record<string, unknown>, model: string, tracker: RequestTracker, capture: BodyCapture | undefined,
): Promise<void> {
  const target: Target = { provider: p.id, displayName: p.displayName, model };
  const fail = (ge: GatewayError): never => { tracker.fail(ge.status, ge.code, ge.message); throw ge; };
  const client = loadedClients.get(door) ?? await clientOf(door);
  const counting = client.countTokens;
  if (!counting) return fail(new GatewayError('not_found', `${door.path} has no token count`));
  let ir;
  try { ir = counting.parseRequest(body, target); } catch (e) { return fail(asGatewayError(e) as GatewayError); }
  const upstream = await providerSide(p.protocol);
  const counter = upstream?.countTokens;
  let tokens: number | undefined;
  let estimate = false;
  if (counter) {
    const call = counter.build(ir, target);
    let outcome: CallOutcome;
    try {
      outcome = await callUpstream(ctx.upstreams.dispatcher(p.id), {
        method: 'POST', path: upstreamPath(p, call.path), body: JSON.stringify(call.body),
        headers: gatewayCallHeaders(p.id, providerKey, { 'content-type': 'application/json', accept: 'application/json' }),
      }, res, undefined);
    } catch (err) { return fail(err instanceof GatewayError ? err : ctx.upstreams.failure(p.id, err)); }
    if (outcome.kind === 'client_closed') { tracker.fail(499, 'client_closed', 'client closed the connection'); return; }
    if (outcome.kind !== 'answer') return fail(ctx.upstreams.failure(p.id, outcome.kind === 'cut' ? outcome.err : new Error('no answer'), 'response'));
    if (outcome.status >= 400) {
      sendProviderError(res, client, upstream!.readError(outcome.status, outcome.text, target), outcome.headers, tracker, capture);
      return;
    }
    try { tokens = counter.read(JSON.parse(outcome.text)); } catch { tokens = undefined; }
  }
  if (tokens === undefined) { tokens = estimateInputTokens(ir); estimate = true; }
  tracker.wrote(sendJson(res, 200, counting.render(tokens), estimate ? { 'x-gateway-token-count': 'estimate' } : {}, capture));
  tracker.finish(200, {}, model);
}

/**
 * A provider's error answer in the door's shape, its status kept; a `retry-after` it sent is
 * kept as a header and given to the renderer (Google's RetryInfo carries the same delay).
 */
function sendProviderError(
  res: ServerResponse, client: ClientProtocol, read: ProviderError, headers: IncomingHttpHeaders,
  tracker: RequestTracker, capture: BodyCapture | undefined,
): void {
  const header = headers['retry-after'];
  const retryAfter = typeof header === 'string' && header !== '' ? header : read.retryAfter;
  const error: ProviderError = retryAfter === read.retryAfter ? read : { ...read, retryAfter: retryAfter! };
  const rendered = client.renderError(error);
  sendJson(res, rendered.status, rendered.body, retryAfter === undefined ? {} : { 'retry-after': retryAfter }, capture);
  tracker.fail(rendered.status, error.code ?? error.kind, error.message);
}

/**
 * Same protocol on both sides: the client's own body, with only the model changed, to the
 * provider's own path; its headers (anthropic-beta and the rest) go too, less credentials and
 * hop-by-hop ones; the answer comes back byte for byte.
 */
export async function fastPath(
  ctx: DaemonContext, door: Door, p: ProviderDescriptor, providerKey: string, req: IncomingMessage, res: ServerResponse,
  query: string, raw: Buffer, body: Record<string, unknown>, providerPath: string, model: string, tracker: RequestTracker, capture: BodyCapture | undefined,
  stream = body.stream === true,
  onAnswered?: RelayOptions['onAnswered'],
): Promise<void> {
  // A protocol that names the model in the path (Gemini) has it in providerPath, not the body.
  const inBody = PROTOCOL_FACTS[door.protocol].modelIn === 'body';
  const cleaned = door.withoutForeignState?.(raw);
  const out = cleaned ? Buffer.from(JSON.stringify(inBody ? { ...cleaned, model } : cleaned), 'utf8') : inBody ? withModel(raw, body, model) : raw;
  const headers = providerHeaders(p.id, req.headers, providerKey);
  headers['content-length'] = String(out.length);
  delete headers['transfer-encoding'];
  const q = upstreamQuery(query);
  const path = upstreamPath(p, `${providerPath}${q ? `?${q}` : ''}`);
  await relayAsIs(ctx, p.id, res, tracker, { stream, model, capture, protocol: door.protocol, onAnswered }, { method: 'POST', path, headers, body: out });
}

/**
 * The client's bytes with only the model changed: untouched when the name needs no change (a bare
 * `claude-…`), else the one `"model": "<name>"` spliced; re-serialised only when the name appears
 * as a `model` value more than once (a nested object could carry the same key and value).
 */
export function withModel(raw: Buffer, body: Record<string, unknown>, model: string): Buffer {
  if (body.model === model) return raw;
  const value = Buffer.from(JSON.stringify(body.model), 'utf8');
  const at = findModelValue(raw, value, 0);
  if (at === -1 || findModelValue(raw, value, at + value.length) !== -1) return Buffer.from(JSON.stringify({ ...body, model }), 'utf8');
  return Buffer.concat([raw.subarray(0, at), Buffer.from(JSON.stringify(model), 'utf8'), raw.subarray(at + value.length)]);
}

const MODEL_KEY = Buffer.from('"model"');

/** Where `value` starts as the value of a `"model"` key (whitespace allowed around the colon), from `from`. */
function findModelValue(raw: Buffer, value: Buffer, from: number): number {
  for (let k = raw.indexOf(MODEL_KEY, from); k !== -1; k = raw.indexOf(MODEL_KEY, k + 1)) {
    let i = k + MODEL_KEY.length;
    while (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d) i++;
    if (raw[i] !== 0x3a) continue; // ':'
    i++;
    while (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d) i++;
    if (raw.subarray(i, i + value.length).equals(value)) return i;
  }
  return -1;
}

export interface TranslateOptions {
  /** The protocol to call the provider in (its main one unless the model or door says otherwise). */
  protocol?: ProtocolId;
  /** The client asked for usage in its stream (OpenAI Chat's stream_options). */
  includeUsage?: boolean;
  /** Request fields the door's answers repeat (RenderContext.echo). */
  echo?: Record<string, unknown>;
  /** The whole rendered answer, once, for a door that keeps answers (RenderContext.onFinal). */
  onFinal?: (answer: Record<string, unknown>, json: string) => void;
  /** How the stream is framed (RenderContext.streamFormat): Gemini's JSON array is sent as JSON. */
  streamFormat?: 'sse' | 'json-array';
}

/**
 * Through the IR: the door's module parses, the provider's builds the call; its answer, stream or
 * error comes back through the provider's reader and the door's renderer.
 */
export async function translateThrough(
  ctx: DaemonContext, door: Door, p: ProviderDescriptor, providerKey: string, res: ServerResponse,
  body: Record<string, unknown>, model: string, tracker: RequestTracker, capture: BodyCapture | undefined,
  opts: TranslateOptions = {},
): Promise<void> {
  const protocol = opts.protocol ?? p.protocol;
  const target = targetOf(p, model, protocol);
  const quirks = target.quirks;
  const fail = (ge: GatewayError): never => { tracker.fail(ge.status, ge.code, ge.message); throw ge; };
  const client = loadedClients.get(door) ?? await clientOf(door);
  const upstream = loadedProviderSide(protocol) ?? await providerSide(protocol);
  let call;
  let wholeAnswer = false;
  try {
    const ir = client.parseRequest(body, target);
    wholeAnswer = quirks !== undefined && streamsFromWholeAnswer(quirks, ir.stream, ir.tools.length > 0);
    call = upstream.buildRequest(wholeAnswer ? { ...ir, stream: false } : ir, target);
  } catch (e) { fail(asGatewayError(e) as GatewayError); }
  const stream = body.stream === true && !wholeAnswer;
  // A model of another provider than the door's is shown as `provider/<its id>` (the door's own
  // provider never gets here: its requests take the fast path).
  const rctx: RenderContext = { model: `${p.id}/${model}`, modelPrefix: `${p.id}/`, created: ctx.now(), fallbackId: door.newId(), includeUsage: opts.includeUsage === true };
  if (opts.echo) rctx.echo = opts.echo;
  if (opts.onFinal) rctx.onFinal = opts.onFinal;
  if (opts.streamFormat) rctx.streamFormat = opts.streamFormat;
  const streamType = opts.streamFormat === 'json-array' ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8';

  const openStream: OpenStream | undefined = !stream ? undefined : (done) => {
    res.writeHead(200, { 'content-type': streamType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.flushHeaders();
    const relay = createIrRelay(upstream.createStreamReader(target), client.createStreamRenderer(rctx));
    return createRelaySink(ctx, p.id, res, tracker, relay, model, capture, done);
  };
  let outcome: CallOutcome;
  try {
    outcome = await callUpstream(ctx.upstreams.dispatcher(p.id), {
      method: 'POST', path: upstreamPath(p, call!.path), body: JSON.stringify(call!.body),
      headers: gatewayCallHeaders(p.id, providerKey, { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...call!.headers }),
    }, res, openStream);
  } catch (err) {
    return fail(err instanceof GatewayError ? err : ctx.upstreams.failure(p.id, err));
  }
  if (outcome.kind === 'client_closed') { tracker.fail(499, 'client_closed', 'client closed the connection'); return; }
  if (outcome.kind === 'streamed') return;
  if (outcome.kind === 'cut') return fail(ctx.upstreams.failure(p.id, outcome.err, 'response'));

  if (outcome.status >= 400) {
    sendProviderError(res, client, upstream.readError(outcome.status, outcome.text, target), outcome.headers, tracker, capture);
    return;
  }
  let json: unknown;
  try { json = JSON.parse(outcome.text); } catch {
    return fail(new GatewayError('upstream_unreachable', `${p.displayName} sent a response that is not JSON`));
  }
  const answer = upstream.readResponse(json, target);
  if (wholeAnswer) {
    sendAnswerAsStream(res, client.createStreamRenderer(rctx), answer, tracker, model, capture);
    return;
  }
  const rendered = client.renderResponse(answer, answer.model ? { ...rctx, model: `${rctx.modelPrefix}${answer.model}` } : rctx);
  const text = JSON.stringify(rendered);
  opts.onFinal?.(rendered as Record<string, unknown>, text);
  tracker.wrote(sendJsonText(res, 200, text, {}, capture));
  tracker.finish(200, irUsageToTokens(answer.usage), answer.model ?? model);
}
