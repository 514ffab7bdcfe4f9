// Gemini `streamGenerateContent?alt=sse` events → OpenAI `chat.completion.chunk`s
// (provider-reference.md §3.5, §4.8). Each Gemini event is a complete response fragment: text
// parts carry only new text, a functionCall arrives whole, usageMetadata is cumulative and the
// last fragment has finishReason. Gemini sends no terminator, so the final choice chunk and the
// usage chunk are written at upstream EOF (`end()`), and an `{"error":…}` event ends the stream.
import type { ChatCompletionChunk, OpenAIErrorBody, OpenAIUsage, SseEvent, StreamOutput, StreamTranslator, TranslateContext } from '../types.js';
import { asArray, asNumber, asRecord, asString, isRecord, tryParseJson } from '../shared/lenient-json.js';
import { fromGeminiStreamError } from './errors.js';
import { mapGeminiFinishReason } from './finish-reason.js';
import { fromGeminiLogprobs, type OpenAIChoiceLogprobs } from './logprobs.js';
import { isPromptBlocked, readCandidateParts, responseModel, toOpenAIToolCall } from './parts.js';
import { fromGeminiUsage } from './usage.js';

type ChunkChoice = ChatCompletionChunk['choices'][number];
/** A chunk choice widened with the extension fields we emit (thoughts, real log probabilities). */
type GeminiChunkChoice = Omit<ChunkChoice, 'delta' | 'logprobs'> & {
  delta: ChunkChoice['delta'] & { reasoning_content?: string };
  logprobs: OpenAIChoiceLogprobs | null;
};

interface ChoiceState { toolCalls: number; finishReason?: string }

const EMPTY_STREAM: OpenAIErrorBody = {
  error: { message: 'Gemini ended the stream without sending a response.', type: 'server_error', param: null, code: 'upstream_empty_response' },
};

const ZERO_USAGE: OpenAIUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/**
 * The text of a candidate whose content is a single plain text part, the usual fragment, read
 * without building part views; anything else (calls, thoughts, several parts) is `undefined` and
 * goes through readCandidateParts, which gives the same result for this one case.
 */
function onlyText(candidate: Record<string, unknown>): string | undefined {
  const content = candidate.content;
  const parts = isRecord(content) ? content.parts : undefined;
  if (!Array.isArray(parts) || parts.length !== 1) return undefined;
  const part: unknown = parts[0];
  if (!isRecord(part) || part.functionCall !== undefined || part.thought !== undefined) return undefined;
  return typeof part.text === 'string' && part.text !== '' ? part.text : undefined;
}

export function createGeminiStreamTranslator(ctx: TranslateContext): StreamTranslator {
  let id = ctx.fallbackId;
  let model = responseModel(undefined, ctx);
  let served: string | undefined; // modelVersion: the model that answers
  let started = false;
  let finished = false;
  let blocked = false;
  let usageMetadata: Record<string, unknown> | undefined; // the latest; converted when asked for
  let callIndex = 0; // across choices: only used to synthesize ids Gemini did not send
  const choices = new Map<number, ChoiceState>();

  const chunk = (choice: GeminiChunkChoice | null, extra?: { usage: OpenAIUsage }): StreamOutput => {
    const c: ChatCompletionChunk = {
      id, object: 'chat.completion.chunk', created: ctx.created, model,
      choices: choice === null ? [] : [choice as ChunkChoice], // widened only by the extension fields
    };
    if (extra !== undefined) c.usage = extra.usage;
    else if (ctx.includeUsage) c.usage = null;
    return { kind: 'chunk', chunk: c };
  };
  const delta = (index: number, d: GeminiChunkChoice['delta'], logprobs: OpenAIChoiceLogprobs | null = null): StreamOutput =>
    chunk({ index, delta: d, logprobs, finish_reason: null });

  /** The choice's state; its first appearance writes the `role` chunk. */
  const open = (index: number, out: StreamOutput[]): ChoiceState => {
    let state = choices.get(index);
    if (state === undefined) {
      state = { toolCalls: 0 };
      choices.set(index, state);
      out.push(delta(index, { role: 'assistant', content: '' }));
    }
    return state;
  };

  const onResponse = (response: Record<string, unknown>): StreamOutput[] => {
    if (!started) {
      started = true;
      id = asString(response.responseId) ?? ctx.fallbackId;
      served = asString(response.modelVersion)?.replace(/^models\//, '');
      model = responseModel(response.modelVersion, ctx);
    }
    if (isRecord(response.usageMetadata)) usageMetadata = response.usageMetadata;
    const out: StreamOutput[] = [];
    if (response.promptFeedback !== undefined && isPromptBlocked(response)) {
      blocked = true;
      open(0, out);
    }
    const candidates = asArray(response.candidates);
    for (let i = 0; i < candidates.length; i++) {
      const c = asRecord(candidates[i]);
      const index = asNumber(c.index) ?? i;
      const state = open(index, out);
      const text = c.logprobsResult === undefined ? onlyText(c) : undefined;
      if (text !== undefined) {
        out.push(delta(index, { content: text }));
      } else {
        // Log probabilities go on this fragment's first text chunk.
        let logprobs = c.logprobsResult === undefined ? null : fromGeminiLogprobs(c.logprobsResult);
        for (const part of readCandidateParts(c)) {
          if (part.kind === 'call') {
            const call = toOpenAIToolCall(part, ctx, callIndex++);
            out.push(delta(index, { tool_calls: [{ index: state.toolCalls++, ...call }] }));
          } else if (part.kind === 'thought') {
            out.push(delta(index, { reasoning_content: part.text }));
          } else {
            out.push(delta(index, { content: part.text }, logprobs));
            logprobs = null;
          }
        }
      }
      const finishReason = asString(c.finishReason);
      if (finishReason !== undefined) state.finishReason = finishReason;
    }
    return out;
  };

  return {
    push(event: SseEvent): StreamOutput[] {
      if (finished) return [];
      const data = tryParseJson(event.data);
      if (!isRecord(data)) return []; // not JSON: ignored, like any event we do not know
      if (data.error !== undefined && data.error !== null) {
        finished = true;
        return [{ kind: 'error', error: fromGeminiStreamError(data.error) }];
      }
      return onResponse(data);
    },

    end(): StreamOutput[] {
      if (finished) return [];
      finished = true;
      if (!started) return [{ kind: 'error', error: EMPTY_STREAM }];
      const out: StreamOutput[] = [];
      if (choices.size === 0) open(0, out);
      for (const [index, state] of [...choices].sort(([a], [b]) => a - b)) {
        const reason = blocked && state.finishReason === undefined
          ? 'content_filter'
          : mapGeminiFinishReason(state.finishReason, state.toolCalls > 0);
        out.push(chunk({ index, delta: {}, logprobs: null, finish_reason: reason }));
      }
      // OpenAI sends this chunk whenever include_usage is set; zeros if Gemini reported nothing.
      if (ctx.includeUsage) out.push(chunk(null, { usage: fromGeminiUsage(usageMetadata) ?? ZERO_USAGE }));
      return out;
    },

    usage: () => fromGeminiUsage(usageMetadata),
    // Gemini sends no terminator: only an error event ends the stream before the EOF.
    complete: () => finished,
    model: () => served,
  };
}
