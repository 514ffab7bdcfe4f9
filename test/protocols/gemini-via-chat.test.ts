// Every recorded Gemini fixture (test/fixtures/gemini) through the hub's two modules, the way
// /v1/chat/completions reaches a Gemini model: Chat door → IR → Gemini provider for the request;
// Gemini's bytes → reader → Chat renderer for streams (the exact text a client gets, however the
// bytes are split); Gemini's JSON → reader → Chat renderer for answers.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RenderContext, Target } from '../../src/providers/ir/protocol.js';
import { geminiProvider } from '../../src/providers/protocols/gemini/provider/index.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import { fixtureCases, fixturePath, hasFixture, readJson, readJsonl } from '../providers/gemini-fixture-helpers.js';
import { cut, expectedText, readFrames, renderStream, type Output } from './chat-composition-helpers.js';

const cases = fixtureCases();
const requestOf = (name: string) => readJson<ChatCompletionRequest>(`${name}.openai-request.json`);
const targetFor = (req: ChatCompletionRequest): Target => ({ provider: 'gemini', displayName: 'Gemini', model: req.model.replace(/^gemini\//, ''), protocol: 'gemini' });

/** The Gemini fixtures always show `gemini/<the model version Gemini reports>`. */
function contextFor(req: ChatCompletionRequest): RenderContext {
  return { model: `gemini/${targetFor(req).model}`, modelPrefix: 'gemini/', created: 1767225600, fallbackId: 'chatcmpl-fallback01', includeUsage: req.stream_options?.include_usage === true };
}

/**
 * The recorded `data:` payloads as outputs. One deliberate change: Gemini's 503 UNAVAILABLE is the
 * neutral `overloaded` kind, which the one error table (ir/errors.ts) gives OpenAI code
 * `overloaded` for every provider (Anthropic's overloaded_error has always had it); the Gemini
 * translator left it null.
 */
function expectedOutputs(name: string): Output[] {
  return (readJsonl(`${name}.chunks.jsonl`) as Array<Record<string, any>>).map((payload) => {
    if (!('error' in payload) || 'choices' in payload) return { kind: 'chunk', chunk: payload };
    const error = payload.error.message === 'The model is overloaded. Please try again later.' && payload.error.code === null ? { ...payload.error, code: 'overloaded' } : payload.error;
    return { kind: 'error', error: { error } };
  });
}

function streamText(name: string, pieces: Uint8Array[]): string {
  const req = requestOf(name);
  return renderStream(pieces, geminiProvider.createStreamReader(targetFor(req)), openaiChatClient.createStreamRenderer(contextFor(req)));
}

describe('Gemini via the Chat door: requests', () => {
  it.each(cases)('%s', (name) => {
    const req = requestOf(name);
    const target = targetFor(req);
    const call = geminiProvider.buildRequest(openaiChatClient.parseRequest(req, target), target);
    expect(JSON.parse(JSON.stringify(call))).toStrictEqual(readJson(`${name}.gemini-request.json`));
  });
});

describe('Gemini via the Chat door: streams', () => {
  const streams = cases.filter((name) => hasFixture(`${name}.sse`));

  it.each(streams)('%s renders the recorded chunks, byte for byte, closed by [DONE] unless it failed', (name) => {
    const expected = expectedOutputs(name);
    const text = streamText(name, [readFileSync(fixturePath(`${name}.sse`))]);
    const { outputs, done } = readFrames(text);
    expect(outputs).toStrictEqual(expected);
    expect(done).toBe(!expected.some((o) => o.kind === 'error'));
    expect(text).toBe(expectedText(expected));
  });

  it.each(streams)('%s gives the same text however its bytes are split', (name) => {
    const bytes = readFileSync(fixturePath(`${name}.sse`));
    const whole = streamText(name, [bytes]);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (points) => {
        expect(streamText(name, cut(bytes, points))).toBe(whole);
      }),
      { numRuns: 150 },
    );
    const single = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(streamText(name, single)).toBe(whole);
  });
});

describe('Gemini via the Chat door: non-streaming answers', () => {
  it.each(cases.filter((name) => hasFixture(`${name}.response.json`)))('%s', (name) => {
    const req = requestOf(name);
    const answer = geminiProvider.readResponse(readJson(`${name}.response.json`), targetFor(req));
    expect(JSON.parse(JSON.stringify(openaiChatClient.renderResponse(answer, contextFor(req))))).toStrictEqual(readJson(`${name}.completion.json`));
  });
});
