// The Gemini door's protocol module on its own: what gemini-cli and the SDKs send parses for a
// foreign model (or is refused naming the field); answers, streams (SSE and the JSON-array form)
// and errors render as Google's; function-call ids and opaque provider state survive the round
// trip through a Gemini client, including gemini-cli, which keeps no thought parts.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FOREIGN_SIGNATURE_MARK, geminiClient, withoutForeignSignatures } from '../../src/providers/protocols/gemini/client/index.js';
import { anthropicProvider } from '../../src/providers/protocols/anthropic/provider/index.js';
import type { RenderContext, Target } from '../../src/providers/ir/protocol.js';
import type { AssistantPart, Response, StreamEvent } from '../../src/providers/ir/types.js';
import { TranslationError } from '../../src/providers/types.js';
import { cut, renderStream } from './chat-composition-helpers.js';

const target: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
const rctx: RenderContext = { model: 'anthropic/claude-sonnet-4-5', modelPrefix: 'anthropic/', created: 1767225600, fallbackId: 'gen-fallback', includeUsage: false };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/protocols/gemini-client/${name}`, import.meta.url), 'utf8')) as Record<string, any>;
const parse = (body: unknown) => geminiClient.parseRequest(body, target);
const user = (text: string) => ({ role: 'user', parts: [{ text }] });

/** The TranslationError a parse throws (fails the test when none is thrown). */
function refusal(body: unknown): TranslationError {
  try {
    parse(body);
  } catch (e) {
    if (e instanceof TranslationError) return e;
    throw e;
  }
  throw new Error('expected a TranslationError');
}

/** SSE text → the chunks, checking Google's framing: `data: <json>` events separated by CRLF CRLF. */
function sseChunks(text: string): any[] {
  expect(text.endsWith('\r\n\r\n')).toBe(true);
  return text.slice(0, -4).split('\r\n\r\n').map((frame) => {
    expect(frame.startsWith('data: ')).toBe(true);
    return JSON.parse(frame.slice(6));
  });
}

function renderEvents(events: StreamEvent[], ctx: RenderContext = rctx): string {
  const r = geminiClient.createStreamRenderer(ctx);
  return events.map((e) => r.push(e)).join('') + r.end();
}

/** A model turn rebuilt from stream chunks the way gemini-cli keeps it: thoughts dropped, adjacent plain text joined. */
function geminiCliTurn(chunks: any[]): any {
  const parts: any[] = [];
  for (const c of chunks) {
    for (const p of c.candidates?.[0]?.content?.parts ?? []) {
      if (p.thought) continue;
      const last = parts.at(-1);
      const plain = (x: any) => typeof x?.text === 'string' && !x.thought && !x.functionCall;
      if (plain(last) && plain(p) && last.text) last.text += p.text;
      else parts.push({ ...p });
    }
  }
  return { role: 'model', parts };
}

describe('parse: a generateContent request for a foreign model', () => {
  it('takes gemini-cli\'s own request (system instruction with role user, both schema forms, a thinking budget)', () => {
    const req = parse({ ...fixture('gemini-cli.request.json'), stream: true });
    expect(req.model).toBe('claude-sonnet-4-5');
    expect(req.stream).toBe(true);
    expect(req.system).toEqual([{ type: 'text', text: 'You are an interactive CLI agent specializing in software engineering tasks.' }]);
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(req.messages[1]!.parts).toEqual([{ type: 'text', text: 'Got it. Thanks for the context!' }]);
    expect(req.temperature).toBe(0);
    expect(req.topP).toBe(1);
    expect(req.reasoning).toEqual({ enabled: true, budgetTokens: 8192, includeText: true });
    expect(req.tools.map((t) => t.name)).toEqual(['list_directory', 'read_file', 'get_time']);
    // parametersJsonSchema is JSON Schema already: kept as sent.
    expect(req.tools[0]!.inputSchema).toEqual(fixture('gemini-cli.request.json').tools[0].functionDeclarations[0].parametersJsonSchema);
    // parameters is Gemini's OpenAPI subset: lowercase types, nullable as a null type, example as examples.
    expect(req.tools[1]!.inputSchema).toEqual({
      type: 'object',
      properties: {
        absolute_path: { type: 'string', description: 'The absolute path to the file to read.' },
        offset: { type: ['number', 'null'] },
        limit: { type: 'integer', examples: [200] },
      },
      required: ['absolute_path'],
    });
    expect(req.tools[2]!.inputSchema).toEqual({ type: 'object', properties: {} });
    expect(req.toolChoice).toBeUndefined();
  });

  it('is not a stream unless the daemon says so in the body', () => {
    expect(parse(fixture('gemini-cli.request.json')).stream).toBe(false);
  });

  it('pairs function responses without ids with their calls, by name and in order, and unwraps output and error', () => {
    const req = parse(fixture('function-round-trip.request.json'));
    const calls = req.messages[1]!.parts as Array<Extract<AssistantPart, { type: 'tool-call' }>>;
    expect(calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_0_get_weather', 'get_weather', '{"city":"Paris"}'],
      ['call_1_get_weather', 'get_weather', '{"city":"Rome"}'],
      ['call_2_get_time', 'get_time', '{}'],
    ]);
    expect(req.messages[2]!.parts).toEqual([
      { type: 'tool-result', callId: 'call_2_get_time', name: 'get_time', content: [{ type: 'text', text: '12:00' }], plain: true, param: 'contents[2].parts[0].functionResponse' },
      { type: 'tool-result', callId: 'call_0_get_weather', name: 'get_weather', content: [{ type: 'text', text: '{"temp_c":18}' }], plain: true, param: 'contents[2].parts[1].functionResponse' },
      { type: 'tool-result', callId: 'call_1_get_weather', name: 'get_weather', content: [{ type: 'text', text: 'Rome is offline' }], plain: true, isError: true, param: 'contents[2].parts[2].functionResponse' },
    ]);
    // The same history sent again next turn gives the same ids.
    expect((parse(fixture('function-round-trip.request.json')).messages[1]!.parts[0] as { id: string }).id).toBe('call_0_get_weather');
  });

  it('keeps provider ids, and pairs a response whose id the client made up (gemini-cli, for a call that had none) with its call', () => {
    const req = parse({
      contents: [
        user('go'),
        { role: 'model', parts: [{ functionCall: { id: 'toolu_01A', name: 'ls', args: { path: '/' } } }, { functionCall: { name: 'ls', args: { path: '/tmp' } } }] },
        { role: 'user', parts: [
          { functionResponse: { id: 'ls-1767225600-abc', name: 'ls', response: { output: 'tmp/' } } },
          { functionResponse: { id: 'toolu_01A', name: 'ls', response: { output: 'bin/' } } },
        ] },
      ],
    });
    expect(req.messages[1]!.parts.map((p) => (p as { id: string }).id)).toEqual(['toolu_01A', 'call_1_ls']);
    expect(req.messages[2]!.parts.map((p) => (p as { callId: string }).callId)).toEqual(['call_1_ls', 'toolu_01A']);
  });

  it('refuses a function response that answers no call and carries no id', () => {
    const e = refusal({ contents: [user('x'), { role: 'user', parts: [{ functionResponse: { name: 'ls', response: {} } }] }] });
    expect(e.param).toBe('contents[1].parts[0].functionResponse');
    expect(e.message).toMatch(/no earlier functionCall named "ls"/);
  });

  it('maps thinkingConfig: a zero budget is off, -1 is dynamic, a level is an effort', () => {
    const think = (thinkingConfig: unknown) => parse({ contents: [user('x')], generationConfig: { thinkingConfig } }).reasoning;
    expect(think({ thinkingBudget: 0 })).toEqual({ enabled: false });
    expect(think({ thinkingBudget: -1, includeThoughts: false })).toEqual({ enabled: true, includeText: false });
    expect(think({ thinkingLevel: 'HIGH', includeThoughts: true })).toEqual({ enabled: true, effort: 'high', includeText: true });
    expect(think({ thinkingLevel: 'low' })).toEqual({ enabled: true, effort: 'low' });
    expect(refusal({ contents: [user('x')], generationConfig: { thinkingConfig: { thinkingLevel: 'EXTREME' } } }).param).toBe('generationConfig.thinkingConfig.thinkingLevel');
  });

  it('maps JSON mode with an OpenAPI responseSchema to a JSON Schema output, and ignores safetySettings and labels', () => {
    const req = parse(fixture('json-mode.request.json'));
    expect(req.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'List two cookie recipes.' }] }]);
    expect(req.output).toEqual({
      type: 'json',
      schema: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            recipeName: { type: 'string' },
            difficulty: { type: ['string', 'null'], enum: ['easy', 'hard', null] },
            minutes: { type: 'integer', minimum: 1 },
          },
          required: ['recipeName'],
        },
      },
    });
    expect(req).toMatchObject({ maxOutputTokens: 1024, stopSequences: ['END'], seed: 7 });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
    expect(parse({ contents: [user('x')], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } }).output).toEqual({ type: 'json', schema });
    expect(parse({ contents: [user('x')], generationConfig: { responseMimeType: 'text/plain' } }).output).toEqual({ type: 'text' });
  });

  it('maps functionCallingConfig modes to a tool choice', () => {
    const tools = [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }];
    const choose = (functionCallingConfig: unknown) => parse({ contents: [user('x')], tools, toolConfig: { functionCallingConfig } });
    expect(choose({ mode: 'AUTO' }).toolChoice).toEqual({ type: 'auto' });
    expect(choose({ mode: 'NONE' }).toolChoice).toEqual({ type: 'none' });
    expect(choose({ mode: 'VALIDATED' }).toolChoice).toEqual({ type: 'auto' });
    expect(choose({ mode: 'ANY' }).toolChoice).toEqual({ type: 'required' });
    expect(choose({ mode: 'ANY', allowedFunctionNames: ['b'] }).toolChoice).toEqual({ type: 'tool', name: 'b' });
    const several = choose({ mode: 'ANY', allowedFunctionNames: ['a', 'c'] });
    expect(several.toolChoice).toEqual({ type: 'required' });
    expect(several.tools.map((t) => t.name)).toEqual(['a', 'c']);
    expect(refusal({ contents: [user('x')], tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['zz'] } } }).param)
      .toBe('toolConfig.functionCallingConfig.allowedFunctionNames[0]');
  });

  it('reads media parts, a plain-string system instruction and snake_case field names', () => {
    const req = parse({
      system_instruction: 'Be brief.',
      contents: [{ parts: [
        { inline_data: { mime_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
        { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } },
        { text: 'Describe these.' },
      ] }],
      generation_config: { max_output_tokens: 50, top_k: 40 },
    });
    expect(req.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(req.messages[0]!.parts).toEqual([
      { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, param: 'contents[0].parts[0].inlineData' },
      { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, param: 'contents[0].parts[1].inlineData' },
      { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg', mediaType: 'image/jpeg' }, param: 'contents[0].parts[2].fileData' },
      { type: 'text', text: 'Describe these.' },
    ]);
    expect(req).toMatchObject({ maxOutputTokens: 50, topK: 40 });
  });

  it('a thoughtSignature that is not ours is Gemini\'s own state; a thought without one is dropped', () => {
    const req = parse({ contents: [user('x'), { role: 'model', parts: [
      { text: 'Thinking about it', thought: true },
      { functionCall: { id: 'fc1', name: 'ls', args: {} }, thoughtSignature: 'CiQB4/H/Xt5=' },
    ] }] });
    expect(req.messages[1]!.parts).toEqual([
      { type: 'tool-call', id: 'fc1', name: 'ls', arguments: '{}', state: { provider: 'gemini', data: { id: 'fc1', thoughtSignature: 'CiQB4/H/Xt5=' } } },
    ]);
  });

  it('refuses, naming the field and the provider, what only Gemini can do', () => {
    const base = { contents: [user('hi')] };
    const cases: Array<[unknown, string, RegExp]> = [
      [{ ...base, tools: [{ functionDeclarations: [{ name: 'a' }] }, { googleSearch: {} }] }, 'tools[1].googleSearch', /Gemini runs on its own servers; Anthropic models/],
      [{ ...base, tools: [{ codeExecution: {} }] }, 'tools[0].codeExecution', /codeExecution/],
      [{ ...base, generationConfig: { candidateCount: 2 } }, 'generationConfig.candidateCount', /only 1 candidate/],
      [{ ...base, cachedContent: 'cachedContents/abc' }, 'cachedContent', /context cache/],
      [{ ...base, generationConfig: { speechConfig: { voiceConfig: {} } } }, 'generationConfig.speechConfig', /audio/],
      [{ ...base, generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }, 'generationConfig.responseModalities', /TEXT/],
      [{ ...base, generationConfig: { responseMimeType: 'text/x.enum' } }, 'generationConfig.responseMimeType', /text\/x\.enum/],
      [{ contents: [{ role: 'model', parts: [{ executableCode: { code: 'print(1)' } }] }] }, 'contents[0].parts[0].executableCode', /code execution/],
      [{ contents: [{ role: 'system', parts: [{ text: 'x' }] }] }, 'contents[0].role', /"user" or "model"/],
      [{ contents: [{ parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } }] }] }, 'contents[0].parts[0].fileData.fileUri', /Files API/],
      [{ contents: [] }, 'contents', /at least one/],
      [{ ...base, tools: [{ functionDeclarations: [{ name: 'a', parameters: { type: 'WHATEVER' } }] }] }, 'tools[0].functionDeclarations[0].parameters.type', /not a Schema type/],
    ];
    for (const [body, param, message] of cases) {
      const e = refusal(body);
      expect(e.param).toBe(param);
      expect(e.message).toMatch(message);
    }
  });
});

describe('render: an answer as a GenerateContentResponse', () => {
  it('text, with cached tokens', () => {
    const out = geminiClient.renderResponse({
      id: 'msg_01Text', model: 'claude-sonnet-4-5-20250929',
      choices: [{ index: 0, finish: 'stop', parts: [{ type: 'text', text: 'Hello! How can I help?' }] }],
      usage: { inputTokens: 12, outputTokens: 7, cachedInputTokens: 4 },
    }, rctx);
    expect(out).toEqual(fixture('text.response.json'));
  });

  it('a tool call: whole, its arguments an object, ending with STOP', () => {
    const out = geminiClient.renderResponse({
      choices: [{ index: 0, finish: 'tool-calls', parts: [
        { type: 'text', text: 'Looking it up.' },
        { type: 'tool-call', id: 'toolu_01Paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ] }],
      usage: { inputTokens: 611, outputTokens: 160, reasoningTokens: 100 },
    }, rctx) as any;
    const expected = fixture('tool-call.response.json');
    // Thoughts are counted apart from candidates, as Gemini counts them.
    expected.usageMetadata = { promptTokenCount: 611, candidatesTokenCount: 60, thoughtsTokenCount: 100, totalTokenCount: 771 };
    expect(out).toEqual(expected);
  });

  it('max tokens is MAX_TOKENS', () => {
    const out = geminiClient.renderResponse({
      id: 'chatcmpl-9', choices: [{ index: 0, finish: 'length', parts: [{ type: 'text', text: 'The history of Rome begins' }] }],
      usage: { inputTokens: 20, outputTokens: 80, reasoningTokens: 64 },
    }, rctx);
    expect(out).toEqual(fixture('max-tokens.response.json'));
  });

  it('reasoning with state: a thought part to show, its state carried in the next part\'s thoughtSignature', () => {
    const out = geminiClient.renderResponse({
      choices: [{ index: 0, finish: 'tool-calls', parts: [
        { type: 'reasoning', text: 'Need the weather.', state: { provider: 'anthropic', data: { signature: 'EqQBCkYIBxgC' } } },
        { type: 'tool-call', id: 'toolu_01Paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ] }],
    }, rctx) as any;
    const parts = out.candidates[0].content.parts;
    expect(parts).toHaveLength(2);
    expect(parts[0]).toEqual({ text: 'Need the weather.', thought: true });
    expect(parts[1].functionCall).toEqual({ id: 'toolu_01Paris', name: 'get_weather', args: { city: 'Paris' } });
    // Canonical base64, so Python google-genai (bytes) gives back the same value.
    const sig: string = parts[1].thoughtSignature;
    expect(Buffer.from(sig, 'base64').toString('base64')).toBe(sig);
  });
});

describe('round trip through a Gemini client', () => {
  const answer: Response = {
    id: 'msg_01RT',
    choices: [{ index: 0, finish: 'tool-calls', parts: [
      { type: 'reasoning', text: 'Two cities.', state: { provider: 'anthropic', data: { signature: 'EqQBCkYIBxgCKkA=' } } },
      { type: 'reasoning', text: '', redacted: true, state: { provider: 'anthropic', data: { data: 'EmwKAhgBEgy3va3p' } } },
      { type: 'text', text: 'Looking up both.' },
      { type: 'tool-call', id: 'toolu_01Berlin', name: 'get_weather', arguments: '{"city":"Berlin"}' },
      { type: 'reasoning', text: 'Now Rome.', state: { provider: 'openai', data: { encryptedContent: 'gAAAAABo-x_y==' } } },
      { type: 'tool-call', id: 'call_Rome', name: 'get_weather', arguments: '{"city":"Rome"}', state: { provider: 'gemini', data: { id: 'call_Rome', thoughtSignature: 'c2ln' } } },
    ] }],
  };
  const results = { role: 'user', parts: [
    { functionResponse: { id: 'toolu_01Berlin', name: 'get_weather', response: { output: '12°C' } } },
    { functionResponse: { id: 'call_Rome', name: 'get_weather', response: { output: '18°C' } } },
  ] };
  const expectedResults = [
    { type: 'tool-result', callId: 'toolu_01Berlin', name: 'get_weather', content: [{ type: 'text', text: '12°C' }], plain: true, param: 'contents[2].parts[0].functionResponse' },
    { type: 'tool-result', callId: 'call_Rome', name: 'get_weather', content: [{ type: 'text', text: '18°C' }], plain: true, param: 'contents[2].parts[1].functionResponse' },
  ];

  it('render → parse gives the same turn back, ids and state included', () => {
    const out = geminiClient.renderResponse(answer, rctx) as any;
    const next = parse({ contents: [user('Weather?'), out.candidates[0].content, results] });
    expect(next.messages[1]!.parts).toEqual(answer.choices[0]!.parts);
    expect(next.messages[2]!.parts).toEqual(expectedResults);
  });

  it('state survives a client that sends the signature back in another base64 alphabet (Python: bytes)', () => {
    const out = geminiClient.renderResponse(answer, rctx) as any;
    const content = structuredClone(out.candidates[0].content);
    for (const p of content.parts) if (p.thoughtSignature) p.thoughtSignature = Buffer.from(p.thoughtSignature, 'base64').toString('base64url');
    expect(parse({ contents: [user('Weather?'), content, results] }).messages[1]!.parts).toEqual(answer.choices[0]!.parts);
  });

  it('a streamed answer kept the gemini-cli way (no thought parts) still gives back the reasoning and state', () => {
    const events: StreamEvent[] = [
      { type: 'start', id: 'msg_01RT', model: 'claude-sonnet-4-5-20250929' },
      { type: 'reasoning', text: 'Two ' },
      { type: 'reasoning', text: 'cities.' },
      { type: 'reasoning-end', state: { provider: 'anthropic', data: { signature: 'EqQBCkYIBxgCKkA=' } } },
      { type: 'text', text: 'Looking ' },
      { type: 'text', text: 'up both.' },
      { type: 'tool-call-start', id: 'toolu_01Berlin', name: 'get_weather' },
      { type: 'tool-call-arguments', id: 'toolu_01Berlin', delta: '{"city":' },
      { type: 'tool-call-arguments', id: 'toolu_01Berlin', delta: '"Berlin"}' },
      { type: 'tool-call-end', id: 'toolu_01Berlin' },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 5 } },
    ];
    const turn = geminiCliTurn(sseChunks(renderEvents(events)));
    expect(turn.parts.some((p: any) => p.thought)).toBe(false);
    const next = parse({ contents: [user('Weather?'), turn, { role: 'user', parts: [results.parts[0]] }] });
    expect(next.messages[1]!.parts).toEqual([
      { type: 'reasoning', text: 'Two cities.', state: { provider: 'anthropic', data: { signature: 'EqQBCkYIBxgCKkA=' } } },
      { type: 'text', text: 'Looking up both.' },
      { type: 'tool-call', id: 'toolu_01Berlin', name: 'get_weather', arguments: '{"city":"Berlin"}' },
    ]);
  });
});

describe('render: a stream as Google sends it', () => {
  it('text: one SSE frame per delta, CRLF separated, usage and finishReason on the last, ids on every frame', () => {
    const text = renderEvents([
      { type: 'start', id: 'msg_01', model: 'claude-sonnet-4-5-20250929' },
      { type: 'text', text: 'Par' },
      { type: 'text', text: 'is is sunny.' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 12, outputTokens: 5 } },
    ]);
    const meta = '"modelVersion":"anthropic/claude-sonnet-4-5-20250929","responseId":"msg_01"';
    expect(text).toBe(
      `data: {"candidates":[{"content":{"parts":[{"text":"Par"}],"role":"model"},"index":0}],${meta}}\r\n\r\n` +
      `data: {"candidates":[{"content":{"parts":[{"text":"is is sunny."}],"role":"model"},"index":0}],${meta}}\r\n\r\n` +
      `data: {"candidates":[{"content":{"parts":[],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":5,"totalTokenCount":17},${meta}}\r\n\r\n`,
    );
  });

  it('a tool call whose arguments arrive in several deltas is one whole functionCall part', () => {
    const chunks = sseChunks(renderEvents([
      { type: 'tool-call-start', id: 'toolu_01', name: 'get_weather' },
      { type: 'tool-call-arguments', id: 'toolu_01', delta: '{"ci' },
      { type: 'tool-call-arguments', id: 'toolu_01', delta: 'ty":"Pa' },
      { type: 'tool-call-arguments', id: 'toolu_01', delta: 'ris"}' },
      { type: 'tool-call-end', id: 'toolu_01' },
      { type: 'finish', reason: 'tool-calls' },
    ]));
    expect(chunks).toHaveLength(2);
    expect(chunks[0].candidates[0].content.parts).toEqual([{ functionCall: { id: 'toolu_01', name: 'get_weather', args: { city: 'Paris' } } }]);
    expect(chunks[0].responseId).toBe('gen-fallback');
    expect(chunks[1].candidates[0].finishReason).toBe('STOP');
  });

  it('reasoning: thought frames, then its state on the next part (or on an empty thought at the end)', () => {
    const state = { provider: 'openai', data: { encryptedContent: 'gAAAAABo' } };
    const chunks = sseChunks(renderEvents([
      { type: 'reasoning', text: 'Hmm.' },
      { type: 'reasoning-end', state },
      { type: 'text', text: 'Hello.' },
      { type: 'reasoning', text: 'Done?' },
      { type: 'reasoning-end', state },
      { type: 'finish', reason: 'stop' },
    ]));
    expect(chunks[0].candidates[0].content.parts).toEqual([{ text: 'Hmm.', thought: true }]);
    expect(chunks[1].candidates[0].content.parts[0].text).toBe('Hello.');
    expect(chunks[1].candidates[0].content.parts[0].thoughtSignature).toEqual(expect.any(String));
    expect(chunks[2].candidates[0].content.parts).toEqual([{ text: 'Done?', thought: true }]);
    expect(chunks[3].candidates[0].content.parts).toEqual([{ text: '', thought: true, thoughtSignature: expect.any(String) }]);
    const back = parse({ contents: [user('x'), { role: 'model', parts: chunks.flatMap((c) => c.candidates[0].content.parts) }] });
    expect(back.messages[1]!.parts).toEqual([
      { type: 'reasoning', text: 'Hmm.', state },
      { type: 'text', text: 'Hello.' },
      { type: 'reasoning', text: 'Done?', state },
    ]);
  });

  it('a mid-stream error is Google\'s error object as the last frame, never a clean finish', () => {
    const chunks = sseChunks(renderEvents([
      { type: 'text', text: 'Hel' },
      { type: 'error', error: { status: 529, kind: 'overloaded', message: 'Overloaded' } },
      { type: 'finish', reason: 'stop' },
    ]));
    expect(chunks).toHaveLength(2);
    expect(chunks[1]).toEqual({ error: { code: 529, message: 'Overloaded', status: 'UNAVAILABLE' } });
  });

  it('a stream cut short ends with an error frame', () => {
    const chunks = sseChunks(renderEvents([{ type: 'text', text: 'Hel' }]));
    expect(chunks.at(-1)).toEqual({ error: { code: 502, message: 'the provider ended the stream before it was complete', status: 'UNAVAILABLE' } });
    expect(chunks.some((c) => c.candidates?.[0]?.finishReason)).toBe(false);
  });

  it('the JSON-array form (no alt=sse): one array, written as it grows', () => {
    const ctx: RenderContext = { ...rctx, streamFormat: 'json-array' };
    const r = geminiClient.createStreamRenderer(ctx);
    const pieces = [
      r.push({ type: 'start', id: 'msg_01' }),
      r.push({ type: 'text', text: 'Hi' }),
      r.push({ type: 'finish', reason: 'length', usage: { inputTokens: 3, outputTokens: 1 } }),
      r.end(),
    ];
    expect(pieces[0]).toBe('');
    expect(pieces[1]!.startsWith('[{')).toBe(true);
    expect(pieces[2]!.startsWith('\n,{')).toBe(true);
    expect(pieces[3]).toBe('\n]');
    const array = JSON.parse(pieces.join(''));
    expect(array).toHaveLength(2);
    expect(array[0].candidates[0].content.parts).toEqual([{ text: 'Hi' }]);
    expect(array[1].candidates[0].finishReason).toBe('MAX_TOKENS');
    // An error ends the array too.
    const failed = JSON.parse(renderEvents([{ type: 'error', error: { status: 500, kind: 'server', message: 'boom' } }], ctx));
    expect(failed).toEqual([{ error: { code: 500, message: 'boom', status: 'INTERNAL' } }]);
  });
});

