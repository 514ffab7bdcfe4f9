// Anthropic Messages SSE events → OpenAI `chat.completion.chunk`s (provider-reference.md §2.7, §4.8).
// A small state machine over parsed events: it never sees bytes, so however the upstream bytes
// were split, the same events give the same chunks. Text is forwarded as it arrives, never held.
import type { ChatCompletionChunk, SseEvent, StreamOutput, StreamTranslator, ToolCallDelta, TranslateContext } from '../types.js';
import { asNumber, asRecord, asString, tryParseJson } from '../shared/lenient-json.js';
import { fromAnthropicStreamError, streamEndedEarlyError } from './errors.js';
import { mapAnthropicStopReason } from './finish-reason.js';
import { mergeAnthropicUsage, toOpenAIUsage, ZERO_TOKEN_COUNTS, type AnthropicTokenCounts } from './usage.js';

/** The OpenAI delta plus `reasoning_content` (thinking text; non-standard, as LiteLLM sends it). */
export type AnthropicChunkDelta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string };

type Json = Record<string, unknown>;

interface ToolBlock { index: number; sentArguments: boolean }

/** An event's JSON payload; anything else reads as an empty record. */
function payload(event: SseEvent): Json {
  return asRecord(tryParseJson(event.data));
}

export function createAnthropicStreamTranslator(ctx: TranslateContext): StreamTranslator {
  let phase: 'idle' | 'open' | 'done' = 'idle';
  let id = ctx.fallbackId;
  let model = ctx.displayModel ?? `anthropic/${ctx.model}`;
  let served: string | undefined; // message_start's model: the snapshot that answers
  let counts: AnthropicTokenCounts | undefined;
  let stopReason: unknown = null;
  let refusal: string | undefined;
  let nextToolIndex = 0;
  const tools = new Map<number, ToolBlock>(); // Anthropic block index → OpenAI tool call

  // Keys in ChatCompletionChunk order (the daemon's chunk writer relies on it); no spreads, as
  // this runs once per text delta.
  const chunk = (delta: AnthropicChunkDelta, finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null): StreamOutput => {
    const c: ChatCompletionChunk = { id, object: 'chat.completion.chunk', created: ctx.created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
    if (ctx.includeUsage) c.usage = null;
    return { kind: 'chunk', chunk: c };
  };
  const toolDelta = (call: ToolCallDelta): StreamOutput => chunk({ tool_calls: [call] });

  function start(message: unknown): StreamOutput[] {
    const m = asRecord(message);
    id = asString(m.id) ?? ctx.fallbackId;
    served = asString(m.model);
    model = ctx.displayModel ?? `anthropic/${served ?? ctx.model}`;
    counts = mergeAnthropicUsage(ZERO_TOKEN_COUNTS, m.usage);
    phase = 'open';
    return [chunk({ role: 'assistant', content: '' })];
  }

  /** Lenient: content before any `message_start` opens the message with default id and model. */
  function opened(outputs: StreamOutput[]): StreamOutput[] {
    return phase === 'idle' && outputs.length > 0 ? [...start(undefined), ...outputs] : outputs;
  }

  function blockStart(d: Json): StreamOutput[] {
    const index = asNumber(d.index) ?? -1;
    const block = asRecord(d.content_block);
    switch (block.type) {
      case 'tool_use': {
        if (tools.has(index)) return []; // a repeated start must not open a second call
        const tool = { index: nextToolIndex++, sentArguments: false };
        tools.set(index, tool);
        const name = asString(block.name) ?? '';
        return [toolDelta({ index: tool.index, id: asString(block.id) ?? '', type: 'function', function: { name, arguments: '' } })];
      }
      case 'text':
        return text(block.text);
      case 'thinking':
        return reasoning(block.thinking);
      default:
        return []; // redacted_thinking, server tools, unknown blocks
    }
  }

  function blockDelta(d: Json): StreamOutput[] {
    const delta = asRecord(d.delta);
    switch (delta.type) {
      case 'text_delta':
        return text(delta.text);
      case 'thinking_delta':
        return reasoning(delta.thinking);
      case 'input_json_delta': {
        const tool = tools.get(asNumber(d.index) ?? -1);
        const partial = asString(delta.partial_json) ?? '';
        if (tool === undefined || partial === '') return []; // Anthropic opens with an empty fragment
        tool.sentArguments = true;
        return [toolDelta({ index: tool.index, function: { arguments: partial } })];
      }
      default:
        return []; // signature_delta, citations_delta, unknown deltas
    }
  }

  /** A tool with no parameters streams only `""`; OpenAI clients expect `"{}"` to parse. */
  function blockStop(d: Json): StreamOutput[] {
    const tool = tools.get(asNumber(d.index) ?? -1);
    if (tool === undefined || tool.sentArguments) return [];
    tool.sentArguments = true;
    return [toolDelta({ index: tool.index, function: { arguments: '{}' } })];
  }

  function text(value: unknown): StreamOutput[] {
    const s = asString(value) ?? '';
    return s === '' ? [] : [chunk({ content: s })];
  }

  function reasoning(value: unknown): StreamOutput[] {
    const s = asString(value) ?? '';
    return s === '' ? [] : [chunk({ reasoning_content: s })];
  }

  function messageDelta(d: Json): void {
    const delta = asRecord(d.delta);
    if (typeof delta.stop_reason === 'string') stopReason = delta.stop_reason;
    const explanation = asString(asRecord(delta.stop_details).explanation);
    if (explanation !== undefined && explanation !== '') refusal = explanation;
    counts = mergeAnthropicUsage(counts ?? ZERO_TOKEN_COUNTS, d.usage);
  }

  function finish(): StreamOutput[] {
    phase = 'done';
    const out: StreamOutput[] = [];
    if (refusal !== undefined && stopReason === 'refusal') out.push(chunk({ refusal }));
    out.push(chunk({}, mapAnthropicStopReason(stopReason)));
    if (ctx.includeUsage) {
      out.push({ kind: 'chunk', chunk: { id, object: 'chat.completion.chunk', created: ctx.created, model, choices: [], usage: toOpenAIUsage(counts ?? ZERO_TOKEN_COUNTS) } });
    }
    return out;
  }

  return {
    push(event: SseEvent): StreamOutput[] {
      if (phase === 'done') return [];
      // Anthropic names every event, so the payload is parsed only for the events that need it:
      // pings, message_stop and event types newer than this code are never parsed (an unnamed
      // event, which Anthropic does not send, is parsed once more for its `type`).
      switch (event.event ?? asString(payload(event).type)) {
        case 'content_block_delta':
          return opened(blockDelta(payload(event)));
        case 'message_start':
          return phase === 'idle' ? start(payload(event).message) : [];
        case 'content_block_start':
          return opened(blockStart(payload(event)));
        case 'content_block_stop':
          return opened(blockStop(payload(event)));
        case 'message_delta':
          messageDelta(payload(event));
          return [];
        case 'message_stop':
          return opened(finish());
        case 'error':
          phase = 'done';
          return [{ kind: 'error', error: fromAnthropicStreamError(tryParseJson(event.data)) }];
        default:
          return []; // ping and event types newer than this code
      }
    },
    end(): StreamOutput[] {
      if (phase !== 'open') return [];
      phase = 'done';
      return [{ kind: 'error', error: streamEndedEarlyError() }];
    },
    usage() {
      return counts === undefined ? undefined : toOpenAIUsage(counts);
    },
    complete: () => phase === 'done',
    model: () => served,
  };
}
