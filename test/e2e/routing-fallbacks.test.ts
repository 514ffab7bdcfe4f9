// The real coding tools (Claude Code, Codex CLI, gemini-cli: from npm, headless, offline), one
// fallback each, against a real daemon process (`gateway start`) whose route is set the way a user
// sets it, with `gateway models fallback <model> <target>` while it runs. The model's provider
// fails (Anthropic's 529 overloaded_error, OpenAI's 503, Gemini's 429 asking for a wait longer than
// the cap); the tool prints the fallback's answer as if nothing happened. The mocks' records show
// the attempts in order, and a recording hop in front of the gateway keeps the x-gateway-route each
// answer carried to the tool.
import { afterEach, describe, expect, it } from 'vitest';
import { runClaudeCode } from '../helpers/claude-code.js';
import { runCodex } from '../helpers/codex.js';
import { runGeminiCli } from '../helpers/gemini-cli.js';
import type { MockReply, Recorded } from '../helpers/mock-provider.js';
import { startRecordingHop, type RecordingHop } from '../helpers/recording-hop.js';
import { body, weatherProviders } from '../helpers/weather-providers.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';

let gw: GatewayProcess | undefined;
let hop: RecordingHop | undefined;
afterEach(async () => {
  await hop?.close();
  await gw?.close();
  hop = undefined;
  gw = undefined;
});

const json = (status: number, v: unknown, headers: Record<string, string> = {}): MockReply => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(v) });
const weather = weatherProviders('get_weather');

/** A running gateway with a proxy key, the fallback set through the CLI, and a hop in front of it. */
async function gatewayWithFallback(model: string, target: string): Promise<{ gw: GatewayProcess; hop: RecordingHop; key: string }> {
  gw = await startGatewayProcess();
  const key = (await gw.cli(['keys', 'create', '--name', 'tool'])).stdout.trim();
  const set = await gw.cli(['models', 'fallback', model, target]);
  expect(set.code, set.stderr).toBe(0);
  expect(set.stderr).toContain('The running gateway reloaded.');
  hop = await startRecordingHop(gw.url);
  return { gw, hop, key };
}

/** The x-gateway-route of the hop's first answer to a POST whose path starts with `path`. */
const firstRoute = (h: RecordingHop, path: string) => {
  const i = h.requests.findIndex((r) => r.method === 'POST' && r.url.startsWith(path));
  return i === -1 ? undefined : h.answers[i]?.headers['x-gateway-route'];
};

/** Both mocks' requests in the order they arrived (the mocks' own clocks), each named by its provider. */
const inOrder = (records: Record<string, Recorded[]>) =>
  Object.entries(records).flatMap(([p, rs]) => rs.map((r) => ({ p, r }))).sort((a, b) => a.r.at - b.r.at).map(({ p, r }) => ({ provider: p, url: r.url, model: body(r).model as unknown }));

describe('a coding tool whose model\'s provider fails gets the fallback\'s answer', () => {
  it('Claude Code on claude-sonnet-4-5, Anthropic overloaded (529) every time, fallback openai/gpt-5.4', async () => {
    const { gw, hop, key } = await gatewayWithFallback('claude-sonnet-4-5', 'openai/gpt-5.4');
    gw.mocks.anthropic.setHandler((r) => (r.url.startsWith('/v1/messages') ? json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) : undefined));
    gw.mocks.openai.setHandler(weather.openai);
    const run = await runClaudeCode({ url: hop.url, key, model: 'claude-sonnet-4-5', prompt: 'Say hello.' });
    expect(run.stdout, run.stderr).toContain('Hello from GPT.');
    expect(run.code).toBe(0);
    // Its first request: three attempts on Anthropic (the first and its two retries), then GPT.
    expect(inOrder({ anthropic: gw.mocks.anthropic.requests, openai: gw.mocks.openai.requests }).slice(0, 4)).toEqual([
      { provider: 'anthropic', url: '/v1/messages?beta=true', model: 'claude-sonnet-4-5' },
      { provider: 'anthropic', url: '/v1/messages?beta=true', model: 'claude-sonnet-4-5' },
      { provider: 'anthropic', url: '/v1/messages?beta=true', model: 'claude-sonnet-4-5' },
      { provider: 'openai', url: '/v1/chat/completions', model: 'gpt-5.4' },
    ]);
    expect(firstRoute(hop, '/v1/messages')).toBe('anthropic/claude-sonnet-4-5=529, anthropic/claude-sonnet-4-5=529, anthropic/claude-sonnet-4-5=529, openai/gpt-5.4=200');
  }, 120_000);

  it('Codex CLI on gpt-5.4, OpenAI unavailable (503) every time, fallback anthropic/claude-sonnet-4-5', async () => {
    const { gw, hop, key } = await gatewayWithFallback('gpt-5.4', 'anthropic/claude-sonnet-4-5');
    gw.mocks.openai.setHandler((r) => (r.url.startsWith('/v1/responses') ? json(503, { error: { message: 'The server is overloaded', type: 'server_error', param: null, code: null } }) : undefined));
    gw.mocks.anthropic.setHandler(weather.anthropic);
    const run = await runCodex({ url: hop.url, key, model: 'gpt-5.4', prompt: 'Say hello.' });
    expect(run.stdout, run.stderr).toContain('Hello from Claude.');
    expect(run.code).toBe(0);
    expect(inOrder({ openai: gw.mocks.openai.requests, anthropic: gw.mocks.anthropic.requests }).slice(0, 4)).toEqual([
      { provider: 'openai', url: '/v1/responses', model: 'gpt-5.4' },
      { provider: 'openai', url: '/v1/responses', model: 'gpt-5.4' },
      { provider: 'openai', url: '/v1/responses', model: 'gpt-5.4' },
      { provider: 'anthropic', url: '/v1/messages', model: 'claude-sonnet-4-5' },
    ]);
    expect(firstRoute(hop, '/v1/responses')).toBe('openai/gpt-5.4=503, openai/gpt-5.4=503, openai/gpt-5.4=503, anthropic/claude-sonnet-4-5=200');
  }, 120_000);

  it('gemini-cli on gemini-2.5-pro, Gemini out of quota (429, RetryInfo 120 s: above the cap), fallback openai/gpt-5.4 at once', async () => {
    const { gw, hop, key } = await gatewayWithFallback('gemini-2.5-pro', 'openai/gpt-5.4');
    gw.mocks.gemini.setHandler((r) => (/:(stream)?generateContent/i.test(r.url) ? json(429, {
      error: {
        code: 429, status: 'RESOURCE_EXHAUSTED', message: 'You exceeded your current quota, please check your plan and billing details.',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '120s' }],
      },
    }) : undefined));
    gw.mocks.openai.setHandler(weather.openai);
    const run = await runGeminiCli({ url: gw.url, baseUrl: hop.url, key, model: 'gemini-2.5-pro', prompt: 'Say hello.' });
    expect(run.stdout, run.stderr).toContain('Hello from GPT.');
    expect(run.code).toBe(0);
    // One attempt on Gemini, not slept through nor retried: GPT right after it.
    expect(inOrder({ gemini: gw.mocks.gemini.requests, openai: gw.mocks.openai.requests }).slice(0, 2)).toEqual([
      { provider: 'gemini', url: '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', model: undefined },
      { provider: 'openai', url: '/v1/chat/completions', model: 'gpt-5.4' },
    ]);
    expect(firstRoute(hop, '/v1beta/models/gemini-2.5-pro:streamGenerateContent')).toBe('gemini/gemini-2.5-pro=429, openai/gpt-5.4=200');
  }, 120_000);
});
