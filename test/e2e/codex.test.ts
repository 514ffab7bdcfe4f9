// Codex CLI itself (from npm, `codex exec`, offline) against the gateway's Responses door: on a
// Claude and a Gemini model served by mock providers (translated), with a tool round trip through
// a real MCP server, and on an OpenAI model through the fast path. Codex sends what it always
// sends (store: false, encrypted reasoning, namespace tools, web_search, prompt_cache_key,
// client_metadata…); none of it may become a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockHandler, MockReply, Recorded } from '../helpers/mock-provider.js';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runCodex } from '../helpers/codex.js';

const TOOL = 'mcp__weather__get_weather';
const MCP_RESULT = /Weather in Paris: 18°C, sunny \(MCP\)/;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
  gw.mocks.anthropic.setHandler(anthropicTool);
  gw.mocks.gemini.setHandler(geminiTool);
});
afterAll(async () => { await gw?.close(); });

const sse = (events: string[]): MockReply => ({ headers: { 'content-type': 'text/event-stream' }, chunks: events });
const body = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;

/** Claude: calls the MCP tool when asked about weather and it is offered, then repeats its result. */
const anthropicTool: MockHandler = (r) => {
  if (!r.url.startsWith('/v1/messages')) return undefined;
  const b = body(r);
  const last = b.messages.at(-1);
  const result = Array.isArray(last.content) ? last.content.find((c: any) => c.type === 'tool_result') : undefined;
  const offered = (b.tools ?? []).some((t: any) => t.name === TOOL) && JSON.stringify(b.messages).includes('weather');
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const start = ev('message_start', { message: { id: 'msg_cx', type: 'message', role: 'assistant', model: b.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 1 } } });
  const end = (reason: string) => [ev('message_delta', { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 7 } }), ev('message_stop', {})];
  if (!result && offered) {
    return sse([start,
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'I should call the weather tool.' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqCLAUDESIG' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_cx1', name: TOOL, input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }),
      ev('content_block_stop', { index: 1 }), ...end('tool_use')]);
  }
  const text = result ? `Claude says: ${JSON.stringify(result.content)}` : 'Hello from Claude.';
  return sse([start, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }), ev('content_block_stop', { index: 0 }), ...end('end_turn')]);
};

/** Gemini: the same in Gemini's protocol (a whole function call with a thought signature). */
const geminiTool: MockHandler = (r) => {
  const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
  if (!m) return undefined;
  const b = body(r);
  const result = b.contents.at(-1).parts.find((p: any) => p.functionResponse)?.functionResponse;
  const offered = (b.tools ?? []).some((t: any) => (t.functionDeclarations ?? []).some((f: any) => f.name === TOOL)) && JSON.stringify(b.contents).includes('weather');
  const parts = result ? [{ text: `Gemini says: ${JSON.stringify(result.response)}` }]
    : offered ? [{ functionCall: { name: TOOL, args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' }]
    : [{ text: 'Hello from Gemini.' }];
  const resp = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 7, totalTokenCount: 47 }, modelVersion: m[1], responseId: 'resp-cx' };
  return m[2] === 'generateContent' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(resp) } : sse([`data: ${JSON.stringify(resp)}\r\n\r\n`]);
};

const CASES = [
  { provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', hello: 'Hello from Claude.', says: 'Claude says:' },
  { provider: 'gemini', model: 'gemini/gemini-3.5-flash', hello: 'Hello from Gemini.', says: 'Gemini says:' },
] as const;

describe.each(CASES)('Codex CLI → $provider', ({ provider, model, hello, says }) => {
  it('says hello: Codex\'s default request is accepted as it is', async () => {
    const run = await runCodex({ url: gw.url, key: gw.key, model, prompt: 'Say hello.' });
    expect(run.stderr).not.toMatch(/\b400\b|error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(hello);
    const sent = gw.mocks[provider].requests.at(-1)!;
    expect(sent.body.toString()).not.toContain(gw.key);
  }, 120_000);

  it('runs an MCP tool the model calls, and the model gets its result', async () => {
    const before = gw.mocks[provider].requests.length;
    const run = await runCodex({ url: gw.url, key: gw.key, model, prompt: 'What is the weather in Paris? Use the weather tool.', mcp: true });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/weather\/get_weather/);
    expect(run.stdout).toContain(says);
    expect(run.stdout).toMatch(MCP_RESULT);
    const sent = gw.mocks[provider].requests.slice(before).map((r) => r.body.toString());
    expect(sent.some((b) => MCP_RESULT.test(b.replace(/\\u00b0/g, '°')))).toBe(true);
    if (provider === 'anthropic') expect(sent.at(-1)).toContain('EqCLAUDESIG'); // the thinking signature came back
    else expect(sent.at(-1)).toContain('c2lnbmF0dXJl'); // so did Gemini's thought signature
  }, 180_000);
});

describe('Codex CLI → OpenAI (fast path)', () => {
  it('says hello through OpenAI\'s own /v1/responses, the body as Codex sent it', async () => {
    const run = await runCodex({ url: gw.url, key: gw.key, model: 'openai/gpt-5.4', prompt: 'Say hello.' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(MOCK_TEXT);
    const sent = gw.mocks.openai.requests.at(-1)!;
    expect(sent.url).toBe('/v1/responses');
    const b = JSON.parse(sent.body.toString()) as Record<string, any>;
    expect(b.model).toBe('gpt-5.4');
    expect(b.store).toBe(false);
    expect(b.tools.some((t: any) => t.type === 'namespace')).toBe(true);
  }, 120_000);
});

describe('Codex CLI\'s built-in OpenAI provider', () => {
  it('is told at once that the gateway speaks HTTP, not WebSocket, and works over HTTP', async () => {
    const before = gw.mocks.openai.requests.length;
    const run = await runCodex({ url: gw.url, key: gw.key, model: 'gpt-5.4', prompt: 'Say hello.', builtInOpenAI: true });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(MOCK_TEXT);
    expect(run.stdout + run.stderr).not.toMatch(/Reconnecting/); // no WebSocket retries before HTTP
    expect(gw.mocks.openai.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/responses']);
  }, 120_000);
});
