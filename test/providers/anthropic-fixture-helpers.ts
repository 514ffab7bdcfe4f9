// Loads the recorded Anthropic fixtures in test/fixtures/anthropic and runs them through the
// translators the way the daemon does: raw SSE bytes → SseParser → stream translator.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SseParser } from '../../src/daemon/http/sse.js';
import { createAnthropicStreamTranslator } from './via-hub.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import type { StreamOutput, TranslateContext } from './via-hub.js';

export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/anthropic/', import.meta.url));

/** Fixture names (`<name>.request.json` files) that have the given companion suffix. */
export function fixtureNames(suffix: '.sse' | '.response.json' | '.request.json'): string[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith(suffix))
    .map((f) => f.slice(0, -suffix.length))
    .sort();
}

export function readFixture(file: string): string {
  return readFileSync(FIXTURE_DIR + file, 'utf8');
}

export function readFixtureBytes(file: string): Buffer {
  return readFileSync(FIXTURE_DIR + file);
}

export function readJson<T = unknown>(file: string): T {
  return JSON.parse(readFixture(file)) as T;
}

export function readJsonl(file: string): unknown[] {
  return readFixture(file).split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown);
}

/** The context the daemon would build for this request (fixed clock and fallback id). */
export function contextFor(req: ChatCompletionRequest): TranslateContext {
  const prefixed = req.model.startsWith('anthropic/');
  return {
    model: prefixed ? req.model.slice('anthropic/'.length) : req.model,
    ...(prefixed ? { displayModel: req.model } : {}),
    created: 1767225600,
    fallbackId: 'chatcmpl-fixture',
    includeUsage: req.stream_options?.include_usage === true,
  };
}

/** Feeds the byte chunks through one parser and one translator, collecting every output in order. */
export function translateChunks(chunks: Uint8Array[], ctx: TranslateContext): StreamOutput[] {
  const parser = new SseParser();
  const translator = createAnthropicStreamTranslator(ctx);
  const out: StreamOutput[] = [];
  for (const chunk of chunks) for (const event of parser.push(chunk)) out.push(...translator.push(event));
  for (const event of parser.end()) out.push(...translator.push(event));
  out.push(...translator.end());
  return out;
}
