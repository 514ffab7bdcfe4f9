// OpenAI `messages` → Anthropic top-level `system` + alternating `messages`
// (provider-reference.md §2.3 and §4.3):
// - every system/developer message, wherever it is, becomes `system` text blocks, in order;
// - `tool` messages become `tool_result` blocks in a user turn, ahead of any other user content;
// - adjacent turns of the same role are merged, so consecutive tool messages share one user turn;
// - assistant `tool_calls` become `tool_use` blocks with parsed `input`, ids kept as given;
// - messages left with no content (e.g. `""`) are skipped: Anthropic rejects empty turns.
// A conversation ending in an assistant message is sent as-is (Anthropic treats it as prefill).
import type { ChatMessage } from '../types.js';
import { TranslationError } from '../types.js';
import { parseToolArguments } from '../shared/tool-arguments.js';
import { asRecord, asString } from '../shared/lenient-json.js';
import { toAnthropicTextBlocks, toAnthropicUserBlocks, type AnthropicBlock } from './content.js';

export interface AnthropicMessage { role: 'user' | 'assistant'; content: AnthropicBlock[] }

interface Turn { role: 'user' | 'assistant'; results: AnthropicBlock[]; blocks: AnthropicBlock[] }

export function toAnthropicMessages(messages: ChatMessage[]): { system: AnthropicBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicBlock[] = [];
  const turns: Turn[] = [];
  const append = (role: Turn['role'], results: AnthropicBlock[], blocks: AnthropicBlock[]): void => {
    if (results.length === 0 && blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last?.role === role) {
      last.results.push(...results);
      last.blocks.push(...blocks);
    } else {
      turns.push({ role, results, blocks });
    }
  };

  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...toAnthropicTextBlocks(message.content, `${param}.content`));
        break;
      case 'user':
        append('user', [], toAnthropicUserBlocks(message.content, `${param}.content`));
        break;
      case 'tool':
        append('user', [toToolResult(message.tool_call_id, message.content, param)], []);
        break;
      case 'assistant':
        append('assistant', [], toAssistantBlocks(message, param));
        break;
      default: {
        const role: never = message;
        throw new TranslationError(`Unsupported message role ${JSON.stringify(asRecord(role).role)} for Anthropic models.`, `${param}.role`);
      }
    }
  });

  return { system, messages: turns.map((t) => ({ role: t.role, content: [...t.results, ...t.blocks] })) };
}

function toToolResult(toolCallId: string, content: unknown, param: string): AnthropicBlock {
  const block: AnthropicBlock = { type: 'tool_result', tool_use_id: toolCallId };
  if (typeof content === 'string') {
    if (content !== '') block.content = content;
  } else {
    const blocks = toAnthropicTextBlocks(content, `${param}.content`);
    if (blocks.length > 0) block.content = blocks;
  }
  return block;
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

function toAssistantBlocks(message: AssistantMessage, param: string): AnthropicBlock[] {
  const blocks = toAnthropicTextBlocks(message.content, `${param}.content`);
  const refusal = asString(message.refusal);
  if (blocks.length === 0 && refusal !== undefined && refusal !== '') blocks.push({ type: 'text', text: refusal });
  (message.tool_calls ?? []).forEach((call, j) => {
    const fn = asRecord(call.function);
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: asString(fn.name) ?? '',
      input: parseToolArguments(fn.arguments, `${param}.tool_calls[${j}].function.arguments`, 'Anthropic'),
    });
  });
  return blocks;
}
