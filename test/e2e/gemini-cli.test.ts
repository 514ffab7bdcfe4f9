// gemini-cli itself (from npm, headless `gemini -p`, offline) against the gateway's root Gemini
// door (GOOGLE_GEMINI_BASE_URL = the root, not /gemini): on a Claude and a GPT model served by mock
// providers (translated), and on a Gemini model through the fast path. Each says hello, and each
// runs a tool round trip through a real MCP server: the model asks for the weather tool, gemini-cli
// runs it, and the model repeats what it returned. gemini-cli sends what it always sends (a long
// systemInstruction, a dozen tools with parametersJsonSchema, thinkingConfig, topK…); none of it
// may become a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockHandler, MockReply, Recorded } from '../helpers/mock-provider.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runGeminiCli } from '../helpers/gemini-cli.js';

/** gemini-cli's name for the MCP server's tool: mcp_<server>_<tool>. */
const TOOL = 'mcp_weather_get_weather';
const MCP_RESULT = /Weather in Paris: 18°C, sunny \(MCP\)/;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
  gw.mocks.anthropic.setHandler(anthropicWeather);
  gw.mocks.openai.setHandler(openaiWeather);
  gw.mocks.gemini.setHandler(geminiWeather);
});
afterAll(async () => { await gw?.close(); });

const sse = (events: string[]): MockReply => ({ headers: { 'content-type': 'text/event-stream' }, chunks: events });
const json = (v: unknown): MockReply => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(v) });
const body = (r: Recorded) => JSON.parse(r.body.toString('utf8')) as Record<string, any>;
const asksWeather = (conversation: unknown) => /weather/i.test(JSON.stringify(conversation));

/** What gemini-cli's model router (its "classifier") asks for in JSON mode: how hard the task is. */
const CLASSIFIED = JSON.stringify({ complexity_reasoning: 'A greeting.', complexity_score: 10 });
const wantsComplexity = (schema: unknown) => JSON.stringify(schema ?? null).includes('complexity_score');

/** Claude: calls the tool when asked about weather and it is offered, then repeats its result. */
const anthropicWeather: MockHandler = (r) => {
  if (!r.url.startsWith('/v1/messages')) return undefined;
  const b = body(r);
  const last = b.messages.at(-1);
  const result = Array.isArray(last.content) ? last.content.find((c: any) => c.type === 'tool_result') : undefined;
  const call = !result && (b.tools ?? []).some((t: any) => t.name === TOOL) && asksWeather(b.messages);
  const text = wantsComplexity(b.output_config?.format?.schema) ? CLASSIFIED : result ? `Claude says: ${JSON.stringify(result.content)}` : 'Hello from Claude.';
  const usage = { input_tokens: 40, output_tokens: 7 };
  const message = { id: 'msg_gc', type: 'message', role: 'assistant', model: b.model, stop_sequence: null };
  if (b.stream !== true) {
    return json({ ...message, content: call ? [{ type: 'tool_use', id: 'toolu_gc1', name: TOOL, input: { city: 'Paris' } }] : [{ type: 'text', text }], stop_reason: call ? 'tool_use' : 'end_turn', usage });
  }
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const start = ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 40, output_tokens: 1 } } });
  const end = (reason: string) => [ev('message_delta', { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 7 } }), ev('message_stop', {})];
  if (call) {
    return sse([start,
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'I should call the weather tool.' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqCLAUDESIG' } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_gc1', name: TOOL, input: {} } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }),
      ev('content_block_stop', { index: 1 }), ...end('tool_use')]);
  }
  return sse([start, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }), ev('content_block_stop', { index: 0 }), ...end('end_turn')]);
};

