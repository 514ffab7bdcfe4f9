// The Messages door's protocol module on its own: what Claude Code really sends parses for a foreign
// model without a 400; ids and opaque provider state survive the round trip through the client;
// answers and streams render as Anthropic's format; a stream cut short ends in an error event.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anthropicClient } from '../../src/providers/protocols/anthropic/client/index.js';
import { geminiProvider } from '../../src/providers/protocols/gemini/provider/index.js';
import { encodeStateToken } from '../../src/providers/protocols/state-token.js';
import type { RenderContext, Target } from '../../src/providers/ir/protocol.js';
import type { StreamEvent } from '../../src/providers/ir/types.js';
import { TranslationError } from '../../src/providers/types.js';
import { SseParser } from '../../src/daemon/http/sse.js';

const target: Target = { provider: 'gemini', displayName: 'Gemini', model: 'gemini-3.5-flash' };
const rctx: RenderContext = { model: 'gemini/gemini-3.5-flash', modelPrefix: 'gemini/', created: 1767225600, fallbackId: 'msg_fixture', includeUsage: false };
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/protocols/anthropic-client/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

/** The SSE text as `[event, data]` pairs. */
function frames(text: string): Array<[string | undefined, any]> {
  const p = new SseParser();
  return [...p.push(text), ...p.end()].map((e) => [e.event, JSON.parse(e.data)]);
}

/** The assistant message's content blocks, rebuilt from a stream as the Anthropic SDK accumulates them. */
function assemble(text: string): any[] {
  const blocks: any[] = [];
  for (const [e, d] of frames(text)) {
    if (e === 'content_block_start') blocks[d.index] = { ...d.content_block };
    if (e === 'content_block_delta' && d.delta.type === 'signature_delta') blocks[d.index].signature = d.delta.signature;
    if (e === 'content_block_delta' && d.delta.type === 'thinking_delta') blocks[d.index].thinking += d.delta.thinking;
    if (e === 'content_block_delta' && d.delta.type === 'text_delta') blocks[d.index].text += d.delta.text;
    if (e === 'content_block_delta' && d.delta.type === 'input_json_delta') blocks[d.index].json = (blocks[d.index].json ?? '') + d.delta.partial_json;
  }
  for (const b of blocks) if (b.type === 'tool_use') { b.input = JSON.parse(b.json ?? '{}'); delete b.json; }
  return blocks;
}

