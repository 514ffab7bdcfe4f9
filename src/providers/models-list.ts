// Each provider's "list models" answer → OpenAI's list format with prefixed ids (pure).
import type { ProviderId } from './types.js';
import { provider as descriptor } from './registry.js';

export interface ModelEntry { id: string; object: 'model'; created: number; owned_by: string }

type Obj = Record<string, unknown>;

export function fromModelsList(provider: ProviderId, body: unknown): ModelEntry[] {
  const o = (body && typeof body === 'object' ? body : {}) as Obj;
  const out: ModelEntry[] = [];
  const d = descriptor(provider);
  if (d.protocol === 'gemini') {
    // Google's shape: `models: [{name: "models/<id>", supportedGenerationMethods}]`; only chat models.
    for (const m of Array.isArray(o.models) ? (o.models as Obj[]) : []) {
      if (typeof m?.name !== 'string') continue;
      const methods = Array.isArray(m.supportedGenerationMethods) ? m.supportedGenerationMethods : ['generateContent'];
      if (!methods.includes('generateContent')) continue;
      out.push({ id: `${provider}/${m.name.replace(/^models\//, '')}`, object: 'model', created: 0, owned_by: d.owner });
    }
    return out;
  }
  for (const m of Array.isArray(o.data) ? (o.data as Obj[]) : []) {
    if (typeof m?.id !== 'string') continue;
    const created = typeof m.created === 'number' ? m.created
      : typeof m.created_at === 'string' ? Math.floor(Date.parse(m.created_at) / 1000) || 0 : 0;
    out.push({ id: `${provider}/${m.id}`, object: 'model', created, owned_by: typeof m.owned_by === 'string' ? m.owned_by : d.owner });
  }
  return out;
}
