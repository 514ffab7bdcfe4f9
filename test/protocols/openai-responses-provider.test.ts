// The OpenAI Responses provider module on its own: the stateless /v1/responses call it builds from
// the IR (reasoning given back only to the provider that minted it, the fields Responses cannot
// express refused or dropped), and how it reads answers, typed stream events and errors into the
// IR, on hand-written recordings of OpenAI's documented format, however the stream's bytes are split.
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { SseParser } from '../../src/daemon/http/sse.js';
import type { Target } from '../../src/providers/ir/protocol.js';
import type { Message, Request, StreamEvent } from '../../src/providers/ir/types.js';
import { anthropicClient } from '../../src/providers/protocols/anthropic/client/index.js';
import { openaiResponsesProvider as provider } from '../../src/providers/protocols/openai-responses/provider/index.js';
import { TranslationError, type SseEvent } from '../../src/providers/types.js';
import { readProviderStream } from '../helpers/provider-stream.js';

const OPENAI: Target = { provider: 'openai', displayName: 'OpenAI', model: 'gpt-5.4', protocol: 'openai-responses' };
const FIXTURES = new URL('../fixtures/protocols/openai-responses-provider/', import.meta.url);
const bytes = (name: string) => readFileSync(new URL(name, FIXTURES));
const json = (name: string): unknown => JSON.parse(bytes(name).toString('utf8'));

const base: Request = { model: 'gpt-5.4', system: [], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], tools: [], stopSequences: [], stream: false };
const build = (req: Partial<Request>, t: Target = OPENAI) => provider.buildRequest({ ...base, ...req }, t).body as Record<string, any>;

function refusal(fn: () => unknown): TranslationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TranslationError);
    return e as TranslationError;
  }
  throw new Error('expected a TranslationError');
}

const read = (chunks: Uint8Array[], target: Target = OPENAI): StreamEvent[] => readProviderStream(provider, target, chunks);

