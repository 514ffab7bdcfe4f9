// Mock-provider answers that stream slowly (chunks `delayMs` apart), so a monitor can watch a
// stream in flight and a chat can be stopped mid-answer. OpenAI's wire format.
import type { MockHandler, MockReply } from '../helpers/mock-provider.js';

export function words(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `word${i + 1} `);
}

/** An OpenAI chat-completions stream of `pieces`, with usage when asked. No `[DONE]`: the openai SDK
 * closes the connection as soon as it reads one, and the mock pauses after every chunk, so the
 * gateway would count the request as closed by the client. */
export function openaiStream(model: string, pieces: string[], delayMs: number, withUsage = true): MockReply {
  const chunk = (delta: unknown, finish: string | null, usage?: unknown) => `data: ${JSON.stringify({
    id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1767225600, model,
    choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: usage ?? null,
  })}\n\n`;
  return {
    headers: { 'content-type': 'text/event-stream' },
    delayMs,
    chunks: [
      chunk({ role: 'assistant', content: '' }, null),
      ...pieces.map((p) => chunk({ content: p }, null)),
      chunk({}, 'stop'),
      ...(withUsage ? [chunk(null, null, { prompt_tokens: 9, completion_tokens: pieces.length, total_tokens: 9 + pieces.length })] : []),
    ],
  };
}

/** Streams slowly for chat completions whose model matches; everything else gets the default answer. */
export function slowOpenAI(opts: { delayMs: number; pieces?: string[]; when?: (model: string) => boolean }): MockHandler {
  return (r) => {
    if (r.method !== 'POST' || !r.url.startsWith('/v1/chat/completions')) return undefined;
    let body: { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
    try { body = JSON.parse(r.body.toString('utf8')) as typeof body; } catch { return undefined; }
    const model = String(body.model ?? '');
    if (!body.stream || (opts.when && !opts.when(model))) return undefined;
    return openaiStream(model, opts.pieces ?? words(20), opts.delayMs, true);
  };
}
