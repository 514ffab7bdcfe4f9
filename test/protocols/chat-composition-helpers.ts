// Runs a Chat Completions request and a provider's recorded answers through the hub the way the
// pipeline does: Chat door parse → provider build; provider bytes → SseParser → provider stream
// reader → Chat stream renderer (the text a client gets); JSON answer → reader → Chat renderer.
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { SseParser } from '../../src/daemon/http/sse.js';
import type { RenderContext, StreamReader, StreamRenderer } from '../../src/providers/ir/protocol.js';
import type { OpenAIErrorBody } from '../../src/providers/types.js';

/** Feeds the byte pieces through one parser, reader and renderer; stops reading once the reader is complete. */
export function renderStream(pieces: Uint8Array[], reader: StreamReader, renderer: StreamRenderer): string {
  const parser = new SseParser();
  let text = '';
  const feed = (events: ReturnType<SseParser['push']>): void => {
    for (const event of events) {
      if (reader.complete()) return;
      for (const ev of reader.push(event)) text += renderer.push(ev);
    }
  };
  for (const piece of pieces) {
    feed(parser.push(piece));
    if (reader.complete()) break;
  }
  if (!reader.complete()) feed(parser.end());
  for (const ev of reader.end()) text += renderer.push(ev);
  return text + renderer.end();
}

export type Output = { kind: 'chunk'; chunk: unknown } | { kind: 'error'; error: unknown };

/** The `data:` frames of a Chat stream, read back: chunks and error bodies, and whether `[DONE]` closed it. */
export function readFrames(text: string): { outputs: Output[]; done: boolean } {
  const outputs: Output[] = [];
  let done = false;
  const frames = text.split('\n\n');
  if (frames.pop() !== '') throw new Error('the stream text does not end with a blank line');
  for (const frame of frames) {
    if (!frame.startsWith('data: ')) throw new Error(`not a data frame: ${frame}`);
    if (done) throw new Error('a frame after [DONE]');
    const data = frame.slice('data: '.length);
    if (data === '[DONE]') { done = true; continue; }
    const value = JSON.parse(data) as Record<string, unknown>;
    outputs.push('error' in value && !('choices' in value) ? { kind: 'error', error: value } : { kind: 'chunk', chunk: value });
  }
  return { outputs, done };
}

/** The chunks among read-back outputs, typed as the openai SDK reads them; throws on an error output. */
export function chunksOf(outputs: Output[]): ChatCompletionChunk[] {
  return outputs.map((o) => {
    if (o.kind !== 'chunk') throw new Error(`an error where a chunk was expected: ${JSON.stringify(o.error)}`);
    return o.chunk as ChatCompletionChunk;
  });
}

/**
 * A Chat door's rendered error read as OpenAI's error body (ClientProtocol types every door's
 * body as unknown); throws when it is not one.
 */
export function chatError(r: { status: number; body: unknown }): { status: number; body: OpenAIErrorBody } {
  const error = typeof r.body === 'object' && r.body !== null && 'error' in r.body ? r.body.error : undefined;
  if (typeof error !== 'object' || error === null || !('message' in error) || typeof error.message !== 'string') {
    throw new Error(`not an OpenAI error body: ${JSON.stringify(r.body)}`);
  }
  return { status: r.status, body: r.body as OpenAIErrorBody };
}

/** The exact text today's unified endpoint writes for these outputs: one `data:` frame each, then `[DONE]` unless one failed. */
export function expectedText(outputs: Output[]): string {
  const frames = outputs.map((o) => `data: ${JSON.stringify(o.kind === 'chunk' ? o.chunk : o.error)}\n\n`).join('');
  return outputs.some((o) => o.kind === 'error') ? frames : `${frames}data: [DONE]\n\n`;
}

/** How the daemon names a model on the unified endpoint: as asked when prefixed, else `<provider>/<the id it served>`. */
export function renderContext(requestModel: string, provider: string, fallbackId: string, includeUsage: boolean): RenderContext {
  const prefixed = requestModel.startsWith(`${provider}/`);
  return prefixed
    ? { model: requestModel, created: 1767225600, fallbackId, includeUsage }
    : { model: `${provider}/${requestModel}`, modelPrefix: `${provider}/`, created: 1767225600, fallbackId, includeUsage };
}

/** Random cuts of `bytes` (fast-check gives the points). */
export function cut(bytes: Uint8Array, points: number[]): Uint8Array[] {
  const cuts = [0, ...[...points].sort((a, b) => a - b), bytes.length];
  return cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
}
