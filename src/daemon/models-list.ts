// GET /v1/models: the user's aliases plus what each configured provider reports, cached for
// 10 minutes; a provider that fails is left out rather than failing the whole list.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fromModelsList, MODELS_PATH, type ModelEntry } from '../providers/models-list.js';
import { PROVIDERS, type ProviderId } from '../providers/types.js';
import { extractKey, KEY_PLACEMENTS } from './auth.js';
import type { DaemonContext } from './context.js';
import { gatewayCallHeaders } from './upstream.js';

const TTL_MS = 10 * 60_000;
const cache = new WeakMap<DaemonContext, Map<ProviderId, { at: number; models: ModelEntry[] }>>();

async function providerModels(ctx: DaemonContext, p: ProviderId): Promise<ModelEntry[]> {
  let byProvider = cache.get(ctx);
  if (!byProvider) { byProvider = new Map(); cache.set(ctx, byProvider); }
  const hit = byProvider.get(p);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.models;
  const key = await ctx.providerKeys.require(p).catch(() => undefined);
  if (!key) return [];
  const headers = gatewayCallHeaders(p, key, { accept: 'application/json' });
  try {
    const r = await ctx.upstreams.request(p, { method: 'GET', path: MODELS_PATH[p], headers, signal: AbortSignal.timeout(10_000) });
    if (r.statusCode !== 200) { await r.body.dump(); return hit?.models ?? []; }
    const models = fromModelsList(p, await r.body.json());
    byProvider.set(p, { at: Date.now(), models });
    return models;
  } catch { return hit?.models ?? []; }
}

export async function handleModels(ctx: DaemonContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  ctx.keys.authenticate(extractKey(req, null, KEY_PLACEMENTS.unified), 'openai');
  const aliases: ModelEntry[] = Object.keys(ctx.settings.aliases).sort().map((id) => ({ id, object: 'model', created: 0, owned_by: 'alias' }));
  const lists = await Promise.all(PROVIDERS.map((p) => providerModels(ctx, p)));
  const text = JSON.stringify({ object: 'list', data: [...aliases, ...lists.flat()] });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}
