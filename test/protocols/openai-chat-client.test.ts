// The Chat Completions door module on its own: what it parses into the IR (and refuses, per target
// protocol), how it renders IR answers, streams and errors (the tool-call ids that carry provider
// state through a Chat client: tool-call-id.test.ts).
import { describe, expect, it } from 'vitest';
import type { RenderContext, Target } from '../../src/providers/ir/protocol.js';
import type { ProviderError, Response, StreamEvent } from '../../src/providers/ir/types.js';
import { openaiChatClient } from '../../src/providers/protocols/openai-chat/client/index.js';
import { encodeToolCallId } from '../../src/providers/protocols/tool-call-id.js';
import { TranslationError } from '../../src/providers/types.js';
import { chatError, chunksOf, readFrames } from './chat-composition-helpers.js';

const anthropic: Target = { provider: 'anthropic', displayName: 'Anthropic', model: 'claude-sonnet-4-5', protocol: 'anthropic' };
const gemini: Target = { provider: 'gemini', displayName: 'Gemini', model: 'gemini-3.5-flash', protocol: 'gemini' };

const parse = (body: Record<string, unknown>, target: Target = anthropic) =>
  openaiChatClient.parseRequest({ model: 'x/y', messages: [{ role: 'user', content: 'hi' }], ...body }, target);

function refusal(fn: () => unknown): TranslationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TranslationError);
    return e as TranslationError;
  }
  throw new Error('expected a TranslationError');
}

