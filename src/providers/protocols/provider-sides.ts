// The provider side of each wire protocol, loaded on first use and kept: the one table of them.
// The pipeline calls providers through it; `providers test` builds its tiny request with it.
import type { ProtocolId, ProviderProtocol } from '../ir/protocol.js';

const LOADERS: Record<ProtocolId, () => Promise<ProviderProtocol>> = {
  anthropic: async () => (await import('./anthropic/provider/index.js')).anthropicProvider,
  'openai-chat': async () => (await import('./openai-chat/provider/index.js')).openaiChatProvider,
  gemini: async () => (await import('./gemini/provider/index.js')).geminiProvider,
  'openai-responses': async () => (await import('./openai-responses/provider/index.js')).openaiResponsesProvider,
};

const loaded = new Map<ProtocolId, ProviderProtocol>();

/** The module if it is loaded already: a request after the first waits on nothing. */
export function loadedProviderSide(protocol: ProtocolId): ProviderProtocol | undefined {
  return loaded.get(protocol);
}

export async function providerSide(protocol: ProtocolId): Promise<ProviderProtocol> {
  let m = loaded.get(protocol);
  if (!m) { m = await LOADERS[protocol](); loaded.set(protocol, m); }
  return m;
}
