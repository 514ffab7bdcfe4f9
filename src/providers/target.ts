// The Target a protocol module works for, from a provider's descriptor: who the provider is, the
// model, the protocol it is called in and, for Chat Completions, its quirk profile (quirks.ts).
// Every place that calls a provider through a protocol module builds its Target here.
import type { ProtocolId, Target } from './ir/protocol.js';
import { quirksOf } from './quirks.js';
import type { ProviderDescriptor } from './registry.js';

export function targetOf(p: ProviderDescriptor, model: string, protocol: ProtocolId = p.protocol): Target {
  const target: Target = { provider: p.id, displayName: p.displayName, model, protocol };
  // Quirk profiles describe Chat Completions servers.
  if (protocol === 'openai-chat') target.quirks = quirksOf(p);
  return target;
}
