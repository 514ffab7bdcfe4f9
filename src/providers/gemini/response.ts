// Gemini `GenerateContentResponse` (JSON) → OpenAI `chat.completion` (provider-reference.md §3.4,
// §4.5–4.7). One choice per candidate; thoughts go to the non-standard `reasoning_content` that
// LiteLLM-style clients read; a prompt Gemini refused outright becomes one `content_filter` choice.
import type { ChatCompletion, ToolCall, TranslateContext } from '../types.js';
import { asArray, asNumber, asRecord, asString } from '../shared/lenient-json.js';
import { mapGeminiFinishReason } from './finish-reason.js';
import { fromGeminiLogprobs, type OpenAIChoiceLogprobs } from './logprobs.js';
import { isPromptBlocked, readCandidateParts, responseModel, toOpenAIToolCall } from './parts.js';
import { fromGeminiUsage } from './usage.js';

type Choice = ChatCompletion['choices'][number];
/** What we put in a choice beyond types.ts: thoughts and real log probabilities. */
type GeminiChoice = Omit<Choice, 'message' | 'logprobs'> & {
  message: Choice['message'] & { reasoning_content?: string };
  logprobs: OpenAIChoiceLogprobs | null;
};

export function fromGeminiResponse(body: unknown, ctx: TranslateContext): ChatCompletion {
  const response = asRecord(body);
  const candidates = asArray(response.candidates);
  let callIndex = 0;
  const choices = candidates.map((candidate, i): GeminiChoice => {
    const c = asRecord(candidate);
    const text: string[] = [];
    const thoughts: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const part of readCandidateParts(c)) {
      if (part.kind === 'text') text.push(part.text);
      else if (part.kind === 'thought') thoughts.push(part.text);
      else toolCalls.push(toOpenAIToolCall(part, ctx, callIndex++));
    }
    const message: GeminiChoice['message'] = { role: 'assistant', content: text.length > 0 ? text.join('') : null, refusal: null };
    if (thoughts.length > 0) message.reasoning_content = thoughts.join('');
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return {
      index: asNumber(c.index) ?? i,
      message,
      logprobs: fromGeminiLogprobs(c.logprobsResult),
      finish_reason: mapGeminiFinishReason(asString(c.finishReason), toolCalls.length > 0),
    };
  });
  if (choices.length === 0) {
    // No candidates: a blocked prompt (content_filter), or an empty answer read leniently.
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      logprobs: null,
      finish_reason: isPromptBlocked(response) ? 'content_filter' : 'stop',
    });
  }
  const completion: ChatCompletion = {
    id: asString(response.responseId) ?? ctx.fallbackId,
    object: 'chat.completion',
    created: ctx.created,
    model: responseModel(response.modelVersion, ctx),
    choices: choices as Choice[], // widened only by the extension fields above
  };
  const usage = fromGeminiUsage(response.usageMetadata);
  if (usage !== undefined) completion.usage = usage;
  return completion;
}
