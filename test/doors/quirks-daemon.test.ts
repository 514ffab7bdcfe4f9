// Quirk profiles end to end: a real daemon, the official SDKs as clients, and mock servers that
// behave as DeepSeek, Mistral, Ollama and Groq do (test/helpers/mock-provider.ts quirk modes). Each
// conversation here fails against such a server without its profile; one case per quirk shows it.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { DEEPSEEK_REASONING, MOCK_TEXT, type MockQuirk } from '../helpers/mock-provider.js';
import { startQuirkyGateway, type QuirkyGateway } from '../helpers/quirky-gateway.js';

let q: QuirkyGateway | undefined;
afterEach(async () => { await q?.close(); q = undefined; });

async function start(quirk: MockQuirk, profile?: string) {
  q = await startQuirkyGateway(quirk, profile);
  return {
    q,
    chat: new OpenAI({ baseURL: `${q.url}/v1`, apiKey: q.key, maxRetries: 0 }),
    messages: new Anthropic({ baseURL: q.url, apiKey: q.key, maxRetries: 0 }),
  };
}

const weatherTool: Anthropic.Tool = { name: 'get_weather', description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const chatWeather: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const ID9 = /^[a-zA-Z0-9]{9}$/;

describe('DeepSeek-like (thinking mode wants reasoning_content back on tool turns)', () => {
  /** A Messages client's tool loop: the first answer, then the tool result sent with the whole history. */
  async function toolLoop(messages: Anthropic, model: string, stream: boolean) {
    const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
    const create = (params: Anthropic.MessageCreateParamsNonStreaming) => (stream ? messages.messages.stream(params).finalMessage() : messages.messages.create(params));
    const first = await create({ model, max_tokens: 512, tools: [weatherTool], messages: [ask] });
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    const second = await create({ model, max_tokens: 512, tools: [weatherTool], messages: [
      ask, { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18°C' }] },
    ] });
    return { first, second };
  }

  it.each([false, true])('a Messages client completes a tool loop (stream: %s); the reasoning went back', async (stream) => {
    const { q, messages } = await start('deepseek');
    const { first, second } = await toolLoop(messages, q.model('deepseek-chat'), stream);
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: DEEPSEEK_REASONING });
    expect(second.content.at(-1)).toEqual({ type: 'text', text: MOCK_TEXT });
    const sent = q.lastBody();
    expect(sent.messages.find((m: any) => m.role === 'assistant')).toMatchObject({ reasoning_content: DEEPSEEK_REASONING, tool_calls: [{ id: 'call_q1' }] });
    expect(sent.max_tokens).toBe(512);
    expect(sent).not.toHaveProperty('max_completion_tokens');
  });

  it('a Chat client that keeps no reasoning_content in its history (same protocol) still gets an answer', async () => {
    const { q, chat } = await start('deepseek');
    const model = q.model('deepseek-chat');
    const first = await chat.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [chatWeather] });
    expect((first.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe(DEEPSEEK_REASONING);
    const call = first.choices[0]!.message.tool_calls![0]!;
    // As many Chat clients do: only content and tool_calls are kept.
    const answer = await chat.chat.completions.create({ model, tools: [chatWeather], messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: '18°C' },
    ] });
    expect(answer.choices[0]!.message.content).toBe(MOCK_TEXT);
    expect(q.lastBody().messages[1]).toMatchObject({ reasoning_content: '' });
  });

  it("a 401 through the Chat door names DeepSeek and the command that fixes its key, not OpenAI's", async () => {
    const { q, chat } = await start('deepseek');
    q.mock.setHandler(() => ({ status: 401, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'Authentication Fails (no such user)', type: 'authentication_error', param: null, code: 'invalid_request_error' } }) }));
    await expect(chat.chat.completions.create({ model: q.model('deepseek-chat'), messages: [{ role: 'user', content: 'hi' }] }))
      .rejects.toMatchObject({ status: 401, message: expect.stringMatching(/^401 DeepSeek rejected the API key stored in the gateway \(Authentication Fails \(no such user\)\); replace it with: gateway providers set deepseek$/) });
  });

  it('without the profile the same loop gets DeepSeek\'s 400', async () => {
    const { q, messages } = await start('deepseek', 'openai');
    await expect(toolLoop(messages, q.model('deepseek-chat'), false)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('reasoning_content') });
  });
});

