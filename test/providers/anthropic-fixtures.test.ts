// Every recorded Anthropic fixture: the OpenAI request translates to exactly the expected Anthropic
// request, the raw SSE bytes translate to exactly the expected chunks (however they are split),
// and each non-streaming body translates to exactly the expected completion.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anthropic } from '../../src/providers/anthropic/index.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import { contextFor, fixtureNames, readFixtureBytes, readJson, readJsonl, translateChunks } from './anthropic-fixture-helpers.js';

const requestOf = (name: string) => readJson<ChatCompletionRequest>(`${name}.request.json`);

describe('Anthropic fixtures: requests', () => {
  it.each(fixtureNames('.request.json'))('%s', (name) => {
    const req = requestOf(name);
    expect(anthropic.toRequest(req, contextFor(req))).toStrictEqual(readJson(`${name}.anthropic-request.json`));
  });
});

describe('Anthropic fixtures: streams', () => {
  const streams = fixtureNames('.sse');

  it('covers the required stream cases', () => {
    expect(streams.length).toBeGreaterThanOrEqual(12);
  });

  it.each(streams)('%s translates to the recorded chunks', (name) => {
    const out = translateChunks([readFixtureBytes(`${name}.sse`)], contextFor(requestOf(name)));
    expect(out).toStrictEqual(readJsonl(`${name}.chunks.jsonl`));
  });

  it.each(streams)('%s gives the same chunks however its bytes are split', (name) => {
    const bytes = readFixtureBytes(`${name}.sse`);
    const ctx = contextFor(requestOf(name));
    const whole = translateChunks([bytes], ctx);
    const splitPoints = fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 });
    fc.assert(
      fc.property(splitPoints, (points) => {
        const cuts = [0, ...[...points].sort((a, b) => a - b), bytes.length];
        const chunks = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
        expect(translateChunks(chunks, ctx)).toStrictEqual(whole);
      }),
      { numRuns: 150 },
    );
  });

  it.each(streams)('%s gives the same chunks when fed one byte at a time', (name) => {
    const bytes = readFixtureBytes(`${name}.sse`);
    const ctx = contextFor(requestOf(name));
    const single = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(translateChunks(single, ctx)).toStrictEqual(translateChunks([bytes], ctx));
  });
});

describe('Anthropic fixtures: non-streaming responses', () => {
  it.each(fixtureNames('.response.json'))('%s', (name) => {
    const got = anthropic.fromResponse(readJson(`${name}.response.json`), contextFor(requestOf(name)));
    expect(got).toStrictEqual(readJson(`${name}.completion.json`));
  });
});
