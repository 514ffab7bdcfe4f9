// Responses as an upstream protocol: OpenAI's descriptor names the models that must be called
// through /v1/responses (its Responses-only models refuse Chat requests), so a Chat Completions or
// Messages request for one is translated to Responses upstream and back — a rule in data, checked
// here end to end with the official SDKs on both doors, streamed and not, tools included.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MOCK_TEXT, responsesReply, type MockHandler } from '../helpers/mock-provider.js';
import { upstreamProtocol, provider } from '../../src/providers/registry.js';

let gw: TestGateway;
const calls: Array<{ url: string; body: Record<string, any> }> = [];

/** OpenAI that answers /v1/responses only (as for a Responses-only model), with a function call when offered tools and no result yet. */
const responsesOnly: MockHandler = (r) => {
  if (r.url !== '/v1/responses') return { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'This model is only supported in v1/responses and not in v1/chat/completions.', type: 'invalid_request_error', param: 'model', code: null } }) };
  const b = JSON.parse(r.body.toString()) as Record<string, any>;
  calls.push({ url: r.url, body: b });
  const answered = JSON.stringify(b.input).includes('function_call_output');
  if (!b.tools?.length || answered) return responsesReply(b.model, b.stream === true, MOCK_TEXT.split(/(?<= )/));
  const item = { id: 'fc_up1', type: 'function_call', status: 'completed', call_id: 'call_up1', name: 'get_weather', arguments: '{"city":"Paris"}' };
  const response = { id: 'resp_up', object: 'response', created_at: 1, status: 'completed', model: b.model, output: [item], usage: { input_tokens: 9, output_tokens: 4, total_tokens: 13 } };
  if (!b.stream) return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(response) };
  let seq = 0;
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  return { headers: { 'content-type': 'text/event-stream' }, chunks: [
    ev('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } }),
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } }),
    ev('response.function_call_arguments.delta', { item_id: 'fc_up1', output_index: 0, delta: '{"city":' }),
    ev('response.function_call_arguments.delta', { item_id: 'fc_up1', output_index: 0, delta: '"Paris"}' }),
    ev('response.function_call_arguments.done', { item_id: 'fc_up1', output_index: 0, arguments: '{"city":"Paris"}' }),
    ev('response.output_item.done', { output_index: 0, item }),
    ev('response.completed', { response }),
  ] };
};

beforeAll(async () => {
  gw = await startTestGateway();
  gw.mocks.openai.setHandler(responsesOnly);
});
afterAll(async () => { await gw?.close(); });

describe('the per-model upstream protocol rule', () => {
  it('sends OpenAI\'s Responses-only models through Responses, and the rest as the door speaks', () => {
    const openai = provider('openai');
    expect(upstreamProtocol(openai, 'gpt-5-pro', 'openai-chat')).toBe('openai-responses');
    expect(upstreamProtocol(openai, 'gpt-5.1-codex-max', 'anthropic')).toBe('openai-responses');
    expect(upstreamProtocol(openai, 'o3-deep-research', 'openai-chat')).toBe('openai-responses');
    expect(upstreamProtocol(openai, 'gpt-5.4', 'openai-chat')).toBe('openai-chat');
    expect(upstreamProtocol(openai, 'gpt-5.4', 'openai-responses')).toBe('openai-responses');
    expect(upstreamProtocol(openai, 'gpt-5.4', 'anthropic')).toBe('openai-chat');
  });
});

const weatherChat: OpenAI.Chat.ChatCompletionTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const weatherMsg: Anthropic.Tool = { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

describe('Chat Completions → a Responses-only model', () => {
  it.each([false, true])('text and a tool round trip (stream: %s)', async (stream) => {
    const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    const text = stream
      ? (await c.chat.completions.stream({ model: 'openai/gpt-5-pro', messages: [{ role: 'user', content: 'hi' }] }).finalChatCompletion()).choices[0]!.message.content
      : (await c.chat.completions.create({ model: 'gpt-5-pro', messages: [{ role: 'user', content: 'hi' }] })).choices[0]!.message.content;
    expect(text).toBe(MOCK_TEXT);
    expect(calls.at(-1)!.body).toMatchObject({ model: 'gpt-5-pro', store: false });
    const ask: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Paris?' };
    const first = stream
      ? await c.chat.completions.stream({ model: 'gpt-5-pro', messages: [ask], tools: [weatherChat] }).finalChatCompletion()
      : await c.chat.completions.create({ model: 'gpt-5-pro', messages: [ask], tools: [weatherChat] });
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    const second = await c.chat.completions.create({ model: 'gpt-5-pro', tools: [weatherChat], messages: [ask, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18°C' }] });
    expect(second.choices[0]!.message.content).toBe(MOCK_TEXT);
    const sent = calls.at(-1)!.body;
    expect(sent.input.find((i: any) => i.type === 'function_call')).toMatchObject({ call_id: 'call_up1', name: 'get_weather' });
    expect(sent.input.find((i: any) => i.type === 'function_call_output')).toMatchObject({ call_id: 'call_up1', output: '18°C' });
  });
});

describe('Messages → a Responses-only model', () => {
  it.each([false, true])('text and a tool call (stream: %s)', async (stream) => {
    const c = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 });
    const msg = stream
      ? await c.messages.stream({ model: 'openai/gpt-5-pro', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
      : await c.messages.create({ model: 'openai/gpt-5-pro', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    const tool = stream
      ? await c.messages.stream({ model: 'openai/gpt-5-pro', max_tokens: 64, tools: [weatherMsg], messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage()
      : await c.messages.create({ model: 'openai/gpt-5-pro', max_tokens: 64, tools: [weatherMsg], messages: [{ role: 'user', content: 'Weather?' }] });
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    expect(calls.at(-1)!.url).toBe('/v1/responses');
  });
});
