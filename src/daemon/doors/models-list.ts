// GET /v1/models: the user's aliases plus what each configured provider reports (or the list it was
// added with, `providers add --models`), cached for 10 minutes; a provider that fails is left out
// rather than failing the whole list, and named in the `x-gateway-models-unavailable` header.
// GET /v1/models/{model} (the SDKs' models.retrieve): one entry of that list, found by the name a
// chat request would use (an alias, `provider/model`, or a well-known bare id). A request that
// carries `anthropic-version` (Claude Code's model discovery) gets both in Anthropic's shape, with
// Anthropic's models under their own ids and every other model as `provider/<id>`; GET
// /v1beta/models[/{model}] (and /v1/… from a Google client) gets Google's, the same way
// (`models/gemini-…`, `models/anthropic/claude-…`), in pages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fromModelsList, type ModelEntry } from '../../providers/models-list.js';
import type { ProviderId } from '../../providers/types.js';
import { builtinProviderFor, provider as descriptor, maxOutputTokens, providerIds, splitProviderPrefix, upstreamPath, type ProviderDescriptor } from '../../providers/registry.js';
import { resolveModel } from '../../providers/models.js';
import { extractKey, type KeyPlacement } from '../access/auth.js';
import type { Protocol } from '../http/errors.js';
import type { DaemonContext } from '../context.js';
import { GatewayError } from '../http/errors.js';
import { sendJson } from '../http/send.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { isKeyParamName } from '../http/http-util.js';
import type { ModelRoute } from './model-routes.js';
import { gatewayCallHeaders } from '../relay/upstream.js';

const TTL_MS = 10 * 60_000;
// Keyed by the descriptor too: a provider whose base URL or model list changed is asked again.
const cache = new WeakMap<DaemonContext, Map<ProviderId, { at: number; d: ProviderDescriptor; models: ModelEntry[] }>>();

/** A provider's models; `unavailable` says why there are none when it has a key but did not answer. */
async function providerModels(ctx: DaemonContext, p: ProviderId): Promise<{ models: ModelEntry[]; unavailable?: string }> {
  let byProvider = cache.get(ctx);
  if (!byProvider) { byProvider = new Map(); cache.set(ctx, byProvider); }
  const d = descriptor(p);
  if (d.models) return { models: d.models.map((id) => ({ id: `${p}/${id}`, object: 'model', created: 0, owned_by: d.owner })) };
  const hit = byProvider.get(p);
  const fresh = hit?.d === d ? hit : undefined;
  if (fresh && Date.now() - fresh.at < TTL_MS) return { models: fresh.models };
  const key = await ctx.providerKeys.require(p).catch(() => undefined);
  if (key === undefined) return { models: [] };
  const headers = gatewayCallHeaders(p, key, { accept: 'application/json' });
  try {
    const r = await ctx.upstreams.request(p, { method: 'GET', path: upstreamPath(d, d.modelsPath), headers, signal: AbortSignal.timeout(10_000) });
    if (r.statusCode !== 200) { await r.body.dump(); return { models: fresh?.models ?? [], unavailable: `HTTP ${r.statusCode}` }; }
    const models = fromModelsList(p, await r.body.json());
    byProvider.set(p, { at: Date.now(), d, models });
    return { models };
  } catch (e) {
    const code = (e as { code?: string }).code ?? (e as Error).name;
    return { models: fresh?.models ?? [], unavailable: code };
  }
}

const aliasEntry = (id: string): ModelEntry => ({ id, object: 'model', created: 0, owned_by: 'alias' });


/** Google's clients name themselves (`x-goog-api-client`) or put the key where only they do. */
function fromGoogleClient(req: IncomingMessage): boolean {
  if (req.headers['x-goog-api-key'] !== undefined || req.headers['x-goog-api-client'] !== undefined) return true;
  const q = (req.url ?? '').indexOf('?');
  if (q === -1) return false;
  for (const name of new URLSearchParams((req.url ?? '').slice(q + 1)).keys()) if (isKeyParamName(name)) return true;
  return false;
}

/**
 * Which shape a models request wants: Google's under /v1beta; on /v1, Anthropic's when it names
 * an Anthropic API version, Google's when a Google client sent it, else OpenAI's.
 */
export function modelsShape(req: IncomingMessage, route: ModelRoute): Protocol {
  if (route.version === 'v1beta') return 'gemini';
  if (req.headers['anthropic-version'] !== undefined) return 'anthropic';
  return fromGoogleClient(req) ? 'gemini' : 'openai';
}

/** Where each shape's clients put the proxy key: their door's placements. */
const PLACEMENTS: Record<Protocol, readonly KeyPlacement[]> = {
  openai: PROTOCOL_FACTS['openai-chat'].clientKeyPlacements, anthropic: PROTOCOL_FACTS.anthropic.clientKeyPlacements, gemini: PROTOCOL_FACTS.gemini.clientKeyPlacements,
};

function authenticate(ctx: DaemonContext, req: IncomingMessage, shape: Protocol, query: string): void {
  ctx.keys.authenticate(extractKey(req, query ? new URLSearchParams(query) : null, PLACEMENTS[shape]), shape);
}

