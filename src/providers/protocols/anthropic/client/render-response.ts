// IR answer → an Anthropic `Message` (provider-reference.md §2.6). Reasoning becomes thinking
// blocks; a foreign provider's opaque state rides in a thinking block's signature (provider-state.ts).
import type { RenderContext } from '../../../ir/protocol.js';
import type { Response } from '../../../ir/types.js';
import { encodeStateSignature, toClientToolId } from './provider-state.js';
import { toAnthropicUsage, toStopReason } from './wire.js';

type Block = Record<string, unknown>;

export function renderMessage(response: Response, ctx: RenderContext): Record<string, unknown> {
  const choice = response.choices[0];
  const content: Block[] = [];
  let calls = 0;
  for (const part of choice?.parts ?? []) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') content.push({ type: 'text', text: part.text });
        break;
      case 'reasoning':
        content.push({ type: 'thinking', thinking: part.text, signature: part.state ? encodeStateSignature(part.state) : '' });
        break;
      case 'tool-call': {
        const id = toClientToolId(part.id, ctx.fallbackId, calls++);
        let input: unknown = {};
        try { input = part.arguments === '' ? {} : JSON.parse(part.arguments); } catch { input = {}; }
        content.push({ type: 'tool_use', id, name: part.name, input });
        if (part.state) content.push({ type: 'thinking', thinking: '', signature: encodeStateSignature(part.state, id) });
        break;
      }
      default: { const never: never = part; return never; }
    }
  }
  const stopReason = choice ? toStopReason(choice.finish) : 'end_turn';
  return {
    id: response.id && /^msg_/.test(response.id) ? response.id : ctx.fallbackId,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: stopReason,
    stop_sequence: choice?.stopSequence ?? null,
    stop_details: choice?.refusal ? { type: 'refusal', category: null, explanation: choice.refusal } : null,
    usage: toAnthropicUsage(response.usage),
  };
}
