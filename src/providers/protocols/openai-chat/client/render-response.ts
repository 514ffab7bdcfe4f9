// IR answer → a `chat.completion` (provider-reference.md §1.4, §4.5). Reasoning text goes to the
// non-standard `reasoning_content` (as LiteLLM sends it; OpenAI SDKs ignore fields they do not
// know); a tool call's provider state rides in its id (tool-call-id.ts). Reasoning signatures have
// no place in Chat and are dropped: a conversation continued through this door loses them.
import type { RenderContext } from '../../../ir/protocol.js';
import type { Choice, Response } from '../../../ir/types.js';
import type { ChatCompletion, ToolCall } from '../../../types.js';
import { toChatFinishReason, toChatLogprobs, toChatUsage, type ChatChoiceLogprobs } from '../wire.js';
import { encodeToolCallId } from '../../tool-call-id.js';

type ChatChoice = ChatCompletion['choices'][number];
/** A choice widened with the fields we add beyond types.ts: reasoning text and real log probabilities. */
type RenderedChoice = Omit<ChatChoice, 'message' | 'logprobs'> & {
  message: ChatChoice['message'] & { reasoning_content?: string };
  logprobs: ChatChoiceLogprobs | null;
};

/** The model the client sees: the provider's own (dated) id under the door's prefix, when both are known. */
export function shownModel(ctx: RenderContext, providerModel: string | undefined): string {
  return providerModel !== undefined && ctx.modelPrefix !== undefined ? ctx.modelPrefix + providerModel : ctx.model;
}

export function renderChatCompletion(response: Response, ctx: RenderContext): ChatCompletion {
  const calls = { next: 0 }; // across choices: only used to mint ids the provider did not send
  const choices = response.choices.map((c) => renderChoice(c, ctx, calls));
  if (choices.length === 0) choices.push({ index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'stop' });
  const completion: ChatCompletion = {
    id: response.id ?? ctx.fallbackId,
    object: 'chat.completion',
    created: ctx.created,
    model: shownModel(ctx, response.model),
    choices: choices as ChatChoice[], // widened only by the extension fields above
  };
  if (response.usage !== undefined) completion.usage = toChatUsage(response.usage);
  return completion;
}

function renderChoice(choice: Choice, ctx: RenderContext, calls: { next: number }): RenderedChoice {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const part of choice.parts) {
    switch (part.type) {
      case 'text':
        if (part.text !== '' || part.state === undefined) texts.push(part.text); // not a part that only carries a signature
        break;
      case 'reasoning':
        if (part.redacted !== true) reasoning.push(part.text);
        break;
      case 'tool-call':
        toolCalls.push({
          id: encodeToolCallId(part.id, part.state, ctx.fallbackId, calls.next++),
          type: 'function',
          function: { name: part.name, arguments: part.arguments === '' ? '{}' : part.arguments },
        });
        break;
      default: {
        const never: never = part;
        return never;
      }
    }
  }
  const message: RenderedChoice['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: choice.refusal ?? null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  return {
    index: choice.index,
    message,
    logprobs: choice.logprobs === undefined ? null : toChatLogprobs(choice.logprobs),
    finish_reason: toChatFinishReason(choice.finish),
  };
}