describe('parse: a Messages request for a foreign model', () => {
  it('takes Claude Code\'s own request (thinking, effort, context_management, cache_control, 32000 tokens, a trailing system message) without refusing anything', () => {
    const req = anthropicClient.parseRequest(fixture('claude-code.request.json'), target);
    expect(req.model).toBe('gemini-3.5-flash');
    expect(req.maxOutputTokens).toBe(32000);
    expect(req.stream).toBe(true);
    expect(req.reasoning).toEqual({ enabled: true, includeText: false, effort: 'high' });
    expect(req.messages.map((m) => m.role)).toEqual(['user']);
    // The system blocks, then the system message that came after the user turn.
    expect(req.system.length).toBeGreaterThanOrEqual(4);
    expect(req.system.at(-1)!.text).toMatch(/^# Environment/);
    expect(req.tools.map((t) => t.name)).toEqual(['Agent', 'Bash', 'DeferredToolPlaceholder']);
    expect(req.tools[1]!.inputSchema).toMatchObject({ type: 'object', properties: { command: { type: 'string' } } });
    expect(req.user).toBeUndefined(); // Claude Code's metadata.user_id is a JSON blob, not an end-user id
  });

  it('maps tool_choice, stop sequences, sampling, thinking budget and a JSON schema output', () => {
    const req = anthropicClient.parseRequest({
      model: 'x', max_tokens: 100, stop_sequences: ['END'], temperature: 0.3, top_p: 0.9, top_k: 40,
      thinking: { type: 'enabled', budget_tokens: 2048 }, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      metadata: { user_id: 'user-42' }, messages: [{ role: 'user', content: 'Weather?' }],
    }, target);
    expect(req).toMatchObject({
      stopSequences: ['END'], temperature: 0.3, topP: 0.9, topK: 40, user: 'user-42',
      reasoning: { enabled: true, budgetTokens: 2048, includeText: true },
      output: { type: 'json', schema: { type: 'object' } },
      toolChoice: { type: 'tool', name: 'get_weather' }, parallelToolCalls: false,
    });
  });

  it('refuses, naming the field and the provider, what only Anthropic can run', () => {
    const base = { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    const serverTool = () => anthropicClient.parseRequest({ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, target);
    expect(serverTool).toThrow(TranslationError);
    expect(serverTool).toThrow(/tools\[0\]\.type.*web_search_20250305.*Gemini/);
    expect(() => anthropicClient.parseRequest({ ...base, mcp_servers: [{ type: 'url', url: 'https://x' }] }, target)).toThrow(/mcp_servers.*Gemini/);
    expect(() => anthropicClient.parseRequest({ ...base, max_tokens: undefined }, target)).toThrow(/max_tokens: is required/);
    expect(() => anthropicClient.parseRequest({ ...base, messages: [{ role: 'tool', content: 'x' }] }, target)).toThrow(/messages\[0\]\.role/);
  });
});

describe('round trip through the client', () => {
  const events: StreamEvent[] = [
    { type: 'start', id: 'resp-1', model: 'gemini-3.5-flash-001' },
    { type: 'reasoning', text: 'Need the weather.' },
    { type: 'reasoning-end', state: { provider: 'gemini', data: { thoughtSignature: 'sig-thought' } } },
    { type: 'text', text: 'Checking.' },
    { type: 'tool-call-start', id: 'call 1/with:odd chars', name: 'get_weather' },
    { type: 'tool-call-arguments', id: 'call 1/with:odd chars', delta: '{"city":' },
    { type: 'tool-call-arguments', id: 'call 1/with:odd chars', delta: '"Paris"}' },
    { type: 'tool-call-end', id: 'call 1/with:odd chars', state: { provider: 'gemini', data: { thoughtSignature: 'sig-call' } } },
    { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 20 } },
  ];

  it('renders a stream in Anthropic\'s event order, with increasing block indexes and final usage', () => {
    const r = anthropicClient.createStreamRenderer(rctx);
    const out = frames(events.map((e) => r.push(e)).join('') + r.end());
    expect(out.map(([e]) => e)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', // thinking + signature
      'content_block_start', 'content_block_delta', 'content_block_stop', // text
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', // tool_use
      'content_block_start', 'content_block_delta', 'content_block_stop', // the call's state
      'message_delta', 'message_stop',
    ]);
    expect(out[0]![1].message).toMatchObject({ id: 'msg_fixture', model: 'gemini/gemini-3.5-flash-001', role: 'assistant', content: [] });
    const starts = out.filter(([e]) => e === 'content_block_start').map(([, d]) => d.index);
    expect(starts).toEqual([0, 1, 2, 3]);
    const toolStart = out.filter(([e]) => e === 'content_block_start')[2]![1].content_block;
    expect(toolStart.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(out.at(-2)![1]).toEqual({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 100, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } } });
  });

  it('a client that sends the answer back gives the provider its own call id and state again', () => {
    const r = anthropicClient.createStreamRenderer(rctx);
    const blocks = assemble(events.map((e) => r.push(e)).join(''));
    const next = anthropicClient.parseRequest({
      model: 'x', max_tokens: 100, messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: blocks },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: blocks[2].id, content: '18°C' }] },
      ],
    }, target);
    const assistant = next.messages[1]!;
    expect(assistant.parts).toEqual([
      { type: 'reasoning', text: 'Need the weather.', state: { provider: 'gemini', data: { thoughtSignature: 'sig-thought' } } },
      { type: 'text', text: 'Checking.' },
      { type: 'tool-call', id: 'call 1/with:odd chars', name: 'get_weather', arguments: '{"city":"Paris"}', state: { provider: 'gemini', data: { thoughtSignature: 'sig-call' } } },
    ]);
    expect(next.messages[2]!.parts).toEqual([{ type: 'tool-result', callId: 'call 1/with:odd chars', name: 'get_weather', content: [{ type: 'text', text: '18°C' }] }]);
  });

  it('a stream that ends before it finished ends in an error event, never message_stop', () => {
    const r = anthropicClient.createStreamRenderer(rctx);
    const out = frames(r.push(events[0]!) + r.push(events[3]!) + r.end());
    expect(out.map(([e]) => e)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'error']);
    expect(out.at(-1)![1]).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('renders a whole answer as a Message', () => {
    const msg = anthropicClient.renderResponse({
      id: 'chatcmpl-1', model: 'gpt-5.4-2026-03-05',
      choices: [{ index: 0, finish: 'stop', parts: [{ type: 'reasoning', text: 'Hmm.' }, { type: 'text', text: 'Hello.' }] }],
      usage: { inputTokens: 10, outputTokens: 5, reasoningTokens: 2 },
    }, { ...rctx, model: 'openai/gpt-5.4-2026-03-05' });
    expect(msg).toEqual({
      id: 'msg_fixture', type: 'message', role: 'assistant', model: 'openai/gpt-5.4-2026-03-05',
      content: [{ type: 'thinking', thinking: 'Hmm.', signature: '' }, { type: 'text', text: 'Hello.' }],
      stop_reason: 'end_turn', stop_sequence: null, stop_details: null,
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } },
    });
  });

  it('takes cache reads and writes out of input_tokens, and gives the writes by TTL', () => {
    const msg = anthropicClient.renderResponse({
      choices: [{ index: 0, finish: 'stop', parts: [{ type: 'text', text: 'Hello.' }] }],
      usage: { inputTokens: 1540, outputTokens: 30, cachedInputTokens: 1200, cacheWriteTokens: 300, cacheWrite1hTokens: 200 },
    }, rctx) as { usage: unknown };
    expect(msg.usage).toEqual({
      input_tokens: 40, output_tokens: 30, cache_creation_input_tokens: 300, cache_read_input_tokens: 1200,
      cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
    });
  });
});

