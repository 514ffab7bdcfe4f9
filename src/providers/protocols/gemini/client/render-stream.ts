// IR stream events → Gemini's `streamGenerateContent` stream (provider-reference.md §3.5), as
// Google frames it: with `?alt=sse`, `data: <chunk>\r\n\r\n` per chunk; without, one JSON array
// written as it grows (`[<chunk>`, `\n,<chunk>`…, `\n]`), chosen by `ctx.streamFormat`. Each chunk
// is a whole GenerateContentResponse with only the new parts: a frame per text or thought delta,
// a function call whole in one part when it ends (Gemini never splits arguments), and the last
// chunk with finishReason and usageMetadata. modelVersion and responseId are on every chunk. An
// error, mid-stream or a stream cut short, is Google's `{"error":…}` chunk, never a clean finish.
import type { RenderContext, StreamRenderer } from '../../../ir/protocol.js';
import type { ProviderError, ProviderState, StreamEvent, Usage } from '../../../ir/types.js';
import { toGeminiFinishReason } from '../finish-reason.js';
import { toGeminiUsage } from '../usage.js';
import { Carry } from './carry.js';
import { googleErrorBody } from './render-error.js';
import { callPart, logprobsResult } from './render-response.js';

const STREAM_CUT: ProviderError = {
  status: 502, kind: 'stream_broken', message: 'the provider ended the stream before it was complete',
};

interface OpenCall { name: string; args: string; state?: ProviderState }

export function createGenerateContentStreamRenderer(ctx: RenderContext): StreamRenderer {
  const array = ctx.streamFormat === 'json-array';
  let frames = 0;
  let done = false;
  let closed = false;
  let model = ctx.model;
  let id = ctx.fallbackId;
  /** `"modelVersion":…,"responseId":…`, fixed by the first chunk. */
  let meta: string | undefined;
  let usage: Usage | undefined;
  let reasoning: string | undefined; // the open reasoning block's text so far
  const carry = new Carry();
  const calls = new Map<string, OpenCall>();

  const frame = (json: string): string => {
    if (!array) return `data: ${json}\r\n\r\n`;
    return frames++ === 0 ? `[${json}` : `\n,${json}`;
  };
  const tail = (): string => (meta ??= `"modelVersion":${JSON.stringify(model)},"responseId":${JSON.stringify(id)}`);
  const chunk = (parts: string, extra = ''): string =>
    frame(`{"candidates":[{"content":{"parts":[${parts}],"role":"model"}${extra},"index":0}],${tail()}}`);
  /** Reasoning still open when something else starts ends there, without state. */
  const closeReasoning = (): void => { reasoning = undefined; };
  const withSignature = (json: string, signature: string | undefined): string =>
    signature === undefined ? `{${json}}` : `{${json},"thoughtSignature":"${signature}"}`; // base64: nothing to escape
  const call = (callId: string, c: OpenCall, state: ProviderState | undefined): string =>
    JSON.stringify(callPart(callId, c.name, c.args, carry.take(state)));
  const error = (e: ProviderError): string => {
    done = true;
    return frame(JSON.stringify(googleErrorBody(e)));
  };

  return {
    push(ev: StreamEvent): string {
      if (done) return '';
      switch (ev.type) {
        case 'start':
          if (ev.usage) usage = ev.usage;
          if (meta === undefined) {
            if (ev.id !== undefined && ev.id !== '') id = ev.id;
            if (ev.model !== undefined && ctx.modelPrefix !== undefined) model = ctx.modelPrefix + ev.model;
          }
          return '';
        case 'text': {
          if (ev.choice || (ev.text === '' && ev.state === undefined)) return '';
          closeReasoning();
          const part = withSignature(`"text":${JSON.stringify(ev.text)}`, carry.take(ev.state));
          return chunk(part, ev.logprobs ? `,"logprobsResult":${JSON.stringify(logprobsResult(ev.logprobs))}` : '');
        }
        case 'reasoning':
          if (ev.choice || ev.text === '') return '';
          reasoning = (reasoning ?? '') + ev.text;
          return chunk(`{"text":${JSON.stringify(ev.text)},"thought":true}`);
        case 'reasoning-end':
          if (ev.choice) return '';
          if (ev.state !== undefined) carry.reasoning(ev.redacted === true ? { type: 'reasoning', text: reasoning ?? '', state: ev.state, redacted: true } : { type: 'reasoning', text: reasoning ?? '', state: ev.state });
          closeReasoning();
          return '';
        case 'tool-call-start': {
          if (ev.choice) return '';
          closeReasoning();
          const c: OpenCall = { name: ev.name, args: ev.arguments ?? '' };
          if (ev.state !== undefined) c.state = ev.state;
          calls.set(ev.id, c);
          return '';
        }
        case 'tool-call-arguments': {
          const c = ev.choice ? undefined : calls.get(ev.id);
          if (c !== undefined) c.args += ev.delta;
          return '';
        }
        case 'tool-call-end': {
          const c = ev.choice ? undefined : calls.get(ev.id);
          if (c === undefined) return '';
          calls.delete(ev.id);
          return chunk(call(ev.id, c, ev.state ?? c.state));
        }
        case 'usage':
          usage = ev.usage;
          return '';
        case 'finish': {
          if (ev.choice) return '';
          done = true;
          // Calls the provider never closed are sent as they stand; reasoning left over rides on an empty thought.
          const parts: string[] = [];
          for (const [callId, c] of calls) parts.push(call(callId, c, c.state));
          calls.clear();
          const rest = carry.take(undefined);
          if (rest !== undefined) parts.push(`{"text":"","thought":true,"thoughtSignature":"${rest}"}`);
          const refusal = ev.refusal === undefined ? '' : `,"finishMessage":${JSON.stringify(ev.refusal)}`;
          return frame(
            `{"candidates":[{"content":{"parts":[${parts.join(',')}],"role":"model"},"finishReason":"${toGeminiFinishReason(ev.reason)}"${refusal},"index":0}],` +
              `"usageMetadata":${JSON.stringify(toGeminiUsage(ev.usage ?? usage))},${tail()}}`,
          );
        }
        case 'error':
          return error(ev.error);
        default: { const never: never = ev; return never; }
      }
    },
    end(): string {
      if (closed) return '';
      closed = true;
      const text = done ? '' : error(STREAM_CUT);
      return array ? `${text}\n]` : text;
    },
  };
}
