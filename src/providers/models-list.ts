// Each provider's "list models" answer → OpenAI's list format with prefixed ids (pure).
import type { ProviderId } from './types.js';

export interface ModelEntry { id: string; object: 'model'; created: number; owned_by: string }

type Obj = Record<string, unknown>;

/** The upstream path that lists a provider's models. */
export const MODELS_PATH: Record<ProviderId, string> = {
  anthropic: '/v1/models?limit=1000',
  openai: '/v1/models',
  gemini: '/v1beta/models?pageSize=1000',
};

export function fromModelsList(provider: ProviderId, body: unknown): ModelEntry[] {
  const o = (body && typeof body === 'object' ? body : {}) as Obj;
  const out: ModelEntry[] = [];
  if (provider === 'gemini') {
    for (const m of Array.isArray(o.models) ? (o.models as Obj[]) : []) {
      if (typeof m?.name !== 'string') continue;
      const methods = Array.isArray(m.supportedGenerationMethods) ? m.supportedGenerationMethods : ['generateContent'];
      if (!methods.includes('generateContent')) continue;
      out.push({ id: `gemini/${m.name.replace(/^models\//, '')}`, object: 'model', created: 0, owned_by: 'google' });
    }
    return out;
  }
  for (const m of Array.isArray(o.data) ? (o.data as Obj[]) : []) {
    if (typeof m?.id !== 'string') continue;
    const created = typeof m.created === 'number' ? m.created
      : typeof m.created_at === 'string' ? Math.floor(Date.parse(m.created_at) / 1000) || 0 : 0;
    out.push({ id: `${provider}/${m.id}`, object: 'model', created, owned_by: provider === 'openai' ? String(m.owned_by ?? 'openai') : 'anthropic' });
  }
  return out;
}
