// Same protocol on both sides: the client's own body, with only the model changed (and what the
// door's editBody changes, and a session's prompt_cache_key for a provider that takes it when the
// client set none), to the provider's own path; its headers (anthropic-beta and the rest) go too,
// less credentials and hop-by-hop ones; a 2xx answer comes back byte for byte (a Chat stream less
// the usage the gateway asked for), and an error answer goes to answerError.
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { upstreamPath } from '../../providers/registry.js';
import { upstreamQuery } from '../http/http-util.js';
import { promptCacheKeyFor } from '../caching/marks.js';
import type { GatewayError } from '../http/errors.js';
import { kindOf } from '../relay/ir-relay.js';
import { relayAsIs } from '../relay/relay-as-is.js';
import { clientOf, loadedClient } from './clients.js';
import { providerHeaders } from '../relay/upstream.js';
import { DONE, type Attempt, type DoorRun, type Obj } from './door.js';
import { failedAnswer, failedTransport } from './provider-error.js';
import { ROUTE_HEADER, routeHeader } from './route-header.js';

export async function fastPath(run: DoorRun): Promise<Attempt> {
  const { ctx, door, route, raw, body, req, res, tracker, capture } = run;
  const { p, model } = route;
  door.validate?.(body);
  // A protocol that names the model in the path (Gemini) has it in providerPath, not the body.
  const inBody = PROTOCOL_FACTS[door.protocol].modelIn === 'body';
  const cleaned = door.withoutForeignState?.(raw);
  let edited = door.editBody?.(cleaned ?? body, route) ?? cleaned;
  // A session's prompt_cache_key for a provider that takes it, when the client set none (caching/marks.ts).
  const cacheKey = promptCacheKeyFor(run);
  if (cacheKey !== undefined && (edited ?? body).prompt_cache_key !== cacheKey) edited = { ...(edited ?? body), prompt_cache_key: cacheKey };
  const out = edited ? json(inBody ? { ...edited, model } : edited) : inBody ? withModel(raw, body, model) : raw;
  const headers = providerHeaders(p.id, req.headers, route.providerKey);
  const traceparent = tracker.traceparent();
  if (traceparent) headers.traceparent = traceparent;
  headers['content-length'] = String(out.length);
  delete headers['transfer-encoding'];
  const q = upstreamQuery(run.query);
  const path = upstreamPath(p, `${run.call.providerPath?.(model) ?? run.call.path ?? door.path}${q ? `?${q}` : ''}`);
  const rewrite = run.stream ? door.rewriteStream?.(body) : undefined;
  const client = door.streamError && run.stream ? loadedClient(door) ?? await clientOf(door) : undefined;
  const streamError = client && ((ge: GatewayError) => door.streamError!({ status: ge.status, kind: kindOf(ge.code), message: ge.message, code: ge.code }, client, run.call));
  let held;
  try {
    held = await relayAsIs(ctx, p.id, res, tracker, {
      stream: run.stream, model, capture, protocol: door.protocol, onAnswered: run.extras.onAnswered,
      forDoor: { rewrite, streamError, beforeHead: (status, out) => { const route = routeHeader(run, status); if (route !== undefined) out[ROUTE_HEADER] = route; } },
    }, { method: 'POST', path, headers, body: out });
  } catch (err) { return failedTransport(run, err); }
  if (held === undefined) return DONE;
  if ('cut' in held) throw ctx.upstreams.failure(p.id, held.cut, 'response');
  return failedAnswer(run, door.protocol, held);
}

const json = (body: Obj): Buffer => Buffer.from(JSON.stringify(body), 'utf8');

/**
 * The client's bytes with only the model changed: untouched when the name needs no change (a bare
 * `claude-…`), else the one `"model": "<name>"` spliced; re-serialised only when the name appears
 * as a `model` value more than once (a nested object could carry the same key and value).
 */
export function withModel(raw: Buffer, body: Obj, model: string): Buffer {
  if (body.model === model) return raw;
  const value = Buffer.from(JSON.stringify(body.model), 'utf8');
  const at = findModelValue(raw, value, 0);
  if (at === -1 || findModelValue(raw, value, at + value.length) !== -1) return json({ ...body, model });
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
