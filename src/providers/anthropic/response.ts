// Anthropic `Message` (non-streaming) → OpenAI `chat.completion` (provider-reference.md §4.5).
// Parsed leniently: a missing optional field gives an empty value, never an exception.
import type { ChatCompletion, ToolCall, TranslateContext } from '../types.js';
import { asArray, asRecord, asString, isRecord } from '../shared/lenient-json.js';
import { mapAnthropicStopReason } from './finish-reason.js';
import { fromAnthropicUsage } from './usage.js';

/**
 * The assistant message plus `reasoning_content`, a non-standard field carrying Claude's thinking
 * text (as LiteLLM does); OpenAI SDKs ignore fields they do not know.
 */
export type AnthropicAssistantMessage = ChatCompletion['choices'][number]['message'] & { reasoning_content?: string };

export function fromAnthropicResponse(body: unknown, ctx: TranslateContext): ChatCompletion {
  const msg = asRecord(body);
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const raw of asArray(msg.content)) {
    const block = asRecord(raw);
    if (block.type === 'text') texts.push(asString(block.text) ?? '');
    else if (block.type === 'thinking') thinking.push(asString(block.thinking) ?? '');
    else if (block.type === 'tool_use') toolCalls.push(toToolCall(block));
    // redacted_thinking, server-tool blocks and unknown blocks have no OpenAI form.
  }

  const message: AnthropicAssistantMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: msg.stop_reason === 'refusal' ? (asString(asRecord(msg.stop_details).explanation) ?? null) : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thinking.length > 0) message.reasoning_content = thinking.join('');

  const completion: ChatCompletion = {
    id: asString(msg.id) ?? ctx.fallbackId,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.displayModel ?? `anthropic/${asString(msg.model) ?? ctx.model}`,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapAnthropicStopReason(msg.stop_reason) }],
  };
  if (isRecord(msg.usage)) completion.usage = fromAnthropicUsage(msg.usage);
  return completion;
}

function toToolCall(block: Record<string, unknown>): ToolCall {
  return {
    id: asString(block.id) ?? '',
    type: 'function',
    function: { name: asString(block.name) ?? '', arguments: JSON.stringify(isRecord(block.input) ? block.input : {}) },
  };
}
