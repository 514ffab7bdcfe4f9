// The translating providers by id, loaded on first use and kept. OpenAI needs no translation in
// unified mode (see ./openai/).
import type { TranslatingProvider } from './types.js';

const loaded = new Map<'anthropic' | 'gemini', TranslatingProvider>();

export async function translatorFor(provider: 'anthropic' | 'gemini'): Promise<TranslatingProvider> {
  let t = loaded.get(provider);
  if (!t) {
    t = provider === 'anthropic' ? (await import('./anthropic/index.js')).anthropic : (await import('./gemini/index.js')).gemini;
    loaded.set(provider, t);
  }
  return t;
}

export { resolveModel, familyOf } from './models.js';
