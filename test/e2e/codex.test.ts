// Codex CLI itself (from npm, `codex exec`, offline) against the gateway's Responses door: on a
// Claude and a Gemini model served by mock providers (translated), with a tool round trip through
// a real MCP server, and on an OpenAI model through the fast path. Codex sends what it always
// sends (store: false, encrypted reasoning, namespace tools, web_search, prompt_cache_key,
// client_metadata…); none of it may become a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOCK_TEXT } from '../helpers/mock-provider.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { runCodex } from '../helpers/codex.js';
import { weatherProviders } from '../helpers/weather-providers.js';

const TOOL = 'mcp__weather__get_weather';
const MCP_RESULT = /Weather in Paris: 18°C, sunny \(MCP\)/;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
  const weather = weatherProviders(TOOL);
  gw.mocks.anthropic.setHandler(weather.anthropic);
  gw.mocks.gemini.setHandler(weather.gemini);
});
afterAll(async () => { await gw?.close(); });

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