/** GPT (Chat Completions): the same, with the call's arguments streamed in pieces. */
const openaiWeather: MockHandler = (r) => {
  if (!r.url.startsWith('/v1/chat/completions')) return undefined;
  const b = body(r);
  const last = b.messages.at(-1);
  const result = last.role === 'tool' ? String(typeof last.content === 'string' ? last.content : JSON.stringify(last.content)) : undefined;
  const call = result === undefined && (b.tools ?? []).some((t: any) => t.function?.name === TOOL) && asksWeather(b.messages);
  const text = wantsComplexity(b.response_format?.json_schema?.schema) ? CLASSIFIED : result !== undefined ? `GPT says: ${result}` : 'Hello from GPT.';
  const usage = { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 };
  const toolCall = { id: 'call_gc1', type: 'function', function: { name: TOOL, arguments: '{"city":"Paris"}' } };
  if (b.stream !== true) {
    return json({ id: 'chatcmpl-gc', object: 'chat.completion', created: 1, model: b.model, choices: [{ index: 0, message: { role: 'assistant', content: call ? null : text, ...(call ? { tool_calls: [toolCall] } : {}) }, finish_reason: call ? 'tool_calls' : 'stop' }], usage });
  }
  const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-gc', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const tail = [`data: ${JSON.stringify({ id: 'chatcmpl-gc', object: 'chat.completion.chunk', created: 1, model: b.model, choices: [], usage })}\n\n`, 'data: [DONE]\n\n'];
  if (call) {
    return sse([chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_gc1', type: 'function', function: { name: TOOL, arguments: '' } }] }, null),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, null), chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }, null),
      chunk({}, 'tool_calls'), ...tail]);
  }
  return sse([chunk({ role: 'assistant', content: '' }, null), chunk({ content: text }, null), chunk({}, 'stop'), ...tail]);
};

