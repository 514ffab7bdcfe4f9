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
import { relayAsIs } from './relay-as-is.js';
import { providerHeaders } from './upstream.js';


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

  // Only keys with a model allow-list make us look at the body; the original bytes still go upstream.
  let buffered: Buffer | undefined;
  let model: string | null = wire.modelIn === 'path' ? nativeModel('path', nativePath, undefined) : null;
  seen.model = model;
  if (record.models) {
    if (wire.modelIn === 'body') buffered = await readBody(req, limit);
    model = nativeModel(wire.modelIn, nativePath, buffered);
    seen.model = model;
    checkModelAllowed(record, model);
  }
  const providerKey = ctx.providerKeys.cached(provider) ?? await ctx.providerKeys.require(provider);

  const headers = providerHeaders(provider, req.headers, providerKey);
  // A `key` parameter is a client credential on every prefix: never forwarded.
  const q = upstreamQuery(rawQuery);
  // The path under the prefix, mapped onto the provider's base URL (its path written once).
  const path = upstreamPath(p, q ? `${nativePath}?${q}` : nativePath);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const stream = /[:?&]alt=sse|streamGenerateContent/.test(path) || (req.headers.accept ?? '').includes('text/event-stream');
  // logBodies (debugging only): the body is read whole to keep a copy, and that buffer goes upstream.
  const bodyLog = ctx.bodyLog;
  if (bodyLog && hasBody && !buffered) buffered = await readBody(req, limit);

  const tracker = new RequestTracker(ctx.bus, ctx.stats, {
    keyId: record.id, keyName: record.name, mode: 'native', provider, model,
    method: req.method ?? 'GET', path: nativePath, stream, requestBytes: length ?? buffered?.length ?? 0, headers: req.headers,
  }, ctx.startSpan);
  seen.tracked = true;
  const traceparent = tracker.traceparent();
  if (traceparent) headers.traceparent = traceparent;
  const capture = bodyLog?.begin(tracker, buffered);
  const body = !hasBody ? undefined : buffered ?? (length !== undefined ? req : Readable.from(limitedBody(req, limit)));
  await relayAsIs(ctx, provider, res, tracker, { stream, model, capture, protocol: answerProtocol(p, nativePath) }, { method: (req.method ?? 'GET') as 'GET', path, headers, body });
}

/** The protocol a native path's answer is in: another one the provider also speaks when the path is its, else its main one. */
function answerProtocol(p: ProviderDescriptor, nativePath: string): ProtocolId {
  return p.alsoSpeaks?.find((id) => nativePath.startsWith(PROTOCOL_FACTS[id].mainPath)) ?? p.protocol;
}