describe('render: errors', () => {
  it('Google\'s error shape with the gRPC status; a rate limit carries RetryInfo', () => {
    expect(geminiClient.renderError({ status: 400, kind: 'invalid_request', message: 'tools[0]: bad' }))
      .toEqual({ status: 400, body: { error: { code: 400, message: 'tools[0]: bad', status: 'INVALID_ARGUMENT' } } });
    expect(geminiClient.renderError({ status: 401, kind: 'authentication', message: 'no key' })).toMatchObject({ status: 401, body: { error: { status: 'UNAUTHENTICATED' } } });
    expect(geminiClient.renderError({ status: 429, kind: 'rate_limit', message: 'slow down', retryAfter: '17' })).toEqual({
      status: 429,
      body: { error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '17s' }] } },
    });
  });
});

describe('Claude streams through the Gemini door', () => {
  const bytes = readFileSync(new URL('../fixtures/anthropic/parallel-tool-calls-stream.sse', import.meta.url));
  const claude: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
  const render = (pieces: Uint8Array[]) => renderStream(pieces, anthropicProvider.createStreamReader(claude), geminiClient.createStreamRenderer(rctx));

  it('renders parallel tool calls as whole functionCall parts, closed by STOP', () => {
    const chunks = sseChunks(render([bytes]));
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall)).toEqual([
      { id: 'toolu_01Berlin', name: 'get_weather', args: { city: 'Berlin' } },
      expect.objectContaining({ id: 'toolu_01Rome', name: 'get_weather' }),
    ]);
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(chunks.every((c) => c.responseId === 'msg_01Parallel')).toBe(true);
  });

  it('gives the same text however the provider\'s bytes are split', () => {
    const whole = render([bytes]);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (points) => {
        expect(render(cut(bytes, points))).toBe(whole);
      }),
      { numRuns: 100 },
    );
  });
});

describe('a conversation that moves to a Gemini model (the fast path)', () => {
  it('drops the signatures we minted, and the empty thoughts that only carried them; Gemini\'s own stay', () => {
    const out = geminiClient.renderResponse({
      choices: [{ index: 0, finish: 'stop', parts: [
        { type: 'text', text: 'Hi.' },
        { type: 'reasoning', text: 'Done.', state: { provider: 'anthropic', data: { signature: 'EqQB' } } },
      ] }],
    }, rctx) as any;
    const body = { contents: [
      user('x'),
      out.candidates[0].content,
      { role: 'model', parts: [{ functionCall: { name: 'ls', args: {} }, thoughtSignature: 'CiQB4/H/Xt5=' }] },
    ] };
    expect(Buffer.from(JSON.stringify(body)).includes(FOREIGN_SIGNATURE_MARK)).toBe(true);
    expect(withoutForeignSignatures(body)).toEqual({ contents: [
      user('x'),
      { role: 'model', parts: [{ text: 'Hi.' }, { text: 'Done.', thought: true }] },
      body.contents[2],
    ] });
    expect(withoutForeignSignatures({ contents: [user('x'), body.contents[2]] })).toBeUndefined();
  });
});