/** A conversation with everything the builder maps: media, a tool round trip, reasoning from three providers. */
const RICH: Request = {
  model: 'gpt-5.4',
  system: [{ type: 'text', text: 'You are a travel assistant.' }, { type: 'text', text: 'Answer in JSON.' }],
  messages: [
    { role: 'user', parts: [
      { type: 'text', text: 'What is in this photo, and what is the weather there?' },
      { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'high' },
      { type: 'image', source: { kind: 'url', url: 'https://example.com/paris.jpg' } },
      { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0xLjQ=' }, title: 'itinerary.pdf' },
    ] },
    { role: 'assistant', parts: [
      { type: 'reasoning', text: '**Looking at the photo**', state: { provider: 'openai', data: { encryptedContent: 'gAAAAABprev==', id: 'rs_prev' } } },
      { type: 'reasoning', text: 'Claude thought this', state: { provider: 'anthropic', data: { signature: 'sig-a' } } },
      { type: 'reasoning', text: 'Gemini thought this', state: { provider: 'gemini', data: { thoughtSignature: 'sig-g' } } },
      { type: 'reasoning', text: 'no state at all' },
      { type: 'text', text: 'That is the Eiffel Tower. ' }, { type: 'text', text: 'Let me check the weather.' },
      { type: 'tool-call', id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool-call', id: 'toolu_s2', name: 'screenshot', arguments: '{}' },
    ] },
    { role: 'user', parts: [
      { type: 'text', text: 'And tomorrow?' },
      { type: 'tool-result', callId: 'call_w1', content: [{ type: 'text', text: '18°C, ' }, { type: 'text', text: 'sunny' }], plain: true },
      { type: 'tool-result', callId: 'toolu_s2', content: [{ type: 'text', text: 'The radar:' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' } }] },
    ] },
  ],
  tools: [
    { name: 'get_weather', description: 'Current weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    { name: 'screenshot', inputSchema: { type: 'object', properties: {}, additionalProperties: false }, strict: true },
  ],
  toolChoice: { type: 'required' },
  parallelToolCalls: false,
  maxOutputTokens: 4000,
  temperature: 0.7,
  topP: 0.9,
  stopSequences: [],
  output: { type: 'json', name: 'forecast', description: 'A short forecast', strict: true, schema: { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'], additionalProperties: false } },
  reasoning: { enabled: true, effort: 'max', includeText: true },
  user: 'user-42',
  stream: true,
};

describe('OpenAI Responses provider: building the call', () => {
  it('sends a rich conversation statelessly, as recorded: media, the tool round trip, its own reasoning, the settings', () => {
    const call = provider.buildRequest(RICH, OPENAI);
    expect(call.path).toBe('/v1/responses');
    expect(call.body).toEqual(json('rich.request.json'));
  });

  it('gives reasoning back only to the provider that minted it, and only with its encrypted content', () => {
    const other = provider.buildRequest(RICH, { ...OPENAI, provider: 'azure-openai' }).body as Record<string, any>;
    const expected = json('rich.request.json') as Record<string, any>;
    expect(other.input).toEqual(expected.input.filter((item: { type: string }) => item.type !== 'reasoning'));
    const noCipher: Message = { role: 'assistant', parts: [{ type: 'reasoning', text: 'r', state: { provider: 'openai', data: { id: 'rs_1' } } }, { type: 'text', text: 'ok' }] };
    expect(build({ messages: [base.messages[0]!, noCipher] })).toEqual(expect.objectContaining({ input: [expect.objectContaining({ role: 'user' }), expect.objectContaining({ role: 'assistant' })] }));
    expect(build({ messages: [base.messages[0]!, noCipher] })).not.toHaveProperty('include');
    const noId: Message = { role: 'assistant', parts: [{ type: 'reasoning', text: '', state: { provider: 'openai', data: { encryptedContent: 'enc' } } }] };
    // No reasoning settings: the model reasons by its own default, and its state is still asked back.
    expect(build({ messages: [base.messages[0]!, noId] })).toMatchObject({ input: [expect.anything(), { type: 'reasoning', summary: [], encrypted_content: 'enc' }], include: ['reasoning.encrypted_content'] });
  });

  it('maps tool choice, output formats, and reasoning settings', () => {
    const tools = RICH.tools;
    expect(build({ tools, toolChoice: { type: 'tool', name: 'get_weather' } }).tool_choice).toEqual({ type: 'function', name: 'get_weather' });
    expect(build({ tools, toolChoice: { type: 'none' } }).tool_choice).toBe('none');
    expect(build({ toolChoice: { type: 'auto' }, parallelToolCalls: true })).toEqual(expect.not.objectContaining({ parallel_tool_calls: expect.anything() }));
    expect(build({ output: { type: 'json' } }).text).toEqual({ format: { type: 'json_object' } });
    expect(build({ output: { type: 'json', schema: { type: 'object' } } }).text).toEqual({ format: { type: 'json_schema', name: 'response', schema: { type: 'object' }, strict: false } });
    expect(build({ output: { type: 'text' } })).not.toHaveProperty('text');

    const plain = build({});
    expect(plain).toEqual({ model: 'gpt-5.4', store: false, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] });
    expect(build({ reasoning: { effort: 'none' } })).toEqual({ ...plain, reasoning: { effort: 'none' } });
    expect(build({ reasoning: { effort: 'minimal' } })).toEqual({ ...plain, reasoning: { effort: 'minimal' }, include: ['reasoning.encrypted_content'] });
    expect(build({ reasoning: { effort: 'xhigh', includeText: false } }).reasoning).toEqual({ effort: 'xhigh' });
    // A thinking budget (Claude Code's `budget_tokens`) has no OpenAI knob, but reasoning is on.
    expect(build({ reasoning: { enabled: true, budgetTokens: 8000, includeText: true } })).toEqual({ ...plain, reasoning: { summary: 'auto' }, include: ['reasoning.encrypted_content'] });
    expect(build({ reasoning: { enabled: false, effort: 'high', includeText: true } })).toEqual(plain);
  });

  it('caps max_output_tokens at what the model takes', () => {
    expect(build({ maxOutputTokens: 500_000 }).max_output_tokens).toBe(128_000);
    expect(build({ maxOutputTokens: 500_000 }, { ...OPENAI, model: 'gpt-4.1-mini' }).max_output_tokens).toBe(32_768);
  });

  it('refuses what Responses cannot express and would change the answer, naming the field', () => {
    expect(refusal(() => build({ stopSequences: ['END'] })).param).toBe('stopSequences');
    expect(refusal(() => build({ candidates: 2 })).param).toBe('candidates');
    expect(refusal(() => build({ logprobs: { top: 0 } })).param).toBe('logprobs');
    const audio = refusal(() => build({ messages: [{ role: 'user', parts: [{ type: 'document', source: { kind: 'base64', mediaType: 'audio/wav', data: 'UklG' }, param: 'messages[0].content[1].input_audio' }] }] }));
    expect([audio.param, audio.message]).toEqual(['messages[0].content[1].input_audio', 'Audio input is not supported for OpenAI models through the Responses API.']);
    expect(refusal(() => build({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'x' }, { type: 'image', source: { kind: 'text', mediaType: 'text/plain', text: 'no' } }] }] })).param).toBe('messages[0].parts[1]');
  });

  it('drops the sampling nudges it has no knob for', () => {
    expect(build({ topK: 40, seed: 7, frequencyPenalty: 0.5, presencePenalty: 0.2, candidates: 1 })).toEqual(build({}));
  });

  it('sends documents by URL as file URLs and text documents as text; error results say so', () => {
    const b = build({ messages: [{ role: 'user', parts: [
      { type: 'document', source: { kind: 'url', url: 'https://example.com/a.pdf' }, title: 'a.pdf' },
      { type: 'document', source: { kind: 'text', mediaType: 'text/plain', text: 'notes' } },
      { type: 'tool-result', callId: 'c1', content: [{ type: 'text', text: 'no such city' }], isError: true },
    ] }] });
    expect(b.input).toEqual([
      { type: 'function_call_output', call_id: 'c1', output: 'Error: no such city' },
      { type: 'message', role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf', filename: 'a.pdf' }, { type: 'input_text', text: 'notes' }] },
    ]);
  });
});

describe('OpenAI Responses provider: reading an answer', () => {
  it('a text answer', () => {
    expect(provider.readResponse(json('text.response.json'), OPENAI)).toEqual({
      id: 'resp_r1', model: 'gpt-5.4-2026-03-05', usage: { inputTokens: 20, outputTokens: 8, cachedInputTokens: 0, reasoningTokens: 0 },
      choices: [{ index: 0, finish: 'stop', parts: [{ type: 'text', text: 'Paris is the capital of France.' }] }],
    });
  });

  it('function calls: the call_id is the IR id', () => {
    expect(provider.readResponse(json('tool-call.response.json'), OPENAI)).toEqual({
      id: 'resp_r2', model: 'gpt-5.4-2026-03-05', usage: { inputTokens: 50, outputTokens: 30, cachedInputTokens: 32, reasoningTokens: 0 },
      choices: [{ index: 0, finish: 'tool-calls', parts: [
        { type: 'tool-call', id: 'call_r2a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'call_r2b', name: 'get_time', arguments: '{}' },
      ] }],
    });
  });

  it('an answer cut at max_output_tokens finishes with length', () => {
    const r = provider.readResponse(json('incomplete.response.json'), OPENAI);
    expect(r.choices).toEqual([{ index: 0, finish: 'length', parts: [{ type: 'text', text: 'Once upon a' }] }]);
    expect(provider.readResponse({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] }, OPENAI).choices[0]!.finish).toBe('content-filter');
  });

  it('reasoning: summaries joined, the encrypted content and item id kept as this provider\'s state', () => {
    expect(provider.readResponse(json('reasoning.response.json'), { ...OPENAI, provider: 'openai-eu' })).toEqual({
      id: 'resp_r4', model: 'gpt-5.4-2026-03-05', usage: { inputTokens: 30, outputTokens: 180, cachedInputTokens: 0, reasoningTokens: 160 },
      choices: [{ index: 0, finish: 'stop', parts: [
        { type: 'reasoning', text: '**Checking divisors**\n\nNone divide 97.', state: { provider: 'openai-eu', data: { encryptedContent: 'gAAAAABpENC-r4==', id: 'rs_r4' } } },
        { type: 'text', text: '97 is prime.' },
      ] }],
    });
  });

  it('a refusal', () => {
    const r = provider.readResponse({ id: 'resp_x', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I can\'t help with that.' }] }] }, OPENAI);
    expect(r.choices).toEqual([{ index: 0, finish: 'refusal', refusal: 'I can\'t help with that.', parts: [] }]);
  });

  it('never throws on odd bodies', () => {
    for (const body of [undefined, null, 'text', 42, [], {}, { output: 'nope' }, { output: [null, 1, { type: 'function_call' }, { type: 'web_search_call' }] }]) {
      expect(() => provider.readResponse(body, OPENAI)).not.toThrow();
    }
  });
});

