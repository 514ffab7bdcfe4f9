// IR stream events → `chat.completion.chunk` frames (provider-reference.md §1.4, §4.8), written
// as each event comes. Frames are built as strings: the head (id, object, created, model: the same
// in every chunk) is serialised once, and a text delta is written around JSON.stringify of its
// text alone, byte for byte what JSON.stringify of the whole chunk would give. Each choice opens
// with a role chunk; a tool call that streamed no arguments gets `{}` (clients parse them); with
// include_usage every chunk carries `usage: null` and a last chunk the counts. The stream closes
// with `data: [DONE]`, or with one `{"error":…}` frame and nothing after it.
import type { RenderContext, StreamRenderer } from '../../../ir/protocol.js';
import type { ProviderError, StreamEvent, Usage } from '../../../ir/types.js';
import { toChatFinishReason, toChatLogprobs, toChatUsage } from '../wire.js';
import { renderChatError } from './render-error.js';
import { shownModel } from './render-response.js';
import { encodeToolCallId } from '../../tool-call-id.js';

export const SSE_DONE = 'data: [DONE]\n\n';

const STREAM_CUT: ProviderError = { status: 502, kind: 'stream_broken', message: 'the provider ended the stream before it was complete' };
const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

interface OpenTool { choice: number; index: number; sentArguments: boolean }

export function createChatStreamRenderer(ctx: RenderContext): StreamRenderer {
  const tail = ctx.includeUsage ? ',"usage":null}\n\n' : '}\n\n';
  let head = '';
  let started = false;
  /** The error frame or the end has been written: nothing more. */
  let closed = false;
  let finished = false;
  let usage: Usage | undefined;
  let calls = 0; // across choices: only used to mint ids the provider did not send
  const opened: boolean[] = [];
  const nextToolIndex: number[] = [];
  const tools = new Map<string, OpenTool>();

  const begin = (id: string | undefined, model: string | undefined): void => {
    started = true;
    head = `data: {"id":${JSON.stringify(id ?? ctx.fallbackId)},"object":"chat.completion.chunk","created":${JSON.stringify(ctx.created)},"model":${JSON.stringify(shownModel(ctx, model))},"choices":`;
  };
  const frame = (choice: number, delta: string, finish = 'null', logprobs = 'null'): string =>
    `${head}[{"index":${choice},"delta":${delta},"logprobs":${logprobs},"finish_reason":${finish}}]${tail}`;
  /** The role chunk the first time a choice appears (and the stream's head before anything). */
  const open = (choice: number): string => {
    if (!started) begin(undefined, undefined);
    if (opened[choice] === true) return '';
    opened[choice] = true;
    return frame(choice, '{"role":"assistant","content":""}');
  };
  const toolFrame = (choice: number, call: string): string => frame(choice, `{"tool_calls":[${call}]}`);
  const fail = (error: ProviderError): string => {
    closed = true;
    return `data: ${JSON.stringify(renderChatError(error).body)}\n\n`;
  };

  function toolStart(ev: Extract<StreamEvent, { type: 'tool-call-start' }>): string {
    const choice = ev.choice ?? 0;
    const text = open(choice);
    const index = nextToolIndex[choice] ?? 0;
    nextToolIndex[choice] = index + 1;
    const args = ev.arguments ?? '';
    tools.set(ev.id, { choice, index, sentArguments: args !== '' });
    const id = encodeToolCallId(ev.id, ev.state, ctx.fallbackId, calls++);
    return text + toolFrame(choice, `{"index":${index},"id":${JSON.stringify(id)},"type":"function","function":{"name":${JSON.stringify(ev.name)},"arguments":${JSON.stringify(args)}}}`);
  }

  function finish(ev: Extract<StreamEvent, { type: 'finish' }>): string {
    const choice = ev.choice ?? 0;
    finished = true;
    if (ev.usage !== undefined) usage = ev.usage;
    let text = open(choice);
    if (ev.refusal !== undefined && ev.refusal !== '') text += frame(choice, `{"refusal":${JSON.stringify(ev.refusal)}}`);
    return text + frame(choice, '{}', `"${toChatFinishReason(ev.reason)}"`);
  }

  return {
    push(ev: StreamEvent): string {
      if (closed) return '';
      switch (ev.type) {
        case 'text': {
          if (ev.text === '') return '';
          const choice = ev.choice ?? 0;
          const delta = `{"content":${JSON.stringify(ev.text)}}`;
          const logprobs = ev.logprobs === undefined ? 'null' : JSON.stringify(toChatLogprobs(ev.logprobs));
          return opened[choice] === true ? frame(choice, delta, 'null', logprobs) : open(choice) + frame(choice, delta, 'null', logprobs);
        }
        case 'reasoning': {
          if (ev.text === '') return '';
          const choice = ev.choice ?? 0;
          return open(choice) + frame(choice, `{"reasoning_content":${JSON.stringify(ev.text)}}`);
        }
        case 'start':
          if (started) return '';
          if (ev.usage !== undefined) usage = ev.usage;
          begin(ev.id, ev.model);
          return open(0);
        case 'reasoning-end':
          return ''; // Chat has no place for a reasoning signature
        case 'tool-call-start':
          return toolStart(ev);
        case 'tool-call-arguments': {
          const tool = tools.get(ev.id);
          if (tool === undefined || ev.delta === '') return '';
          tool.sentArguments = true;
          return toolFrame(tool.choice, `{"index":${tool.index},"function":{"arguments":${JSON.stringify(ev.delta)}}}`);
        }
        case 'tool-call-end': {
          const tool = tools.get(ev.id);
          if (tool === undefined || tool.sentArguments) return '';
          tool.sentArguments = true;
          return toolFrame(tool.choice, `{"index":${tool.index},"function":{"arguments":"{}"}}`);
        }
        case 'usage':
          usage = ev.usage;
          return '';
        case 'finish':
          return finish(ev);
        case 'error':
          return fail(ev.error);
        default: {
          const never: never = ev;
          return never;
        }
      }
    },
    end(): string {
      if (closed) return '';
      if (!finished) return fail(STREAM_CUT);
      closed = true;
      const usageChunk = ctx.includeUsage ? `${head}[],"usage":${JSON.stringify(toChatUsage(usage ?? NO_USAGE))}}\n\n` : '';
      return usageChunk + SSE_DONE;
    },
  };
}
