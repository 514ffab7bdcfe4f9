import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeGeminiToolCallId, encodeGeminiToolCallId } from '../../src/providers/protocols/gemini/tool-call-id.js';
import { gemini } from './via-hub.js';
import type { ChatCompletionRequest } from '../../src/providers/types.js';
import type { TranslateContext } from './via-hub.js';

const ctx: TranslateContext = { model: 'gemini-3.7-flash', created: 1767225600, fallbackId: 'chatcmpl-abc123', includeUsage: false };
// A real-looking Gemini 3 thought signature: ~300 characters of canonical base64.
const SIGNATURE = Buffer.concat([Buffer.from([0x0a, 0x24, 0x01]), randomBytes(225)]).toString('base64');

describe('encode/decode of Gemini ids inside OpenAI tool-call ids', () => {
  it('round-trips a Gemini 3 id with a ~300-char signature', () => {
    expect(SIGNATURE.length).toBe(304);
    const id = encodeGeminiToolCallId({ id: 'fc7a1b2c', thoughtSignature: SIGNATURE, fallbackId: 'x', callIndex: 0 });
    expect(id).toMatch(/^gmn1_rfc7a1b2c_b[A-Za-z0-9_-]+$/);
    expect(id.length).toBeLessThan(SIGNATURE.length + 20);
    expect(decodeGeminiToolCallId(id)).toStrictEqual({ id: 'fc7a1b2c', thoughtSignature: SIGNATURE });
  });

  it('keeps a readable id without a signature', () => {
    const id = encodeGeminiToolCallId({ id: 'e5f6g7h8', fallbackId: 'x', callIndex: 3 });
    expect(id).toBe('gmn1_re5f6g7h8');
    expect(decodeGeminiToolCallId(id)).toStrictEqual({ id: 'e5f6g7h8' });
  });

  it('hex-encodes ids with characters outside [A-Za-z0-9]', () => {
    const id = encodeGeminiToolCallId({ id: 'fc_91-x/é', thoughtSignature: 'AAEC', fallbackId: 'x', callIndex: 0 });
    expect(id).toMatch(/^gmn1_h[0-9a-f]+_b[A-Za-z0-9_-]+$/);
    expect(decodeGeminiToolCallId(id)).toStrictEqual({ id: 'fc_91-x/é', thoughtSignature: 'AAEC' });
  });

  it('synthesizes a deterministic id from the fallback id and call index when Gemini sent none', () => {
    const a = encodeGeminiToolCallId({ fallbackId: 'chatcmpl-abc123', callIndex: 0 });
    const b = encodeGeminiToolCallId({ fallbackId: 'chatcmpl-abc123', callIndex: 1 });
    expect(a).toBe('gmn1_schatcmplabc123n0');
    expect(b).toBe('gmn1_schatcmplabc123n1');
    expect(encodeGeminiToolCallId({ fallbackId: 'chatcmpl-abc123', callIndex: 0 })).toBe(a);
    expect(decodeGeminiToolCallId(a)).toStrictEqual({}); // ours, but no id to send upstream
  });

  it('keeps the signature of a 2.x call that had no id', () => {
    const id = encodeGeminiToolCallId({ thoughtSignature: SIGNATURE, fallbackId: 'chatcmpl-abc123', callIndex: 2 });
    expect(decodeGeminiToolCallId(id)).toStrictEqual({ thoughtSignature: SIGNATURE });
  });

  it('keeps a signature that is not canonical base64 verbatim', () => {
    for (const odd of ['skip_thought_signature_validator', 'abc', 'YWJj', 'a+b/c=', 'x_y-z']) {
      const id = encodeGeminiToolCallId({ id: 'f1', thoughtSignature: odd, fallbackId: 'x', callIndex: 0 });
      expect(decodeGeminiToolCallId(id)).toStrictEqual({ id: 'f1', thoughtSignature: odd });
    }
  });

  it('treats other providers\' ids and altered ids as foreign', () => {
    for (const foreign of ['call_7Qa', 'toolu_01ABC', 'gmn1_', 'gmn1_x', 'gmn1_r', 'gmn1_r_b', 'gmn1_hzz', 'gmn1_h123', 'gmn1_rab_q123', 'gmn1_ra b', 'gmn1_rab_b!!']) {
      expect(decodeGeminiToolCallId(foreign)).toBeUndefined();
    }
  });

  it('only ever produces [A-Za-z0-9_-] and always round-trips (property)', () => {
    fc.assert(fc.property(fc.option(fc.string({ minLength: 1 }), { nil: undefined }), fc.option(fc.string({ minLength: 1 }), { nil: undefined }), fc.string(), fc.nat(),
      (id, thoughtSignature, fallbackId, callIndex) => {
        const encoded = encodeGeminiToolCallId({ id, thoughtSignature, fallbackId, callIndex });
        expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
        const expected: Record<string, string> = {};
        if (id !== undefined) expected.id = id;
        if (thoughtSignature !== undefined) expected.thoughtSignature = thoughtSignature;
        expect(decodeGeminiToolCallId(encoded)).toStrictEqual(expected);
      }));
  });
});

