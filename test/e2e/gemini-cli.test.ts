// gemini-cli itself (from npm, headless `gemini -p`, offline) against the gateway's root Gemini
// door (GOOGLE_GEMINI_BASE_URL = the root, not /gemini): on a Claude and a GPT model served by mock
// providers (translated), and on a Gemini model through the fast path. Each says hello, and each
// runs a tool round trip through a real MCP server: the model asks for the weather tool, gemini-cli
// runs it, and the model repeats what it returned. gemini-cli sends what it always sends (a long
// systemInstruction, a dozen tools with parametersJsonSchema, thinkingConfig, topK…); none of it
// may become a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runGeminiCli } from '../helpers/gemini-cli.js';
import { body, weatherProviders, wantsComplexity } from '../helpers/weather-providers.js';

/** gemini-cli's name for the MCP server's tool: mcp_<server>_<tool>. */
const TOOL = 'mcp_weather_get_weather';
const MCP_RESULT = /Weather in Paris: 18°C, sunny \(MCP\)/;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
  const weather = weatherProviders(TOOL);
  gw.mocks.anthropic.setHandler(weather.anthropic);
  gw.mocks.openai.setHandler(weather.openai);
  gw.mocks.gemini.setHandler(weather.gemini);
});
afterAll(async () => { await gw?.close(); });

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
