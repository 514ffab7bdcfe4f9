// GET /v1/models: the user's aliases plus what each configured provider reports (or the list it was
// added with, `providers add --models`), cached for 10 minutes; a provider that fails is left out
// rather than failing the whole list, and named in the `x-gateway-models-unavailable` header.
// GET /v1/models/{model} (the SDKs' models.retrieve): one entry of that list, found by the name a
// chat request would use (an alias, `provider/model`, or a well-known bare id). A request that
// carries `anthropic-version` (Claude Code's model discovery) gets both in Anthropic's shape, with
// Anthropic's models under their own ids and every other model as `provider/<id>`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fromModelsList, type ModelEntry } from '../providers/models-list.js';
import type { ProviderId } from '../providers/types.js';
import { provider as descriptor, providerIds, upstreamPath, type ProviderDescriptor } from '../providers/registry.js';
import { resolveModel } from '../providers/models.js';
import { extractKey, UNIFIED_KEY_PLACEMENTS, type KeyPlacement } from './auth.js';
import { BUILTIN_PROVIDERS } from '../providers/registry.js';
import type { Protocol } from './errors.js';
import type { DaemonContext } from './context.js';
import { GatewayError } from './errors.js';
import { gatewayCallHeaders } from './upstream.js';

/** The path under which models.retrieve names a model. */
export const MODEL_PATH = '/v1/models/';

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

function sendJson(res: ServerResponse, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra }).end(text);
}

/** Which shape a models request wants: Anthropic's when it names an Anthropic API version. */
export function modelsShape(req: IncomingMessage): Protocol {
  return req.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai';
}

const PLACEMENTS: Record<'openai' | 'anthropic', readonly KeyPlacement[]> = { openai: UNIFIED_KEY_PLACEMENTS, anthropic: ['bearer', 'x-api-key'] };

function authenticate(ctx: DaemonContext, req: IncomingMessage): 'openai' | 'anthropic' {
  const shape = modelsShape(req) === 'anthropic' ? 'anthropic' : 'openai';
  ctx.keys.authenticate(extractKey(req, null, PLACEMENTS[shape]), shape);
  return shape;
}

/** The built-in provider that speaks Anthropic's protocol: its models keep their own ids there. */
const ANTHROPIC_OWN = BUILTIN_PROVIDERS.find((p) => p.protocol === 'anthropic')?.id;

/** One entry in Anthropic's model-object shape. */
function anthropicEntry(m: ModelEntry, id: string): Record<string, unknown> {
  const own = ANTHROPIC_OWN !== undefined && id.startsWith(`${ANTHROPIC_OWN}/`) ? id.slice(ANTHROPIC_OWN.length + 1) : id;
  return { type: 'model', id: own, display_name: own, created_at: new Date(m.created * 1000).toISOString() };
}

export async function handleModels(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const shape = authenticate(ctx, req);
  const aliases = Object.keys(ctx.settings.aliases).sort().map(aliasEntry);
  const ids = providerIds();
  const lists = await Promise.all(ids.map((p) => providerModels(ctx, p)));
  const all = [...aliases, ...lists.flatMap((l) => l.models)];
  // `ollama (ECONNREFUSED), openrouter (HTTP 401)`: the providers missing from the list, and why.
  const missing = lists.flatMap((l, i) => (l.unavailable ? [`${ids[i]} (${l.unavailable})`] : [])).join(', ');
  const extra: Record<string, string> = missing ? { 'x-gateway-models-unavailable': missing } : {};
  if (shape === 'openai') { sendJson(res, { object: 'list', data: all }, extra); return; }
  const data = all.map((m) => anthropicEntry(m, m.id));
  sendJson(res, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }, extra);
}

/** `rawId`: the path after /v1/models/, the id raw (`anthropic/claude-opus-5`) or encoded (`anthropic%2Fclaude-opus-5`). */
export async function handleModel(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse, rawId: string): Promise<void> {
  const shape = authenticate(ctx, req);
  let id: string;
  try { id = decodeURIComponent(rawId); } catch { throw new GatewayError('invalid_request', 'malformed percent-encoding in the model id', 'model'); }
  const entry = Object.hasOwn(ctx.settings.aliases, id) ? aliasEntry(id) : await listedModel(ctx, id);
  if (!entry) {
    throw new GatewayError('unknown_model', `The model \`${id}\` does not exist or you do not have access to it: it is no alias and no configured provider lists it (see: GET /v1/models, gateway models aliases)`, 'model');
  }
  // Answered under the name asked for, as OpenAI does: the name a chat request can use.
  sendJson(res, shape === 'openai' ? { ...entry, id } : anthropicEntry(entry, id));
}

/** The provider list's entry for a model name (`provider/model` or a well-known bare id). */
async function listedModel(ctx: DaemonContext, id: string): Promise<ModelEntry | undefined> {
  let route;
  try { route = resolveModel(id); } catch { return undefined; }
  const listed = `${route.provider}/${route.model}`;
  return (await providerModels(ctx, route.provider)).models.find((m) => m.id === listed);
}