describe('multi-turn: ids and signatures survive the trip through an OpenAI client', () => {
  it('sends back the same id and signature on functionCall, and id + name on functionResponse', () => {
    const SIG_B = Buffer.from(randomBytes(40)).toString('base64');
    const completion = gemini.fromResponse({
      candidates: [{
        content: { role: 'model', parts: [
          { functionCall: { id: 'g3call1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
          { functionCall: { id: 'g3call2', name: 'get_time', args: {} } },
          { functionCall: { name: 'legacy', args: { q: 1 } }, thoughtSignature: SIG_B },
        ] },
        finishReason: 'STOP', index: 0,
      }],
      responseId: 'r1', modelVersion: 'gemini-3.7-flash',
    }, ctx);
    const calls = completion.choices[0]!.message.tool_calls!;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(calls.map((c) => c.function.arguments)).toEqual(['{"city":"Paris"}', '{}', '{"q":1}']);

    // The client echoes the assistant message and answers each call by id (as the OpenAI SDK does).
    const req: ChatCompletionRequest = {
      model: 'gemini/gemini-3.7-flash',
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[0]!.id, content: '{"temp_c":18}' },
        { role: 'tool', tool_call_id: calls[1]!.id, content: '12:00' },
        { role: 'tool', tool_call_id: calls[2]!.id, content: 'ok' },
      ],
    };
    const body = gemini.toRequest(req, ctx).body as { contents: unknown[] };
    expect(body.contents).toStrictEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      { role: 'model', parts: [
        { functionCall: { id: 'g3call1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
        { functionCall: { id: 'g3call2', name: 'get_time', args: {} } },
        { functionCall: { name: 'legacy', args: { q: 1 } }, thoughtSignature: SIG_B },
      ] },
      { role: 'user', parts: [
        { functionResponse: { id: 'g3call1', name: 'get_weather', response: { output: { temp_c: 18 } } } },
        { functionResponse: { id: 'g3call2', name: 'get_time', response: { output: '12:00' } } },
        { functionResponse: { name: 'legacy', response: { output: 'ok' } } },
      ] },
    ]);
  });

  it('the same holds for ids that came from a stream', () => {
    const translator = gemini.createStreamTranslator(ctx);
    const out = translator.push({ data: JSON.stringify({
      candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 's1', name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: SIGNATURE }] }, finishReason: 'STOP', index: 0 }],
    }) });
    const delta = out.flatMap((o) => (o.kind === 'chunk' ? o.chunk.choices.map((c) => c.delta) : [])).find((d) => d.tool_calls);
    const id = delta!.tool_calls![0]!.id!;
    const body = gemini.toRequest({
      model: 'gemini/gemini-3.7-flash',
      messages: [
        { role: 'user', content: 'Oslo?' },
        { role: 'assistant', tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: id, content: 'cold' },
      ],
    }, ctx).body as { contents: Array<{ parts: unknown[] }> };
    expect(body.contents[1]!.parts[0]).toStrictEqual({ functionCall: { id: 's1', name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: SIGNATURE });
    expect(body.contents[2]!.parts[0]).toStrictEqual({ functionResponse: { id: 's1', name: 'get_weather', response: { output: 'cold' } } });
  });
});