describe('Mistral-like (9-character tool-call ids, no max_completion_tokens, no stream_options)', () => {
  const history: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_7Qa-from-another-model', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_7Qa-from-another-model', content: '18°C' },
  ];

  it('the Chat door sends a history with foreign ids (same protocol), rewritten and still paired', async () => {
    const { q, chat } = await start('mistral');
    const answer = await chat.chat.completions.create({ model: q.model('mistral-large-latest'), messages: history, tools: [chatWeather], max_completion_tokens: 64 });
    expect(answer.choices[0]!.message.content).toBe(MOCK_TEXT);
    const sent = q.lastBody();
    const id = sent.messages[1].tool_calls[0].id;
    expect(id).toMatch(ID9);
    expect(sent.messages[2].tool_call_id).toBe(id);
    expect(sent.max_tokens).toBe(64);
    // Resending the same history sends the same ids: a stateless client works turn after turn.
    await chat.chat.completions.create({ model: q.model('mistral-large-latest'), messages: history, tools: [chatWeather] });
    expect(q.lastBody().messages[1].tool_calls[0].id).toBe(id);
  });

  it('a Chat stream asking for usage reaches Mistral without stream_options, and the usage still comes', async () => {
    const { q, chat } = await start('mistral');
    const stream = await chat.chat.completions.create({ model: q.model('mistral-large-latest'), messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(MOCK_TEXT);
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 6 });
    expect(q.lastBody()).not.toHaveProperty('stream_options');
  });

  it('a Messages client (Claude ids) continues a tool conversation through translation', async () => {
    const { q, messages } = await start('mistral');
    const model = q.model('mistral-large-latest');
    const first = await messages.messages.create({ model, max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather?' }] });
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(call.id).toBe('Xq7bT2mLp'); // Mistral's own id, unchanged
    const answer = await messages.messages.create({ model, max_tokens: 100, tools: [weatherTool], messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Rome' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '21°C' }] },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18°C' }] },
    ] });
    expect(answer.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    const sent = q.lastBody();
    expect(sent.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual([expect.stringMatching(ID9), 'Xq7bT2mLp']);
  });

  it('without the profile the foreign ids get Mistral\'s 400', async () => {
    const { q, chat } = await start('mistral', 'openai');
    await expect(chat.chat.completions.create({ model: q.model('mistral-large-latest'), messages: history, tools: [chatWeather] }))
      .rejects.toMatchObject({ status: 400, message: expect.stringContaining('Tool call id was call_7Qa-from-another-model but must be a-z, A-Z, 0-9, with a length of 9.') });
  });
});

describe('Ollama-like (streams lose tool calls)', () => {
  it('a Chat client streaming with tools gets the tool call as stream chunks', async () => {
    const { q, chat } = await start('ollama');
    const stream = await chat.chat.completions.create({ model: q.model('qwen3:8b'), messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [chatWeather], stream: true, stream_options: { include_usage: true } });
    const calls: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      calls.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(calls).toEqual([{ index: 0, id: 'call_q1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 6 });
    expect(q.lastBody().stream).not.toBe(true);
    expect(q.mock.requests.at(-1)!.headers.authorization).toBeUndefined(); // a local server gets no credential
  });

  it('a Messages client streaming with tools gets a tool_use block', async () => {
    const { q, messages } = await start('ollama');
    const events: string[] = [];
    const stream = messages.messages.stream({ model: q.model('qwen3:8b'), max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    stream.on('streamEvent', (e) => events.push(e.type));
    const msg = await stream.finalMessage();
    expect(msg.content).toEqual([{ type: 'tool_use', id: 'call_q1', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(q.lastBody().stream).not.toBe(true);
  });

  it('a stream without tools is still streamed upstream', async () => {
    const { q, chat } = await start('ollama');
    const stream = await chat.chat.completions.create({ model: q.model('qwen3:8b'), messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(MOCK_TEXT);
    expect(q.lastBody().stream).toBe(true);
  });

  it('without the profile the tool call is lost', async () => {
    const { q, chat } = await start('ollama', 'openai');
    const stream = await chat.chat.completions.create({ model: q.model('qwen3:8b'), messages: [{ role: 'user', content: 'Weather?' }], tools: [chatWeather], stream: true });
    const calls: unknown[] = [];
    for await (const chunk of stream) calls.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
    expect(calls).toEqual([]);
  });
});

describe('Groq-like (store, name, logprobs, string system content)', () => {
  it('drops store and names, flattens system parts: the request goes through', async () => {
    const { q, chat } = await start('groq');
    const answer = await chat.chat.completions.create({
      model: q.model('llama-3.3-70b-versatile'), store: true,
      messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Use SI units.' }] }, { role: 'user', content: 'hi', name: 'ann' }],
    });
    expect(answer.choices[0]!.message.content).toBe(MOCK_TEXT);
    const sent = q.lastBody();
    expect(sent).not.toHaveProperty('store');
    expect(sent.messages).toEqual([{ role: 'system', content: 'Be brief.\n\nUse SI units.' }, { role: 'user', content: 'hi' }]);
  });

  it('refuses logprobs with a 400 naming the field, without calling Groq', async () => {
    const { q, chat } = await start('groq');
    const before = q.requests();
    const err = await chat.chat.completions.create({ model: q.model('llama-3.3-70b-versatile'), messages: [{ role: 'user', content: 'hi' }], logprobs: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, param: 'logprobs', message: expect.stringContaining('does not accept logprobs') });
    expect(q.requests()).toBe(before);
  });

  it('without the profile Groq answers 400 to store', async () => {
    const { q, chat } = await start('groq', 'openai');
    await expect(chat.chat.completions.create({ model: q.model('llama-3.3-70b-versatile'), messages: [{ role: 'user', content: 'hi' }], store: true })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("'store' is unsupported") });
  });
});
