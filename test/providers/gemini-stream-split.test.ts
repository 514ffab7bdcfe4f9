// However the network cuts Gemini's SSE bytes (between `\r` and `\n`, inside a multi-byte UTF-8
// character, one byte at a time), the translated output is the same as for the unsplit stream.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import { ctxFor, fixtureCases, fixturePath, hasFixture, readJson, translateStream, wirePayloads } from './gemini-fixture-helpers.js';

/** Cuts `bytes` at the given offsets (any order, duplicates allowed). */
function splitAt(bytes: Buffer, offsets: number[]): Buffer[] {
  const cuts = [...new Set(offsets)].filter((o) => o > 0 && o < bytes.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of cuts) {
    pieces.push(bytes.subarray(start, cut));
    start = cut;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

/** Offsets that fall between `\r` and `\n` or inside a multi-byte UTF-8 character. */
function awkwardOffsets(bytes: Buffer): number[] {
  const offsets: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i - 1] === 0x0d && bytes[i] === 0x0a) offsets.push(i);
    if ((bytes[i]! & 0xc0) === 0x80) offsets.push(i); // a continuation byte: the cut splits a character
  }
  return offsets;
}

const streams = fixtureCases().filter((name) => hasFixture(`${name}.sse`));

describe.each(streams)('splitting %s.sse', (name) => {
  const bytes = readFileSync(fixturePath(`${name}.sse`));
  const ctx = ctxFor(readJson<ChatCompletionRequest>(`${name}.openai-request.json`));
  const whole = wirePayloads(translateStream([bytes], ctx));
  const awkward = awkwardOffsets(bytes);

  it('has awkward places to cut', () => {
    expect(awkward.length).toBeGreaterThan(0);
  });

  it('gives the same output for any split points', () => {
    const offset = awkward.length > 0
      ? fc.oneof(fc.integer({ min: 0, max: bytes.length }), fc.constantFrom(...awkward))
      : fc.integer({ min: 0, max: bytes.length });
    fc.assert(
      fc.property(fc.array(offset, { maxLength: 40 }), (offsets) => {
        expect(wirePayloads(translateStream(splitAt(bytes, offsets), ctx))).toStrictEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it('gives the same output one byte at a time', () => {
    const pieces = [...bytes].map((_, i) => bytes.subarray(i, i + 1));
    expect(wirePayloads(translateStream(pieces, ctx))).toStrictEqual(whole);
  });
});