/** Gemini: the same in Gemini's protocol (a whole function call with a thought signature). */
const geminiWeather: MockHandler = (r) => {
  const m = /\/models\/([^/:]+):(generateContent|streamGenerateContent)/.exec(r.url);
  if (!m) return undefined;
  const b = body(r);
  const result = b.contents.at(-1).parts.find((p: any) => p.functionResponse)?.functionResponse;
  const offered = (b.tools ?? []).some((t: any) => (t.functionDeclarations ?? []).some((f: any) => f.name === TOOL)) && asksWeather(b.contents);
  const parts = wantsComplexity(b.generationConfig?.responseJsonSchema ?? b.generationConfig?.responseSchema) ? [{ text: CLASSIFIED }]
    : result ? [{ text: `Gemini says: ${JSON.stringify(result.response)}` }]
    : offered ? [{ functionCall: { name: TOOL, args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' }]
    : [{ text: 'Hello from Gemini.' }];
  const resp = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 7, totalTokenCount: 47 }, modelVersion: m[1], responseId: 'resp-gc' };
  return m[2] === 'generateContent' ? json(resp) : sse([`data: ${JSON.stringify(resp)}\r\n\r\n`]);
};

const CASES = [
  { provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', upstream: 'claude-sonnet-4-5', hello: 'Hello from Claude.', says: 'Claude says:' },
  { provider: 'openai', model: 'openai/gpt-5.4', upstream: 'gpt-5.4', hello: 'Hello from GPT.', says: 'GPT says:' },
] as const;

describe.each(CASES)('gemini-cli → $provider, through the root Gemini door', ({ provider, model, upstream, hello, says }) => {
  it('says hello: gemini-cli\'s own request is accepted as it is', async () => {
    const before = gw.mocks[provider].requests.length;
    const geminiBefore = gw.mocks.gemini.requests.length;
    const run = await runGeminiCli({ url: gw.url, key: gw.key, model, prompt: 'Say hello.' });
    expect(run.stdout, run.stderr).toContain(hello);
    expect(run.code).toBe(0);
    expect(gw.mocks.gemini.requests.length).toBe(geminiBefore); // with a model given, nothing of it goes to Gemini
    const sent = gw.mocks[provider].requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    for (const q of sent) {
      expect(JSON.parse(q.body.toString()).model).toBe(upstream);
      expect(q.body.toString() + JSON.stringify(q.headers)).not.toContain(gw.key);
    }
  }, 120_000);

  it('runs an MCP tool the model calls, and the model gets its result', async () => {
    const before = gw.mocks[provider].requests.length;
    const run = await runGeminiCli({ url: gw.url, key: gw.key, model, prompt: 'What is the weather in Paris? Use the weather tool.', mcp: true });
    expect(run.stdout, run.stderr).toContain(says);
    expect(run.stdout).toMatch(MCP_RESULT);
    expect(run.code).toBe(0);
    const sent = gw.mocks[provider].requests.slice(before).map((r) => r.body.toString());
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(MCP_RESULT.test(sent.at(-1)!.replace(/\\u00b0/g, '°'))).toBe(true); // the tool's output went back to the model
    if (provider === 'anthropic') expect(sent.at(-1)).toContain('EqCLAUDESIG'); // and Claude's thinking signature with it
  }, 180_000);

  it('serves gemini-cli\'s model router: its JSON-mode classifier call, pointed at this model, gets JSON back', async () => {
    // No model: gemini-cli's "auto" asks its classifier (an alias users can point at any model) how
    // hard the prompt is, in JSON mode with a schema, then calls the Gemini model it picked.
    const before = gw.mocks[provider].requests.length;
    const run = await runGeminiCli({ url: gw.url, key: gw.key, prompt: 'Say hello.', settings: { modelConfigs: { customAliases: { classifier: { extends: 'base', modelConfig: { model } } } } } });
    expect(run.stdout, run.stderr).toContain('Hello from Gemini.');
    expect(run.code).toBe(0);
    expect(run.stderr).not.toMatch(/Classifier|invalid content/i); // the router took the answer
    const sent = gw.mocks[provider].requests.slice(before).map(body);
    expect(sent).toHaveLength(1);
    const schema = provider === 'anthropic' ? sent[0]!.output_config?.format?.schema : sent[0]!.response_format?.json_schema?.schema;
    expect(wantsComplexity(schema)).toBe(true); // asked for structured output on the target
  }, 120_000);
});

describe('gemini-cli → Gemini (fast path)', () => {
  const model = 'gemini-2.5-pro';

  it('with no model: its router\'s JSON-mode classifier call and the model it picks both reach Gemini', async () => {
    const before = gw.mocks.gemini.requests.length;
    const run = await runGeminiCli({ url: gw.url, key: gw.key, prompt: 'Say hello.' });
    expect(run.stdout, run.stderr).toContain('Hello from Gemini.');
    expect(run.code).toBe(0);
    expect(run.stderr).not.toMatch(/Classifier|invalid content/i);
    const sent = gw.mocks.gemini.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.url).toMatch(/^\/v1beta\/models\/gemini-[\w.-]+:generateContent$/);
    expect(body(sent[0]!).generationConfig.responseMimeType).toBe('application/json');
    expect(sent[1]!.url).toMatch(/^\/v1beta\/models\/gemini-[\w.-]+:streamGenerateContent\?alt=sse$/);
  }, 120_000);

  it('says hello through Gemini\'s own streamGenerateContent, the body as gemini-cli sent it', async () => {
    const before = gw.mocks.gemini.requests.length;
    const run = await runGeminiCli({ url: gw.url, key: gw.key, model, prompt: 'Say hello.' });
    expect(run.stdout, run.stderr).toContain('Hello from Gemini.');
    expect(run.code).toBe(0);
    const sent = gw.mocks.gemini.requests.slice(before);
    expect(sent.map((q) => `${q.method} ${q.url}`)).toEqual([`POST /v1beta/models/${model}:streamGenerateContent?alt=sse`]);
    expect(sent[0]!.headers['x-goog-api-key']).toBe(gw.mocks.gemini.key); // the provider key, never the proxy key
    const b = body(sent[0]!);
    expect(b.systemInstruction.parts[0].text).toMatch(/CLI agent/);
    expect(b.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 8192 });
    expect(b.tools[0].functionDeclarations.length).toBeGreaterThan(3);
  }, 120_000);

  it('runs the MCP tool, the thought signature going back untouched', async () => {
    const before = gw.mocks.gemini.requests.length;
    const run = await runGeminiCli({ url: gw.url, key: gw.key, model, prompt: 'What is the weather in Paris? Use the weather tool.', mcp: true });
    expect(run.stdout, run.stderr).toMatch(MCP_RESULT);
    expect(run.stdout).toContain('Gemini says:');
    expect(run.code).toBe(0);
    const sent = gw.mocks.gemini.requests.slice(before).map((r) => r.body.toString());
    expect(sent.at(-1)).toContain('c2lnbmF0dXJl');
  }, 180_000);
});
