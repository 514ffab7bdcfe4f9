// Native endpoints (/anthropic/*, /openai/*, /gemini/*, /<configured provider>/*): the request body
// streams upstream byte for byte, only the credential is swapped, and the provider's status, headers and body stream back as
// they arrive. A client that goes away aborts the upstream request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ProviderId } from '../../providers/types.js';
import { checkModelAllowed, extractKey } from '../access/auth.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { provider as descriptor, upstreamPath, type ProviderDescriptor } from '../../providers/registry.js';
import type { ProtocolId } from '../../providers/ir/protocol.js';
import type { DaemonContext } from '../context.js';
import { declaredLength, limitedBody, readBody, upstreamQuery } from '../http/http-util.js';
import { RequestTracker, type RequestFacts } from '../observe/tracker.js';
import { sessionOf } from '../routing/sessions.js';
import { relayAsIs } from './relay-as-is.js';
import { GatewayError } from '../http/errors.js';
import { continuesProviderConversation, isPriced, worstCase } from '../limits/estimate.js';
import { limitOf, unnamedModel, unpriced } from '../limits/limiter.js';
import type { KeyRecord } from '../store/keys.js';
import { providerHeaders } from './upstream.js';
import { peerOf } from '../http/peer.js';


/** The model a native request names: in the path (Gemini's protocol) or in the JSON body. */
function nativeModel(modelIn: 'body' | 'path', nativePath: string, body: Buffer | undefined): string | null {
  if (modelIn === 'path') {
    const m = /\/models\/([^/:]+)/.exec(nativePath);
    return m ? decodeURIComponent(m[1]!) : null;
  }
  if (!body || body.length === 0) return null;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { model?: unknown };
    return typeof parsed.model === 'string' ? parsed.model : null;
  } catch { return null; }
}

export async function handleNative(
  ctx: DaemonContext, provider: ProviderId, req: IncomingMessage, res: ServerResponse,
  nativePath: string, rawQuery: string, seen: RequestFacts,
): Promise<void> {
  const query = rawQuery ? new URLSearchParams(rawQuery) : null;
  const p = descriptor(provider);
  const wire = PROTOCOL_FACTS[p.protocol];
  const record = ctx.keys.authenticate(extractKey(req, query, wire.clientKeyPlacements), wire.errorShape);
  seen.key = { id: record.id, name: record.name };
  const limit = ctx.settings.bodyLimitBytes;
  const length = declaredLength(req, limit);

  // Only keys with a model allow-list or limits make us look at the body; the original bytes still go upstream.
  let buffered: Buffer | undefined;
  let model: string | null = wire.modelIn === 'path' ? nativeModel('path', nativePath, undefined) : null;
  seen.model = model;
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  if (record.models || record.limits) {
    if (hasBody && (wire.modelIn === 'body' || record.limits)) buffered = await readBody(req, limit);
    model = nativeModel(wire.modelIn, nativePath, buffered);
    seen.model = model;
    if (record.models) checkModelAllowed(record, model);
  }
  const providerKey = ctx.providerKeys.cached(provider) ?? await ctx.providerKeys.require(provider);

  const headers = providerHeaders(provider, req.headers, providerKey);
  // A `key` parameter is a client credential on every prefix: never forwarded.
  const q = upstreamQuery(rawQuery);
  // The path under the prefix, mapped onto the provider's base URL (its path written once).
  const path = upstreamPath(p, q ? `${nativePath}?${q}` : nativePath);
  const stream = /[:?&]alt=sse|streamGenerateContent/.test(path) || (req.headers.accept ?? '').includes('text/event-stream');
  // logBodies (debugging only): the body is read whole to keep a copy, and that buffer goes upstream.
  const bodyLog = ctx.bodyLog;
  if (bodyLog && hasBody && !buffered) buffered = await readBody(req, limit);

  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'native', provider, model,
    method: req.method ?? 'GET', path: nativePath, stream, requestBytes: length ?? buffered?.length ?? 0, headers: req.headers, client: peerOf(req).client,
    // The body streams through unread: a session named in a header only.
    session: sessionOf(req.headers, {}),
  }, ctx.startSpan);
  seen.tracked = true;
  // From here the record is the tracker's: whatever throws still ends it (and settles its claim).
  try {
    if (record.limits) await reserveNative(ctx, record, tracker, p, answerProtocol(p, nativePath), model, nativePath, req.method ?? 'GET', buffered);
    const traceparent = tracker.traceparent();
    if (traceparent) headers.traceparent = traceparent;
    const capture = bodyLog?.begin(tracker, buffered);
    const body = !hasBody ? undefined : buffered ?? (length !== undefined ? req : Readable.from(limitedBody(req, limit)));
    await relayAsIs(ctx, provider, res, tracker, { stream, model, capture, protocol: answerProtocol(p, nativePath) }, { method: (req.method ?? 'GET') as 'GET', path, headers, body });
  } catch (e) {
    if (e instanceof GatewayError) tracker.fail(e.status, e.code, e.message, {}, limitOf(e));
    else tracker.fail(500, 'internal_error', 'internal gateway error');
    throw e;
  }
}

/** Native calls that cost nothing whatever their body: model lists and lookups, token counts. */
const FREE_NATIVE = /(?:\/count_tokens|:countTokens)$/;

/**
 * A key with limits reserves a native request's worst case too (the provider's own usage settles
 * it), so no path bypasses a budget; the refusal ends the request's record.
 */
async function reserveNative(
  ctx: DaemonContext, key: KeyRecord, tracker: RequestTracker, p: ProviderDescriptor, protocol: ProtocolId, model: string | null,
  nativePath: string, method: string, body: Buffer | undefined,
): Promise<void> {
  const limits = key.limits!;
  const prices = ctx.limits.prices();
  const free = FREE_NATIVE.test(nativePath) || body === undefined || body.length === 0;
  const target = model === null ? undefined : { provider: p.id, model };
  // A budget is charged by the model's prices: a call that costs (it has a body) and whose model
  // cannot be priced (a batch, an upload, a model only inside the body's parts) is refused.
  if (limits.budget && !free && (!target || !isPriced(target, prices))) {
    throw target ? unpriced(key.name, `${p.id}/${model}`) : unnamedModel(key.name, `${method} /${p.id}${nativePath}`);
  }
  let parsed: unknown;
  try { parsed = body ? JSON.parse(body.toString('utf8')) : {}; } catch { /* the provider answers a body it cannot read */ }
  const fields = typeof parsed === 'object' && parsed !== null ? parsed as Record<string, unknown> : {};
  // OpenAI's Responses API continues a conversation it keeps by reference: its size only OpenAI knows.
  const bytes = protocol === 'openai-responses' && continuesProviderConversation(fields) ? Infinity : body?.length ?? 0;
  const worst = target && !free ? worstCase([target], protocol, fields, bytes, prices, ctx.clock()) : { input: 0, output: 0, usd: 0 };
  const hold = await ctx.limits.reserve(key, limits, tracker.id, { input: worst.input, output: worst.output, usd: worst.usd ?? 0 }, free);
  tracker.onEnd(hold.settle);
}

/** The protocol a native path's answer is in: another one the provider also speaks when the path is its, else its main one. */
function answerProtocol(p: ProviderDescriptor, nativePath: string): ProtocolId {
  return p.alsoSpeaks?.find((id) => nativePath.startsWith(PROTOCOL_FACTS[id].mainPath)) ?? p.protocol;
}
