// Each wire protocol's one usage reader (its usage.ts), by protocol: the table the daemon's tap on
// relayed answers looks them up in. Small and loaded with the daemon, unlike the provider sides.
import type { ProtocolId } from '../ir/protocol.js';
import type { UsageReader } from '../ir/usage-reader.js';
import { anthropicUsageReader } from './anthropic/usage.js';
import { geminiUsageReader } from './gemini/usage.js';
import { chatUsageReader } from './openai-chat/usage.js';
import { responsesUsageReader } from './openai-responses/usage.js';

export const USAGE_READERS: Readonly<Record<ProtocolId, UsageReader>> = {
  anthropic: anthropicUsageReader,
  'openai-chat': chatUsageReader,
  'openai-responses': responsesUsageReader,
  gemini: geminiUsageReader,
};
