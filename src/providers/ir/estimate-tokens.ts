// A documented estimate of a request's input tokens, for providers that have no counting endpoint
// (OpenAI's Chat API has none): about four characters of text per token, as OpenAI's own guidance
// puts it for English, plus a flat 1,500 for each image or document, whose true cost depends on
// sizes the gateway does not decode. Answers carrying it say so (x-gateway-token-count: estimate).
import type { Request } from './types.js';

/** Characters of text per token: OpenAI's rule of thumb for English (Claude's tokenizer makes more tokens of the same text). */
export const CHARS_PER_TOKEN = 4;
const MEDIA_TOKENS = 1_500;

export function estimateInputTokens(req: Request): number {
  let chars = 0;
  let media = 0;
  for (const p of req.system) chars += p.text.length;
  for (const t of req.tools) chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.inputSchema).length;
  for (const m of req.messages) {
    for (const p of m.parts) {
      switch (p.type) {
        case 'text': case 'reasoning': chars += p.text.length; break;
        case 'tool-call': chars += p.name.length + p.arguments.length; break;
        case 'tool-result':
          for (const c of p.content) { if (c.type === 'text') chars += c.text.length; else media++; }
          break;
        case 'image': case 'document': media++; break;
        default: { const never: never = p; return never; }
      }
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + media * MEDIA_TOKENS;
}