describe('Chat door: parse', () => {
  it('keeps the validation of the unified endpoint, naming the field', () => {
    expect(refusal(() => openaiChatClient.parseRequest({ model: 'm' }, anthropic)).param).toBe('messages');
    expect(refusal(() => parse({ temperature: 3 })).param).toBe('temperature');
    expect(refusal(() => parse({ messages: [{ role: 'wizard', content: 'x' }] })).param).toBe('messages[0].role');
    expect(refusal(() => parse({ reasoning_effort: 'extreme' })).param).toBe('reasoning_effort');
    expect(refusal(() => parse({ top_logprobs: 50, logprobs: true }, gemini)).param).toBe('top_logprobs');
  });

  it('maps the request fields into the IR', () => {
    const req = parse({
      messages: [{ role: 'system', content: 's1' }, { role: 'user', content: 'u' }, { role: 'developer', content: [{ type: 'text', text: 's2' }] }],
      max_tokens: 10, max_completion_tokens: 20, temperature: 0.5, top_p: 0.9, top_k: 40, stop: 'END', stream: true,
      tools: [{ type: 'function', function: { name: 'f', description: 'd', strict: true } }],
      tool_choice: 'required', parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'minimal', safety_identifier: 'sid', seed: 7, frequency_penalty: 0.5, presence_penalty: -0.5, n: 2,
      logprobs: true, top_logprobs: 3,
    }, gemini);
    expect(req).toEqual({
      model: 'gemini-3.5-flash',
      system: [{ type: 'text', text: 's1' }, { type: 'text', text: 's2' }],
      messages: [{ role: 'user', parts: [{ type: 'text', text: 'u' }] }],
      tools: [{ name: 'f', description: 'd', inputSchema: { type: 'object', properties: {} }, strict: true }],
      toolChoice: { type: 'required' }, parallelToolCalls: false,
      maxOutputTokens: 20, temperature: 0.5, topP: 0.9, topK: 40, stopSequences: ['END'], stream: true,
      output: { type: 'json', name: 'n', schema: { type: 'object' }, strict: true },
      reasoning: { effort: 'minimal' }, user: 'sid', seed: 7, frequencyPenalty: 0.5, presencePenalty: -0.5, candidates: 2,
      logprobs: { top: 3 },
    });
    expect(parse({ user: 'u1', safety_identifier: 's1' }).user).toBe('u1');
    expect(parse({ response_format: { type: 'json_object' } }).output).toEqual({ type: 'json' });
  });

  it('turns tool messages into tool results that know the call and its function name', () => {
    const req = parse({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'r1' },
        { role: 'tool', tool_call_id: 'call_unknown', content: [{ type: 'text', text: 'r2' }] },
      ],
    });
    expect(req.messages.slice(1)).toEqual([
      { role: 'assistant', parts: [{ type: 'tool-call', id: 'call_1', name: 'f', arguments: '{"a":1}', param: 'messages[1].tool_calls[0].function.arguments' }] },
      { role: 'user', parts: [{ type: 'tool-result', callId: 'call_1', name: 'f', content: [{ type: 'text', text: 'r1' }], plain: true, param: 'messages[2].tool_call_id' }] },
      { role: 'user', parts: [{ type: 'tool-result', callId: 'call_unknown', content: [{ type: 'text', text: 'r2' }], param: 'messages[3].tool_call_id' }] },
    ]);
  });

  it('gives back the provider state a tool-call id we issued carries, and the provider id', () => {
    const id = encodeToolCallId('fc_1', { provider: 'gemini', data: { id: 'fc_1', thoughtSignature: 'c2lnbmF0dXJl' } }, 'chatcmpl-1', 0);
    const req = parse({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: id, content: 'done' },
      ],
    }, gemini);
    expect(req.messages[1]!.parts[0]).toMatchObject({ type: 'tool-call', id: 'fc_1', state: { provider: 'gemini', data: { id: 'fc_1', thoughtSignature: 'c2lnbmF0dXJl' } } });
    expect(req.messages[2]!.parts[0]).toMatchObject({ type: 'tool-result', callId: 'fc_1', name: 'f' });
  });

  it('uses an assistant refusal as its text when it has no other', () => {
    expect(parse({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: '', refusal: 'I cannot.' }] }).messages[1])
      .toEqual({ role: 'assistant', parts: [{ type: 'text', text: '' }, { type: 'text', text: 'I cannot.' }] });
    expect(parse({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'Sure', refusal: 'I cannot.' }] }).messages[1])
      .toEqual({ role: 'assistant', parts: [{ type: 'text', text: 'Sure' }] });
  });

  it('reads images, files and audio into media parts that name their field', () => {
    const req = parse({ messages: [{ role: 'user', content: [
      { type: 'image_url', image_url: { url: 'data:image/PNG;base64,AAAA', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://x.test/a.jpg' } },
      { type: 'file', file: { filename: 'r.pdf', file_data: 'JVBE' } },
      { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } },
    ] }] }, gemini);
    expect(req.messages[0]!.parts).toEqual([
      { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' }, detail: 'low', param: 'messages[0].content[0].image_url.url' },
      { type: 'image', source: { kind: 'url', url: 'https://x.test/a.jpg' }, param: 'messages[0].content[1].image_url.url' },
      { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' }, param: 'messages[0].content[2].file.file_data' },
      { type: 'document', source: { kind: 'base64', mediaType: 'audio/wav', data: 'UklG' }, param: 'messages[0].content[3].type' },
    ]);
  });

  it('refuses content no provider behind the door can take, naming the field and the provider', () => {
    const part = (p: Record<string, unknown>) => () => parse({ messages: [{ role: 'user', content: [p] }] }, { ...gemini, displayName: 'Vertex' });
    expect(refusal(part({ type: 'image_url', image_url: { url: 'ftp://x/y.png' } })).param).toBe('messages[0].content[0].image_url.url');
    expect(refusal(part({ type: 'image_url', image_url: { url: 'data:image/png,plain' } })).param).toBe('messages[0].content[0].image_url.url');
    const fileId = refusal(part({ type: 'file', file: { file_id: 'file-abc' } }));
    expect([fileId.param, fileId.message]).toEqual(['messages[0].content[0].file.file_id', expect.stringContaining('Vertex')]);
    expect(refusal(part({ type: 'file', file: { file_data: 'AAAA', filename: 'x.constructor' } })).param).toBe('messages[0].content[0].file.file_data');
    expect(refusal(part({ type: 'input_audio', input_audio: { data: 'AA', format: 'constructor' } })).param).toBe('messages[0].content[0].input_audio');
    expect(refusal(part({ type: 'video', video: {} })).message).toMatch(/"video".*Vertex/);
  });
});

describe('Chat door: field policy per target protocol', () => {
  const claude: Target = { ...anthropic, displayName: 'Claude Proxy' };

  it.each([
    ['n', 2], ['logprobs', true], ['top_logprobs', 3], ['logit_bias', { 50256: -100 }], ['modalities', ['text', 'audio']],
    ['audio', { voice: 'alloy' }], ['web_search_options', {}], ['functions', [{ name: 'f' }]], ['function_call', 'auto'],
  ])('refuses %s for an Anthropic-protocol target, naming the field and the provider', (field, value) => {
    const err = refusal(() => parse({ [field]: value }, claude));
    expect(err.param).toBe(field);
    expect(err.message).toContain('Claude Proxy');
  });

  it.each([['n', 1], ['logprobs', false], ['top_logprobs', 0], ['logit_bias', {}], ['modalities', ['text']], ['audio', null]])(
    'accepts %s=%j (its default) for an Anthropic-protocol target',
    (field, value) => {
      expect(() => parse({ [field]: value }, claude)).not.toThrow();
    },
  );

  it('expresses Gemini\'s policy the same way: candidates and logprobs pass, the rest is refused', () => {
    expect(parse({ n: 2, logprobs: true }, gemini)).toMatchObject({ candidates: 2, logprobs: { top: 0 } });
    for (const [field, value] of [['logit_bias', { 1: 1 }], ['audio', { voice: 'x' }], ['prediction', { type: 'content', content: 'x' }], ['web_search_options', { search_context_size: 'low' }], ['functions', [{ name: 'f' }]], ['function_call', 'auto'], ['modalities', ['audio']]] as const) {
      const err = refusal(() => parse({ [field]: value }, gemini));
      expect([err.param, err.message]).toEqual([field, expect.stringContaining('Gemini')]);
    }
    expect(() => parse({ web_search_options: {}, prediction: {} }, gemini)).not.toThrow();
  });

  it('refuses nothing for its own protocol or an unnamed one', () => {
    expect(() => parse({ n: 3, logit_bias: { 1: 1 } }, { ...anthropic, protocol: 'openai-chat' })).not.toThrow();
    expect(() => parse({ n: 3 }, { provider: 'p', displayName: 'P', model: 'm' })).not.toThrow();
  });
});

const ctx: RenderContext = { model: 'anthropic/claude-x', created: 7, fallbackId: 'chatcmpl-fb', includeUsage: false };

describe('Chat door: answers', () => {
  it('renders text, reasoning, refusal, tool calls with their state in the id, usage details only when known', () => {
    const response: Response = {
      id: 'msg_1', model: 'claude-x-2026',
      choices: [{ index: 0, finish: 'tool-calls', parts: [
        { type: 'reasoning', text: 'hmm', state: { provider: 'anthropic', data: { signature: 's' } } },
        { type: 'reasoning', text: '', redacted: true, state: { provider: 'anthropic', data: { data: 'd' } } },
        { type: 'text', text: 'a' }, { type: 'text', text: 'b' },
        { type: 'tool-call', id: '', name: 'f', arguments: '', state: { provider: 'gemini', data: {} } },
      ] }],
      usage: { inputTokens: 10, outputTokens: 5, reasoningTokens: 2 },
    };
    expect(openaiChatClient.renderResponse(response, { ...ctx, modelPrefix: 'anthropic/' })).toEqual({
      id: 'msg_1', object: 'chat.completion', created: 7, model: 'anthropic/claude-x-2026',
      choices: [{ index: 0, logprobs: null, finish_reason: 'tool_calls', message: {
        role: 'assistant', content: 'ab', refusal: null, reasoning_content: 'hmm',
        tool_calls: [{ id: 'gmn1_schatcmplfbn0', type: 'function', function: { name: 'f', arguments: '{}' } }],
      } }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, completion_tokens_details: { reasoning_tokens: 2 } },
    });
  });

  it('shows the context model unless a prefix is given, and a fallback id', () => {
    const got = openaiChatClient.renderResponse({ model: 'dated', choices: [{ index: 0, parts: [], finish: 'refusal', refusal: 'no' }] }, ctx) as Record<string, any>;
    expect([got.id, got.model, got.choices[0].finish_reason, got.choices[0].message.refusal]).toEqual(['chatcmpl-fb', 'anthropic/claude-x', 'content_filter', 'no']);
  });
});

describe('Chat door: streams', () => {
  const render = (events: StreamEvent[], c: RenderContext = ctx, end = true) => {
    const r = openaiChatClient.createStreamRenderer(c);
    return events.map((e) => r.push(e)).join('') + (end ? r.end() : '');
  };
  const deltas = (text: string) => readFrames(text).outputs.map((o) => (o.kind === 'chunk' ? (o.chunk as any).choices.map((c: any) => [c.index, c.delta, c.finish_reason]) : o.error));

  it('opens each choice with a role chunk, gives {} to a call that streamed no arguments, and ends with [DONE]', () => {
    const text = render([
      { type: 'start', id: 'resp', model: 'm' },
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b', choice: 1 },
      { type: 'tool-call-start', id: 't1', name: 'f' },
      { type: 'tool-call-end', id: 't1' },
      { type: 'tool-call-start', id: 't2', name: 'g', choice: 1, arguments: '{"x":1}' },
      { type: 'tool-call-end', id: 't2', choice: 1 },
      { type: 'finish', reason: 'tool-calls' },
      { type: 'finish', reason: 'stop', choice: 1 },
    ]);
    expect(deltas(text)).toEqual([
      [[0, { role: 'assistant', content: '' }, null]],
      [[0, { content: 'a' }, null]],
      [[1, { role: 'assistant', content: '' }, null]],
      [[1, { content: 'b' }, null]],
      [[0, { tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] }, null]],
      [[0, { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, null]],
      [[1, { tool_calls: [{ index: 0, id: 't2', type: 'function', function: { name: 'g', arguments: '{"x":1}' } }] }, null]],
      [[0, {}, 'tool_calls']],
      [[1, {}, 'stop']],
    ]);
    expect(readFrames(text).done).toBe(true);
  });

  it('writes the usage chunk last with include_usage, zeros when the provider said nothing', () => {
    const text = render([{ type: 'text', text: 'a' }, { type: 'finish', reason: 'stop' }], { ...ctx, includeUsage: true });
    const { outputs, done } = readFrames(text);
    expect(done).toBe(true);
    expect(chunksOf(outputs.slice(0, -1)).every((c) => c.usage === null)).toBe(true);
    expect(outputs.at(-1)).toEqual({ kind: 'chunk', chunk: { id: 'chatcmpl-fb', object: 'chat.completion.chunk', created: 7, model: 'anthropic/claude-x', choices: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } } });
  });

  it('ends with one error frame and no [DONE] on an error, and writes nothing after it', () => {
    const error: ProviderError = { status: 503, kind: 'overloaded', message: 'busy' };
    const text = render([{ type: 'text', text: 'a' }, { type: 'error', error }, { type: 'text', text: 'late' }, { type: 'finish', reason: 'stop' }]);
    expect(readFrames(text)).toEqual({ done: false, outputs: [
      expect.objectContaining({ kind: 'chunk' }), expect.objectContaining({ kind: 'chunk' }),
      { kind: 'error', error: { error: { message: 'busy', type: 'server_error', param: null, code: 'overloaded' } } },
    ] });
  });

  it('says the stream was cut when it ends with neither a finish nor an error, and ends only once', () => {
    const r = openaiChatClient.createStreamRenderer(ctx);
    r.push({ type: 'text', text: 'a' });
    expect(readFrames(r.end()).outputs).toEqual([{ kind: 'error', error: { error: expect.objectContaining({ type: 'server_error', code: 'upstream_stream_broken' }) } }]);
    expect(r.end()).toBe('');
    const done = openaiChatClient.createStreamRenderer(ctx);
    done.push({ type: 'finish', reason: 'stop' });
    expect(done.end()).toContain('[DONE]');
    expect(done.end()).toBe('');
  });

  it('shows the provider\'s dated model under the prefix, and mints ids for calls without one', () => {
    const text = render([
      { type: 'start', model: 'gemini-3.5-flash-002' },
      { type: 'tool-call-start', id: '', name: 'f', arguments: '{}' },
      { type: 'tool-call-start', id: '', name: 'f', arguments: '{}' },
      { type: 'finish', reason: 'tool-calls' },
    ], { ...ctx, modelPrefix: 'gemini/' });
    const chunks = chunksOf(readFrames(text).outputs);
    expect(chunks[0]!.model).toBe('gemini/gemini-3.5-flash-002');
    expect(chunks.slice(1, 3).map((c) => c.choices[0]!.delta.tool_calls?.[0]?.id)).toEqual(['gw1_schatcmplfbn0', 'gw1_schatcmplfbn1']);
  });

  it('renders log probabilities on the text chunk, bytes from the token when the provider gave none', () => {
    const text = render([{ type: 'text', text: 'é', logprobs: [{ token: 'é', logprob: -0.5, top: [{ token: 'e', logprob: -2 }] }] }, { type: 'finish', reason: 'stop' }]);
    expect(chunksOf(readFrames(text).outputs)[1]!.choices[0]!.logprobs).toEqual({
      content: [{ token: 'é', logprob: -0.5, bytes: [195, 169], top_logprobs: [{ token: 'e', logprob: -2, bytes: [101] }] }], refusal: null,
    });
  });
});

describe('Chat door: errors', () => {
  it('renders a neutral error in OpenAI\'s shape with its status, param and the table\'s code unless the error has its own', () => {
    expect(openaiChatClient.renderError({ status: 400, kind: 'invalid_request', message: 'bad', param: 'temperature' })).toEqual({
      status: 400, body: { error: { message: 'bad', type: 'invalid_request_error', param: 'temperature', code: null } },
    });
    expect(chatError(openaiChatClient.renderError({ status: 503, kind: 'overloaded', message: 'm', code: null })).body.error.code).toBeNull();
    expect(chatError(openaiChatClient.renderError({ status: 429, kind: 'rate_limit', message: 'm' })).body.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' });
  });
});
