// Every recorded Gemini fixture: the OpenAI request translates to exactly the Gemini request we
// expect, the raw SSE bytes translate to exactly the expected OpenAI chunks, and the JSON response
// translates to exactly the expected completion.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gemini } from '../../src/providers/gemini/index.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import { ctxFor, fixtureCases, fixturePath, hasFixture, readJson, readJsonl, translateStream, wirePayloads } from './gemini-fixture-helpers.js';

const cases = fixtureCases();

describe('gemini fixtures', () => {
  it('has the cases the module must cover', () => {
    expect(cases).toEqual(expect.arrayContaining([
      'plain-text', 'function-call', 'parallel-calls', 'no-args-call', 'call-without-id', 'image-input', 'max-tokens', 'safety',
      'prompt-blocked', 'usage-cached-thoughts', 'thoughts', 'mid-stream-error', 'unknown-fields', 'utf8', 'multi-turn', 'tools-schema',
    ]));
  });

  describe.each(cases)('%s', (name) => {
    const req = readJson<ChatCompletionRequest>(`${name}.openai-request.json`);
    const ctx = ctxFor(req);

    it('translates the OpenAI request to the recorded Gemini request', () => {
      const call = gemini.toRequest(req, ctx);
      expect(JSON.parse(JSON.stringify(call))).toStrictEqual(readJson(`${name}.gemini-request.json`));
    });

    if (hasFixture(`${name}.sse`)) it('translates the SSE stream to the expected chunks', () => {
      const bytes = readFileSync(fixturePath(`${name}.sse`));
      expect(wirePayloads(translateStream([bytes], ctx))).toStrictEqual(readJsonl(`${name}.chunks.jsonl`));
    });

    if (hasFixture(`${name}.response.json`)) it('translates the JSON response to the expected completion', () => {
      const completion = gemini.fromResponse(readJson(`${name}.response.json`), ctx);
      expect(JSON.parse(JSON.stringify(completion))).toStrictEqual(readJson(`${name}.completion.json`));
    });
  });
});