describe('calls the provider gave no id (a recorded Gemini answer with two)', () => {
  const gemini: Target = { provider: 'gemini', displayName: 'Gemini', model: 'gemini-2.5-flash', protocol: 'gemini' };
  const recorded = (name: string) => readFileSync(new URL(`../fixtures/gemini/call-without-id.${name}`, import.meta.url), 'utf8');
  const answer = JSON.parse(recorded('response.json')) as any;
  const signature: string = answer.candidates[0].content.parts[0].thoughtSignature;
  const weather = { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

  /** The assistant content the client gets, from the whole answer or from the stream. */
  const content = {
    whole: (): any[] => (anthropicClient.renderResponse(geminiProvider.readResponse(answer, gemini), rctx) as any).content,
    stream: (): any[] => {
      const reader = geminiProvider.createStreamReader(gemini);
      const renderer = anthropicClient.createStreamRenderer(rctx);
      const parser = new SseParser();
      const events = [...parser.push(recorded('sse')), ...parser.end()].flatMap((e) => reader.push(e));
      return assemble([...events, ...reader.end()].map((e) => renderer.push(e)).join('') + renderer.end());
    },
  };
  const toolUses = (blocks: any[]) => blocks.filter((b) => b.type === 'tool_use');

  it.each(['whole', 'stream'] as const)('%s: each call gets its own tool_use id, in characters Anthropic accepts', (form) => {
    const ids = toolUses(content[form]()).map((b) => b.id as string);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
  });

  it('a call has the same id in the stream as in the whole answer', () => {
    expect(toolUses(content.stream()).map((b) => b.id)).toEqual(toolUses(content.whole()).map((b) => b.id));
  });

  it.each(['whole', 'stream'] as const)('%s: sent back, each result reaches Gemini for its own call, the first call with its thought signature', (form) => {
    const blocks = content[form]();
    const [oslo, rome] = toolUses(blocks);
    const next = anthropicClient.parseRequest({
      model: 'x', max_tokens: 100, tools: [weather], messages: [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        { role: 'assistant', content: blocks },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: oslo.id, content: '{"temp_c":3}' },
          { type: 'tool_result', tool_use_id: rome.id, content: '{"temp_c":21}' },
        ] },
      ],
    }, gemini);
    const sent = geminiProvider.buildRequest(next, gemini).body as any;
    expect(sent.contents.slice(1)).toEqual([
      { role: 'model', parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: signature },
        { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
      ] },
      { role: 'user', parts: [
        { functionResponse: { name: 'get_weather', response: { output: { temp_c: 3 } } } },
        { functionResponse: { name: 'get_weather', response: { output: { temp_c: 21 } } } },
      ] },
    ]);
  });

  it('still reads the toolu_gw_ ids it issued before, and the call state named by the provider\'s id', () => {
    const providerId = 'call 1/odd';
    const legacy = `toolu_gw_${Buffer.from(providerId, 'utf8').toString('base64url')}`;
    const state = { provider: 'gemini', data: { id: providerId, thoughtSignature: 'c2ln' } };
    const next = anthropicClient.parseRequest({
      model: 'x', max_tokens: 100, messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: [
          { type: 'tool_use', id: legacy, name: 'get_weather', input: { city: 'Oslo' } },
          { type: 'thinking', thinking: '', signature: encodeStateToken(state, providerId) },
        ] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: legacy, content: '3°C' }] },
      ],
    }, gemini);
    expect(next.messages[1]!.parts).toEqual([{ type: 'tool-call', id: providerId, name: 'get_weather', arguments: '{"city":"Oslo"}', state }]);
    expect(next.messages[2]!.parts).toEqual([{ type: 'tool-result', callId: providerId, name: 'get_weather', content: [{ type: 'text', text: '3°C' }] }]);
  });
});