describe('OpenAI Responses provider: reading a stream', () => {
  // The reported zeros are counts too (usage.ts).
  const usage = { inputTokens: 12, outputTokens: 4, cachedInputTokens: 8, reasoningTokens: 0 };
  const EXPECTED: Record<string, StreamEvent[]> = {
    'text.sse': [
      { type: 'start', id: 'resp_t1', model: 'gpt-5.4-2026-03-05' },
      { type: 'text', text: 'Hello' }, { type: 'text', text: ' wörld 👋' },
      { type: 'finish', reason: 'stop', usage },
    ],
    'tool-call.sse': [
      { type: 'start', id: 'resp_t2', model: 'gpt-5.4-2026-03-05' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool-call-start', id: 'call_A', name: 'get_weather' },
      { type: 'tool-call-arguments', id: 'call_A', delta: '{"city"' },
      { type: 'tool-call-arguments', id: 'call_A', delta: ': "Par' },
      { type: 'tool-call-arguments', id: 'call_A', delta: 'is"}' },
      { type: 'tool-call-end', id: 'call_A' },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 40, outputTokens: 22, cachedInputTokens: 0, reasoningTokens: 0 } },
    ],
    'reasoning.sse': [
      { type: 'start', id: 'resp_t3', model: 'gpt-5.4-2026-03-05' },
      { type: 'reasoning', text: '**Checking divisors**' }, { type: 'reasoning', text: '\n\n' },
      { type: 'reasoning', text: 'Try 2, 3, 5' }, { type: 'reasoning', text: ', 7. None divide 97.' },
      { type: 'reasoning-end', state: { provider: 'openai', data: { encryptedContent: 'gAAAAABpENC-t3==', id: 'rs_t3' } } },
      { type: 'text', text: '97 is prime.' },
      { type: 'finish', reason: 'stop', usage: { inputTokens: 30, outputTokens: 180, cachedInputTokens: 0, reasoningTokens: 160 } },
    ],
    'incomplete.sse': [
      { type: 'start', id: 'resp_t7', model: 'gpt-5.4-2026-03-05' }, { type: 'text', text: 'Once upon a' },
      { type: 'finish', reason: 'length', usage: { inputTokens: 9, outputTokens: 16, cachedInputTokens: 0, reasoningTokens: 0 } },
    ],
    'failed.sse': [
      { type: 'start', id: 'resp_t4', model: 'gpt-5.4-2026-03-05' }, { type: 'text', text: 'Par' },
      { type: 'error', error: { status: 500, kind: 'server', code: 'server_error', message: 'The server had an error while processing your request. Sorry about that!' } },
    ],
    'error-event.sse': [
      { type: 'start', id: 'resp_t5', model: 'gpt-5.4-2026-03-05' },
      { type: 'error', error: { status: 429, kind: 'rate_limit', code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-5.4 on tokens per min (TPM): Limit 30000, Used 29500, Requested 900.' } },
    ],
    'cut.sse': [
      { type: 'start', id: 'resp_t6', model: 'gpt-5.4-2026-03-05' }, { type: 'text', text: 'Par' },
      { type: 'error', error: { status: 502, kind: 'stream_ended', message: 'upstream stream ended early: OpenAI closed the stream before response.completed.' } },
    ],
  };
  const recordings = readdirSync(FIXTURES).filter((f) => f.endsWith('.sse')).sort();

  it('has an expectation for every recording', () => {
    expect(recordings).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(recordings)('%s reads as recorded, however its bytes are split', (name) => {
    const data = bytes(name);
    const whole = read([data]);
    expect(whole).toStrictEqual(EXPECTED[name]);
    fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: data.length - 1 }), { maxLength: 30 }), (points) => {
      const cuts = [0, ...[...points].sort((a, b) => a - b), data.length];
      expect(read(cuts.slice(1).map((end, i) => data.subarray(cuts[i], end)))).toStrictEqual(whole);
    }), { numRuns: 60 });
  });

  const ev = (data: Record<string, unknown>): SseEvent => ({ event: data.type as string, data: JSON.stringify(data) });

  it('is complete after a terminal event and ignores everything after it, tracking usage', () => {
    const r = provider.createStreamReader(OPENAI);
    expect(r.usage()).toBeUndefined();
    r.push(ev({ type: 'response.created', response: { id: 'resp_1', model: 'gpt-5.4' } }));
    expect(r.complete()).toBe(false);
    r.push(ev({ type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 3, output_tokens: 2 } } }));
    expect(r.complete()).toBe(true);
    expect(r.usage()).toEqual({ inputTokens: 3, outputTokens: 2 });
    expect(r.push(ev({ type: 'response.output_text.delta', item_id: 'm', output_index: 0, delta: 'late' }))).toEqual([]);
    expect(r.end()).toEqual([]);
  });

  it('never throws on odd or unknown events, and a call announced only at its done is still whole', () => {
    const r = provider.createStreamReader(OPENAI);
    const odd: SseEvent[] = [
      { data: 'not json' }, { event: 'response.something_new', data: '{}' }, { data: '[DONE]' },
      ev({ type: 'response.function_call_arguments.delta', item_id: 'unknown', delta: 'x' }),
      ev({ type: 'response.output_item.done', output_index: 0, item: null }),
      { data: JSON.stringify({ type: 'response.output_item.done', output_index: 2, item: { type: 'function_call', call_id: 'call_z', name: 'f', arguments: '{"a":1}' } }) },
    ];
    const out = odd.flatMap((e) => r.push(e));
    expect(out).toEqual([
      { type: 'start' },
      { type: 'tool-call-start', id: 'call_z', name: 'f' }, { type: 'tool-call-arguments', id: 'call_z', delta: '{"a":1}' }, { type: 'tool-call-end', id: 'call_z' },
    ]);
    expect(r.push(ev({ type: 'response.completed', response: { status: 'completed' } }))).toEqual([{ type: 'finish', reason: 'tool-calls' }]);
  });

  it('gives arguments sent only whole at .done once, and closes calls left open at the end', () => {
    const r = provider.createStreamReader(OPENAI);
    const out = [
      ev({ type: 'response.output_item.added', output_index: 0, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' } }),
      ev({ type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: '{"b":2}' }),
      ev({ type: 'response.output_item.added', output_index: 1, item: { id: 'fc_2', type: 'function_call', call_id: 'call_2', name: 'g', arguments: '' } }),
      ev({ type: 'response.completed', response: { status: 'completed' } }),
    ].flatMap((e) => r.push(e));
    expect(out).toEqual([
      { type: 'start' },
      { type: 'tool-call-start', id: 'call_1', name: 'f' }, { type: 'tool-call-arguments', id: 'call_1', delta: '{"b":2}' },
      { type: 'tool-call-start', id: 'call_2', name: 'g' },
      { type: 'tool-call-end', id: 'call_1' }, { type: 'tool-call-end', id: 'call_2' },
      { type: 'finish', reason: 'tool-calls' },
    ]);
  });

  it('a refusal streamed as deltas finishes as a refusal', () => {
    const r = provider.createStreamReader(OPENAI);
    const out = [
      ev({ type: 'response.created', response: { id: 'resp_r', model: 'gpt-5.4' } }),
      ev({ type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'I can\'t ' }),
      ev({ type: 'response.refusal.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'help with that.' }),
      ev({ type: 'response.completed', response: { status: 'completed' } }),
    ].flatMap((e) => r.push(e));
    expect(out.at(-1)).toEqual({ type: 'finish', reason: 'refusal', refusal: 'I can\'t help with that.' });
  });

  it('parses each event\'s JSON once', () => {
    const events = recordings.flatMap((name) => new SseParser().push(bytes(name)));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const e of events) provider.createStreamReader(OPENAI).push(e);
      expect(parse.mock.calls.length).toBe(events.length);
    } finally {
      parse.mockRestore();
    }
  });

  it('OpenAI reasoning state survives a turn through a Messages client and goes back to OpenAI', () => {
    const events = read([bytes('reasoning.sse')]);
    const renderer = anthropicClient.createStreamRenderer({ model: 'openai/gpt-5.4', modelPrefix: 'openai/', created: 0, fallbackId: 'msg_f', includeUsage: false });
    const parser = new SseParser();
    const frames = [...parser.push(events.map((e) => renderer.push(e)).join('') + renderer.end()), ...parser.end()].map((e) => JSON.parse(e.data));
    const thinking = { type: 'thinking', thinking: '', signature: '' };
    for (const f of frames) {
      if (f.type === 'content_block_delta' && f.delta.type === 'thinking_delta') thinking.thinking += f.delta.thinking;
      if (f.type === 'content_block_delta' && f.delta.type === 'signature_delta') thinking.signature += f.delta.signature;
    }
    const next = anthropicClient.parseRequest({
      model: 'openai/gpt-5.4', max_tokens: 1000, thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [{ role: 'user', content: 'Is 97 prime?' }, { role: 'assistant', content: [thinking, { type: 'text', text: '97 is prime.' }] }, { role: 'user', content: 'And 91?' }],
    }, OPENAI);
    expect((provider.buildRequest(next, OPENAI).body as Record<string, any>).input[1]).toEqual({
      type: 'reasoning', id: 'rs_t3', summary: [{ type: 'summary_text', text: '**Checking divisors**\n\nTry 2, 3, 5, 7. None divide 97.' }], encrypted_content: 'gAAAAABpENC-t3==',
    });
  });
});

