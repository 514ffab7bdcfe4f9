// A real Prometheus scrapes a real daemon (`gateway start`, against loopback mock providers) every
// second while the official SDKs make a mixed run on every door; its HTTP API then holds the counts,
// token sums and cost the mocks answered and the usage history recorded, under the GenAI
// conventions' names, with bounded labels and no key material anywhere.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultReply, type MockHandler } from '../helpers/mock-provider.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';
import { PROMETHEUS, startPrometheus, type Prometheus } from './prometheus.js';

let gw: GatewayProcess;
let prom: Prometheus;
let key: string;

interface Totals { requests: number; inputTokens: number; outputTokens: number; cachedTokens: number; cost: number | null }
const PROMPT = [{ role: 'user' as const, content: 'hi' }];
/** A prompt the Anthropic mock answers as read mostly from its cache. */
const CACHED = 'a long system prompt, cached';
const cachedAnswer: MockHandler = (r, provider) => {
  if (!r.body.toString().includes(CACHED)) return undefined;
  const answer = JSON.parse(defaultReply(provider, r).body as string) as { usage: Record<string, number> };
  answer.usage = { input_tokens: 4, cache_read_input_tokens: 30, cache_creation_input_tokens: 0, output_tokens: 6 };
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) };
};

/** How many requests each door gets in one run (the run is made twice). */
const DOORS = { chat: 6, messages: 3, responses: 1, gemini: 2, native: 1 };
const RUNS = 2;

async function mixedRun(): Promise<void> {
  const chat = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  const messages = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
  const gemini = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  const native = new OpenAI({ baseURL: `${gw.url}/openai/v1`, apiKey: key, maxRetries: 0 });

  await chat.chat.completions.create({ model: 'gpt-5.4', messages: PROMPT });
  for await (const _ of await chat.chat.completions.create({ model: 'gpt-5.4', messages: PROMPT, stream: true, stream_options: { include_usage: true } })) { /* drain */ }
  await chat.chat.completions.create({ model: 'anthropic/claude-opus-5', messages: PROMPT });
  // A model the gateway does not know (the mock answers it): counted, but never named.
  await chat.chat.completions.create({ model: 'openai/gpt-unlisted-9', messages: PROMPT });
  await expect(chat.chat.completions.create({ model: 'mystery-model', messages: PROMPT })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  await expect(new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-proxy-not-a-real-key', maxRetries: 0 }).chat.completions.create({ model: 'gpt-5.4', messages: PROMPT }))
    .rejects.toBeInstanceOf(OpenAI.AuthenticationError);

  await messages.messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: CACHED }] });
  await messages.messages.stream({ model: 'claude-opus-5', max_tokens: 32, messages: PROMPT }).finalMessage();
  await messages.messages.countTokens({ model: 'claude-opus-5', messages: PROMPT });

  await chat.responses.create({ model: 'gpt-5.4', input: 'hi' });

  await gemini.models.generateContent({ model: 'gemini-3.5-flash', contents: 'hi' });
  for await (const _ of await gemini.models.generateContentStream({ model: 'gemini-3.5-flash', contents: 'hi' })) { /* drain */ }

  await native.chat.completions.create({ model: 'gpt-5.4', messages: PROMPT });
}

beforeAll(async () => {
  gw = await startGatewayProcess();
  key = (await gw.cli(['keys', 'create', '--name', 'team-a'])).stdout.trim();
  gw.mocks.anthropic.setHandler(cachedAnswer);
  prom = await startPrometheus(new URL(gw.url).host);
  await prom.until('up{job="gateway"}', 1);
  // Twice, with scrapes between: every series then has samples before and after an increase, as rates need.
  await mixedRun();
  await prom.until('sum(gateway_requests_total)', 13);
  await prom.until('min(count_over_time(gateway_requests_total[1m]))', (n) => n >= 2);
  await mixedRun();
  await prom.until('sum(gateway_requests_total)', 13 * RUNS);
}, 90_000);
afterAll(async () => { await prom?.close(); await gw?.close(); });

const upstreamCalls = () => Object.values(gw.mocks).reduce((n, m) => n + m.requests.length, 0);

