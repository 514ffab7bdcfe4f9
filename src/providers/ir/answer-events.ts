// A whole IR answer as the stream events a provider would have sent for it, in order: for a
// provider called without streaming on a client's streamed request (a server whose streams lose
// tool calls, quirks.ts `toolsWithoutStreaming`), so the client still gets a proper stream in its
// own protocol from its door's renderer. Each tool call comes whole at its start, as Gemini's do.
import type { Response, StreamEvent } from './types.js';

export function answerAsStreamEvents(answer: Response): StreamEvent[] {
  const start: StreamEvent = { type: 'start' };
  if (answer.id !== undefined) start.id = answer.id;
  if (answer.model !== undefined) start.model = answer.model;
  const out: StreamEvent[] = [start];
  for (const c of answer.choices) {
    const on = c.index === 0 ? {} : { choice: c.index };
    let logprobs = c.logprobs; // on the first text event: Chat puts them on the content they score
    for (const p of c.parts) {
      switch (p.type) {
        case 'reasoning':
          if (p.text !== '') out.push({ type: 'reasoning', text: p.text, ...on });
          out.push({ type: 'reasoning-end', ...(p.state ? { state: p.state } : {}), ...(p.redacted ? { redacted: true } : {}), ...on });
          break;
        case 'text': {
          const ev: StreamEvent = { type: 'text', text: p.text, ...on };
          if (p.state !== undefined) ev.state = p.state;
          if (logprobs !== undefined) { ev.logprobs = logprobs; logprobs = undefined; }
          out.push(ev);
          break;
        }
        case 'tool-call':
          out.push({ type: 'tool-call-start', id: p.id, name: p.name, arguments: p.arguments, ...(p.state ? { state: p.state } : {}), ...on });
          out.push({ type: 'tool-call-end', id: p.id, ...on });
          break;
        default: {
          const never: never = p;
          return never;
        }
      }
    }
  }
  if (answer.usage !== undefined) out.push({ type: 'usage', usage: answer.usage });
  answer.choices.forEach((c, i) => {
    const ev: StreamEvent = { type: 'finish', reason: c.finish };
    if (c.index !== 0) ev.choice = c.index;
    if (c.stopSequence !== undefined) ev.stopSequence = c.stopSequence;
    if (c.refusal !== undefined) ev.refusal = c.refusal;
    if (i === answer.choices.length - 1 && answer.usage !== undefined) ev.usage = answer.usage;
    out.push(ev);
  });
  if (answer.choices.length === 0) out.push({ type: 'finish', reason: 'stop', ...(answer.usage ? { usage: answer.usage } : {}) });
  return out;
}