describe('OpenAI Responses provider: errors', () => {
  it('reads an error answer as the Chat reader does: status kept, the stored key named on a 401', () => {
    const rl = provider.readError(429, JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }), OPENAI);
    expect(rl).toEqual({ status: 429, kind: 'rate_limit', message: 'Rate limit reached', code: 'rate_limit_exceeded' });
    const quota = provider.readError(429, JSON.stringify({ error: { message: 'You exceeded your current quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } }), OPENAI);
    expect(quota.kind).toBe('billing');
    const bad = provider.readError(400, JSON.stringify({ error: { message: 'Unknown parameter: \'input[0].foo\'.', type: 'invalid_request_error', param: 'input[0].foo', code: 'unknown_parameter' } }), OPENAI);
    expect(bad).toEqual({ status: 400, kind: 'invalid_request', message: 'Unknown parameter: \'input[0].foo\'.', param: 'input[0].foo', code: 'unknown_parameter' });
    const key = provider.readError(401, '{"error":{"message":"Incorrect API key provided: sk-…","type":"invalid_request_error","code":"invalid_api_key"}}', OPENAI);
    expect(key).toMatchObject({ status: 401, kind: 'authentication' });
    expect(key.message).toMatch(/stored in the gateway.*gateway providers set openai/);
  });

  it.each([
    ['response.failed', { code: 'vector_store_timeout', message: 'm' }, 504, 'timeout'],
    ['response.failed', { code: 'invalid_image_url', message: 'm' }, 400, 'invalid_request'],
    ['response.failed', { code: 'image_too_large', message: 'm' }, 400, 'invalid_request'],
    ['response.failed', { code: 'something_new', message: 'm' }, 500, 'server'],
    ['error', { code: 'insufficient_quota', message: 'm' }, 429, 'billing'],
    ['error', { error: { type: 'invalid_request_error', code: 'context_length_exceeded', message: 'm', param: 'input' } }, 400, 'invalid_request'],
  ])('a %s with %j is a %i %s', (type, error, status, kind) => {
    const r = provider.createStreamReader(OPENAI);
    const data = type === 'error' ? { type, ...error } : { type, response: { status: 'failed', error } };
    const [out] = r.push({ event: type, data: JSON.stringify(data) });
    expect(out).toMatchObject({ type: 'error', error: { status, kind, message: 'm' } });
    expect(r.complete()).toBe(true);
  });

  it('a failure with no message says who failed', () => {
    const r = provider.createStreamReader(OPENAI);
    expect(r.push({ event: 'response.failed', data: '{"type":"response.failed","response":{"status":"failed","error":null}}' })).toEqual([
      { type: 'error', error: { status: 500, kind: 'server', message: 'OpenAI reported an error mid-stream with no message.' } },
    ]);
  });
});