// The built-in provider that speaks a shape's protocol: its models keep their own ids in that shape's list.
const ANTHROPIC_OWN = builtinProviderFor('anthropic')?.id;
const GEMINI_OWN = builtinProviderFor('gemini')?.id;

function ownId(id: string, own: string | undefined): string {
  return own !== undefined && id.startsWith(`${own}/`) ? id.slice(own.length + 1) : id;
}

/** One entry in Anthropic's model-object shape. */
function anthropicEntry(m: ModelEntry, id: string): Record<string, unknown> {
  const own = ownId(id, ANTHROPIC_OWN);
  return { type: 'model', id: own, display_name: own, created_at: new Date(m.created * 1000).toISOString() };
}

/** One entry in Google's Model shape: `models/<id>`, Gemini's under their own ids, the others as `models/<provider>/<id>`. */
function googleEntry(m: ModelEntry, id: string): Record<string, unknown> {
  const own = ownId(id, GEMINI_OWN);
  const entry: Record<string, unknown> = { name: `models/${own}`, displayName: own, supportedGenerationMethods: ['generateContent', 'countTokens'] };
  const split = splitProviderPrefix(m.id);
  const limit = split && maxOutputTokens(split.provider.id, split.rest);
  if (limit) entry.outputTokenLimit = limit;
  return entry;
}

/** Google's list page: `pageSize` (default 50, at most 1000) entries from `pageToken` on (an offset we issued). */
function googlePage(all: ModelEntry[], q: URLSearchParams): Record<string, unknown> {
  const sizeText = q.get('pageSize');
  const size = sizeText === null || sizeText === '' || sizeText === '0' ? 50 : Number(sizeText);
  if (!Number.isInteger(size) || size < 0) throw new GatewayError('invalid_request', 'pageSize must be a whole number', 'pageSize');
  const token = q.get('pageToken');
  const start = token === null || token === '' ? 0 : Number(token);
  if (!/^\d*$/.test(token ?? '') || !Number.isSafeInteger(start) || start > all.length) throw new GatewayError('invalid_request', 'pageToken: not a token this list gave', 'pageToken');
  const end = start + Math.min(size, 1000);
  const page: Record<string, unknown> = { models: all.slice(start, end).map((m) => googleEntry(m, m.id)) };
  if (end < all.length) page.nextPageToken = String(end);
  return page;
}

export async function handleModels(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, route: ModelRoute, query: string): Promise<void> {
  const shape = modelsShape(req, route);
  authenticate(ctx, req, shape, query);
  const aliases = Object.keys(ctx.settings.aliases).sort().map(aliasEntry);
  const ids = providerIds();
  const lists = await Promise.all(ids.map((p) => providerModels(ctx, p)));
  const all = [...aliases, ...lists.flatMap((l) => l.models)];
  // `ollama (ECONNREFUSED), openrouter (HTTP 401)`: the providers missing from the list, and why.
  const missing = lists.flatMap((l, i) => (l.unavailable ? [`${ids[i]} (${l.unavailable})`] : [])).join(', ');
  const extra: Record<string, string> = missing ? { 'x-gateway-models-unavailable': missing } : {};
  switch (shape) {
    case 'openai': sendJson(res, 200, { object: 'list', data: all }, extra); return;
    case 'gemini': sendJson(res, 200, googlePage(all, new URLSearchParams(query)), extra); return;
    case 'anthropic': {
      const data = all.map((m) => anthropicEntry(m, m.id));
      sendJson(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }, extra);
      return;
    }
    default: { const never: never = shape; return never; }
  }
}

/** models.retrieve / models.get: `route.id` is the name a request would use (`anthropic/claude-opus-5`, a bare id, an alias). */
export async function handleModel(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, route: ModelRoute & { id: string }, query: string): Promise<void> {
  const shape = modelsShape(req, route);
  authenticate(ctx, req, shape, query);
  const id = route.id;
  const entry = Object.hasOwn(ctx.settings.aliases, id) ? aliasEntry(id) : await listedModel(ctx, id);
  if (!entry) {
    throw new GatewayError('unknown_model', `The model \`${id}\` does not exist or you do not have access to it: it is no alias and no configured provider lists it (see: GET /${route.version}/models, gateway models aliases)`, 'model');
  }
  // Answered under the name asked for, as OpenAI does: the name a chat request can use.
  switch (shape) {
    case 'openai': sendJson(res, 200, { ...entry, id }); return;
    case 'anthropic': sendJson(res, 200, anthropicEntry(entry, id)); return;
    case 'gemini': sendJson(res, 200, googleEntry(entry, id)); return;
    default: { const never: never = shape; return never; }
  }
}

/** The provider list's entry for a model name (`provider/model` or a well-known bare id). */
async function listedModel(ctx: DaemonContext, id: string): Promise<ModelEntry | undefined> {
  let route;
  try { route = resolveModel(id); } catch { return undefined; }
  const listed = `${route.provider}/${route.model}`;
  return (await providerModels(ctx, route.provider)).models.find((m) => m.id === listed);
}
