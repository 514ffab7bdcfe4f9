// A translated stream through the hub: provider SSE bytes → the one SSE parser → the provider
// protocol's stream reader (IR events) → the door protocol's renderer (the client's frames). One
// synchronous pass per upstream network chunk, so the relay sink can write each chunk's text the
// moment it arrives (stream-relay.ts's createRelaySink does the writing and the accounting).
import type { StreamReader, StreamRenderer } from '../../providers/ir/protocol.js';
import type { ErrorKind, StreamEvent } from '../../providers/ir/types.js';
import type { SseEvent } from '../../providers/types.js';
import type { GatewayError } from '../http/errors.js';
import { irUsageToTokens } from '../observe/events.js';
import { SseParser } from '../http/sse.js';
import type { StreamRelay } from './stream-relay.js';

// The one IR usage → tracker counts conversion, still importable from here.

/** The neutral kind of a failure the gateway itself saw mid-stream. */
export function kindOf(code: string): ErrorKind {
  switch (code) {
    case 'upstream_interrupted': return 'stream_broken';
    case 'upstream_timeout': return 'timeout';
    case 'upstream_unreachable': return 'unreachable';
    default: return 'server';
  }
}

export function createIrRelay(reader: StreamReader, renderer: StreamRenderer): StreamRelay {
  const parser = new SseParser();
  let completed = false;
  let failed: { code: string; message: string } | undefined;
  let model: string | undefined;
  let textEvents = 0;

  const render = (events: StreamEvent[], text: string): string => {
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      if (ev.type === 'text') textEvents++;
      else if (ev.type === 'start' && ev.model) model = ev.model;
      else if (ev.type === 'error') failed = { code: ev.error.code ?? ev.error.kind, message: ev.error.message };
      text += renderer.push(ev);
    }
    return text;
  };
  /** The provider is done (it said so, failed, or its bytes ended): whatever closes the client's stream. */
  const close = (text: string): string => {
    completed = true;
    return text + renderer.end();
  };
  const next = (events: SseEvent[], eof: boolean): string => {
    if (completed) return '';
    let text = '';
    // The provider says when it is done (Anthropic's message_stop, OpenAI's [DONE]): close then,
    // not when its socket closes.
    for (let i = 0; i < events.length; i++) {
      text = render(reader.push(events[i]!), text);
      if (reader.complete()) return close(text);
    }
    if (!eof) return text;
    return close(render(reader.end(), text));
  };

  return {
    push: (chunk) => next(parser.push(chunk), false),
    end: () => next(parser.end(), true),
    completed: () => completed,
    failed: () => failed,
    usage: () => irUsageToTokens(reader.usage()),
    outputTokens: () => reader.usage()?.outputTokens ?? textEvents,
    model: () => model,
    errorFrame: (ge: GatewayError) => {
      completed = true;
      // end() closes what the error leaves open (Gemini's JSON array); after an error it adds no finish.
      return renderer.push({ type: 'error', error: { status: ge.status, kind: kindOf(ge.code), message: ge.message, code: ge.code } }) + renderer.end();
    },
  };
}
