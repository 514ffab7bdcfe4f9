// Loads the recorded Gemini fixtures (test/fixtures/gemini) and runs them through the translator
// the way the daemon will: raw bytes → SseParser → StreamTranslator → the `data:` payloads a client sees.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SseParser } from '../../src/daemon/http/sse.js';
import { gemini } from './via-hub.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import type { StreamOutput, TranslateContext } from './via-hub.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/gemini/', import.meta.url));

export function fixturePath(name: string): string {
  return `${FIXTURES}${name}`;
}

export function hasFixture(name: string): boolean {
  return existsSync(fixturePath(name));
}

export function readJson<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(fixturePath(name), 'utf8')) as T;
}

export function readJsonl(name: string): unknown[] {
  return readFileSync(fixturePath(name), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown);
}

/** Case names: every fixture starts with its OpenAI request. */
export function fixtureCases(): string[] {
  return readdirSync(FIXTURES).filter((f) => f.endsWith('.openai-request.json')).map((f) => f.slice(0, -'.openai-request.json'.length)).sort();
}

export function ctxFor(req: ChatCompletionRequest): TranslateContext {
  return {
    model: req.model.replace(/^gemini\//, ''),
    created: 1767225600,
    fallbackId: 'chatcmpl-fallback01',
    includeUsage: req.stream_options?.include_usage === true,
  };
}

/** What goes on the wire after `data: ` for each output (a chunk, or an `{"error":…}` object). */
export function wirePayloads(outputs: StreamOutput[]): unknown[] {
  return JSON.parse(JSON.stringify(outputs.map((o) => (o.kind === 'chunk' ? o.chunk : o.error)))) as unknown[];
}

/** Feeds the network chunks through one parser and one translator, then ends both. */
export function translateStream(pieces: Uint8Array[], ctx: TranslateContext): StreamOutput[] {
  const parser = new SseParser();
  const translator = gemini.createStreamTranslator(ctx);
  const out: StreamOutput[] = [];
  for (const piece of pieces) for (const event of parser.push(piece)) out.push(...translator.push(event));
  for (const event of parser.end()) out.push(...translator.push(event));
  out.push(...translator.end());
  return out;
}
