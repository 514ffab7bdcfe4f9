// Unified mode on OpenAI: the request goes on with only the routing prefix removed. The one
// addition: streams always ask for usage (for accounting); the client sees it only if it asked.
import type { ChatCompletionRequest, UpstreamCall } from '../types.js';

export function toOpenAIRequest(req: ChatCompletionRequest, model: string): UpstreamCall & { clientWantsUsage: boolean } {
  const body: Record<string, unknown> = { ...req, model };
  const clientWantsUsage = req.stream_options?.include_usage === true;
  if (req.stream === true && !clientWantsUsage) body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  return { path: '/v1/chat/completions', body, clientWantsUsage };
}
