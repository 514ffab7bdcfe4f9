// The OpenAI-Chat translators by the protocol a provider speaks, loaded on first use and kept.
// A provider that speaks OpenAI Chat itself needs none (null): its requests go through as they are.
import type { ProtocolId } from './ir/protocol.js';
import type { TranslatingProvider } from './types.js';

const loaded = new Map<ProtocolId, TranslatingProvider>();

export async function translatorFor(protocol: ProtocolId): Promise<TranslatingProvider | null> {
  if (protocol === 'openai-chat') return null;
  let t = loaded.get(protocol);
  if (!t) {
    if (protocol === 'anthropic') t = (await import('./anthropic/index.js')).anthropic;
    else if (protocol === 'gemini') t = (await import('./gemini/index.js')).gemini;
    else throw new Error(`no OpenAI-Chat translator for the ${protocol} protocol yet`);
    loaded.set(protocol, t);
  }
  return t;
}

export { resolveModel, familyOf } from './models.js';