async function usageTotals(): Promise<Totals> {
  const r = await gw.cli(['usage', '--since', '1d', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { totals: Totals }).totals;
}

describe('Prometheus scraping the daemon', () => {
  it('has the requests by door, with the refusals under provider "none"', async () => {
    const byDoor = await prom.query('sum by (gateway_door) (gateway_requests_total)');
    expect(Object.fromEntries(byDoor.map((s) => [s.metric.gateway_door, Number(s.value[1])]))).toEqual(Object.fromEntries(Object.entries(DOORS).map(([d, n]) => [d, n * RUNS])));
    const refused = await prom.query('sum by (http_response_status_code) (gateway_requests_total{gateway_provider="none"})');
    expect(Object.fromEntries(refused.map((s) => [s.metric.http_response_status_code, Number(s.value[1])]))).toEqual({ 400: RUNS, 401: RUNS });
  });

  it('counts each provider call the mocks received as one GenAI client operation', async () => {
    expect(upstreamCalls()).toBe(11 * RUNS);
    expect(await prom.value('sum(gen_ai_client_operation_duration_seconds_count)')).toBe(upstreamCalls());
    expect(await prom.value('sum(gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="count_tokens"})')).toBe(RUNS);
    expect(await prom.value('sum(gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="generate_content",gen_ai_provider_name="gcp.gemini"})')).toBe(2 * RUNS);
  });

  it('holds the token sums and the cost the usage history holds', async () => {
    const totals = await usageTotals();
    expect(totals.requests).toBe(11 * RUNS); // the refusals never reached a provider: not in the history
    expect(await prom.value('sum(gateway_requests_total{gateway_provider!="none"})')).toBe(totals.requests);
    expect(await prom.value('sum(gateway_tokens_total{gen_ai_token_type="input"})')).toBe(totals.inputTokens);
    expect(await prom.value('sum(gateway_tokens_total{gen_ai_token_type="output"})')).toBe(totals.outputTokens);
    expect(totals.cachedTokens).toBe(30 * RUNS);
    expect(await prom.value('sum(gateway_tokens_total{gen_ai_token_type="cache_read"})')).toBe(totals.cachedTokens);
    // The conventions' histogram sums the same tokens (a count's input tokens included).
    expect(await prom.value('sum(gen_ai_client_token_usage_sum{gen_ai_token_type="input"})')).toBe(totals.inputTokens);
    expect(await prom.value('sum(gen_ai_client_token_usage_sum{gen_ai_token_type="output"})')).toBe(totals.outputTokens);
    expect(totals.cost).toBeGreaterThan(0);
    expect(await prom.value('sum(gateway_cost_usd_total)')).toBeCloseTo(totals.cost!, 12);
    const byKey = await prom.query('sum by (gateway_key_name) (gateway_cost_usd_total)');
    expect(byKey.map((s) => s.metric.gateway_key_name)).toEqual([undefined]); // per-key series are off unless configured
  });

  it('names only known models: an unlisted one is "other"', async () => {
    const models = (await prom.query('sum by (gateway_model) (gateway_requests_total)')).map((s) => s.metric.gateway_model).sort();
    expect(models).toEqual(['claude-opus-5', 'gemini-3.5-flash', 'gpt-5.4', 'none', 'other']);
    const series = JSON.stringify(await prom.api('/api/v1/series?match[]={job="gateway"}'));
    expect(series).not.toContain('gpt-unlisted-9');
    expect(series).not.toContain('mystery-model');
  });

  it('answers the README\'s queries', async () => {
    // Requests per second by model, p95 time to first token, cost by key per day, cache hit ratio.
    expect((await prom.query('sum by (gateway_model) (rate(gateway_requests_total[1m]))')).length).toBeGreaterThan(0);
    const p95 = await prom.value('histogram_quantile(0.95, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket[1m])))');
    expect(p95).toBeGreaterThan(0);
    expect(await prom.value('sum by (gateway_key_name) (increase(gateway_cost_usd_total[1d]))')).toBeGreaterThan(0);
    const ratio = await prom.value('(sum(rate(gateway_tokens_total{gen_ai_token_type="cache_read"}[5m])) or vector(0)) / sum(rate(gateway_tokens_total{gen_ai_token_type="input"}[5m]))');
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThan(1);
  });

  it('has the daemon\'s process figures and the streams gauge back at 0', async () => {
    expect(await prom.value('process_resident_memory_bytes{job="gateway"}')).toBeGreaterThan(10_000_000);
    expect(await prom.value('process_cpu_seconds_total{job="gateway"}')).toBeGreaterThan(0);
    expect(await prom.value('nodejs_eventloop_delay_seconds{nodejs_eventloop_delay_percentile="100"}')).toBeGreaterThan(0);
    expect(await prom.value('sum(gateway_streams_active)')).toBe(0);
    expect(await prom.value('sum(gateway_requests_active)')).toBe(0);
  });

  it('holds no key material: not in /metrics, not in any series Prometheus stored', async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const series = JSON.stringify(await prom.api('/api/v1/series?match[]={job="gateway"}'));
    for (const secret of [key, key.slice(-12), gw.mocks.anthropic.key, gw.mocks.openai.key, gw.mocks.gemini.key, gw.adminToken()]) {
      expect(text.includes(secret)).toBe(false);
      expect(series.includes(secret)).toBe(false);
    }
    expect(`${text}${series}`).not.toMatch(/sk-proxy-/);
  });

  it('serves the text format to a plain scraper, and promtool finds it well-formed', async () => {
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const om = await fetch(`${gw.url}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(om.headers.get('content-type')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect((await om.text()).endsWith('# EOF\n')).toBe(true);
    const promtool = PROMETHEUS.replace(/prometheus$/, 'promtool');
    if (!existsSync(promtool)) throw new Error(`${promtool} is missing (Debian's prometheus package ships it)`);
    const out = await new Promise<{ code: number; text: string }>((resolve) => {
      const p = execFile(promtool, ['check', 'metrics'], (err, stdout, stderr) => resolve({ code: err ? (err as { code?: number }).code ?? 1 : 0, text: stdout + stderr }));
      void res.text().then((t) => p.stdin!.end(t));
    });
    expect(out.code, out.text).toBe(0);
    expect(out.text).toBe('');
  });
});
