// IR system prompt and turns → Anthropic `system` and alternating `messages` (provider-reference.md
// §2.3, §4.3):
// - adjacent turns of the same role are merged; in a user turn, tool results come first (Anthropic
//   wants them right after the assistant's tool_use blocks);
// - tool calls become tool_use blocks with their arguments parsed into `input`;
// - reasoning goes back as thinking / redacted_thinking blocks only when this provider minted it
//   (its signature means nothing elsewhere); other providers' reasoning is dropped on purpose;
// - turns left with no content are skipped: Anthropic rejects empty turns.
// A conversation ending in an assistant turn is sent as is (Anthropic treats it as prefill).
import type { Target } from '../../../ir/protocol.js';
import type { AssistantPart, Message, ReasoningPart, ToolResultPart, UserPart } from '../../../ir/types.js';
import { parseToolArguments } from '../../../shared/tool-arguments.js';
import { cached, mediaBlock, textBlocks, type Block } from './build-content.js';

export interface AnthropicMessage { role: 'user' | 'assistant'; content: Block[] }

interface Turn { role: 'user' | 'assistant'; results: Block[]; blocks: Block[] }

export function toAnthropicMessages(messages: readonly Message[], target: Target): AnthropicMessage[] {
  const turns: Turn[] = [];
  messages.forEach((message, i) => {
    const results: Block[] = [];
    const blocks: Block[] = [];
    message.parts.forEach((part, j) => {
      const where = `messages[${i}].parts[${j}]`;
      if (message.role === 'user') userBlock(part as UserPart, where, target, results, blocks);
      else blocks.push(...assistantBlocks(part as AssistantPart, where, target));
    });
    if (results.length === 0 && blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last?.role === message.role) {
      last.results.push(...results);
      last.blocks.push(...blocks);
    } else {
      turns.push({ role: message.role, results, blocks });
    }
  });
  return turns.map((t) => ({ role: t.role, content: t.results.length === 0 ? t.blocks : [...t.results, ...t.blocks] }));
}

function userBlock(part: UserPart, where: string, target: Target, results: Block[], blocks: Block[]): void {
  switch (part.type) {
    case 'text': blocks.push(...textBlocks(part)); return;
    case 'image': case 'document': blocks.push(mediaBlock(part, where, target.displayName)); return;
    case 'tool-result': results.push(toolResult(part, where, target)); return;
    default: { const never: never = part; return never; }
  }
}

function toolResult(part: ToolResultPart, where: string, target: Target): Block {
  const block: Block = { type: 'tool_result', tool_use_id: part.callId };
  const only = part.content.length === 1 ? part.content[0] : undefined;
  if (part.plain === true && only?.type === 'text') {
    if (only.text !== '') block.content = only.text;
  } else {
    const content = part.content.flatMap((c, k) => (c.type === 'text' ? textBlocks(c) : [mediaBlock(c, `${where}.content[${k}]`, target.displayName)]));
    if (content.length > 0) block.content = content;
  }
  if (part.isError === true) block.is_error = true;
  return cached(block, part.cache);
}

function assistantBlocks(part: AssistantPart, where: string, target: Target): Block[] {
  switch (part.type) {
    case 'text':
      return textBlocks(part);
    case 'tool-call':
      return [{
        type: 'tool_use', id: part.id, name: part.name,
        input: parseToolArguments(part.arguments, part.param ?? `${where}.arguments`, target.displayName),
      }];
    case 'reasoning':
      return reasoningBlocks(part, target);
    default: { const never: never = part; return never; }
  }
}

function reasoningBlocks(part: ReasoningPart, target: Target): Block[] {
  const state = part.state;
  if (state === undefined || state.provider !== target.provider) return [];
  if (part.redacted === true) return state.data.data === undefined ? [] : [{ type: 'redacted_thinking', data: state.data.data }];
  const signature = state.data.signature;
  return signature === undefined ? [] : [{ type: 'thinking', thinking: part.text, signature }];
}
