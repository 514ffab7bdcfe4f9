// GET /metrics of a daemon in-process against mock providers: who may read it, routing's figures
// (retries, key switches, fallbacks, breaker openings), the streams gauge while a stream runs,
// metrics off meaning nothing recorded, no span and no trace context made without an OTLP
// endpoint, the push over OTLP, and the names against the pinned semantic conventions package.
import Anthropic from '@anthropic-ai/sdk';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING, type RoutingSettings } from '../../src/daemon/routing/settings.js';
import { ATTR, METRIC, SEMCONV_VERSION } from '../../src/daemon/telemetry/semconv.js';
import { TELEMETRY_DEFAULTS, type TelemetrySettings } from '../../src/daemon/telemetry/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { defaultReply, type MockReply } from '../helpers/mock-provider.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let gw: TestGateway | undefined;
let otlp: OtlpReceiver | undefined;
afterEach(async () => { await gw?.close(); await otlp?.close(); gw = undefined; otlp = undefined; });

const routing = (over: Partial<RoutingSettings> = {}): RoutingSettings => ({ ...DEFAULT_ROUTING, backoff: { baseMs: 10, maxMs: 20 }, ...over });
const overloaded: MockReply = { status: 529, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };
const ask = (g: TestGateway, model = 'claude-opus-5') => new Anthropic({ baseURL: g.url, apiKey: g.key, maxRetries: 0 }).messages.create({ model, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });

/** The samples of /metrics as `name{labels}` → value. */
async function scrape(g: TestGateway): Promise<Map<string, number>> {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('who may read /metrics', () => {
  it('on loopback anyone on the machine; beyond it only with the admin token', async () => {
    gw = await startTestGateway();
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(200);
    await gw.close();
    // Beyond loopback (behind a TLS-terminating proxy, as a shared box serves): an admin credential.
    gw = await startTestGateway({ host: '0.0.0.0', behindProxy: ['192.0.2.1'] });
    const url = `http://127.0.0.1:${gw.daemon.port}/metrics`;
    const refused = await fetch(url);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/admin credential/);
    const allowed = await fetch(url, { headers: { authorization: `Bearer ${gw.daemon.adminToken}` } });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('# TYPE gateway_requests_total counter');
  });
});

describe('routing\'s figures', () => {
  it('two 529s then an answer: two retries, three calls to the provider, the first two with error.type 529', async () => {
    gw = await startTestGateway({ settings: { routing: routing() } });
    let n = 0;
    gw.mocks.anthropic.setHandler((r, p) => (++n <= 2 ? overloaded : defaultReply(p, r)));
    await ask(gw);
    const m = await scrape(gw);
    expect(m.get('gateway_retries_total{gateway_provider="anthropic",gateway_model="claude-opus-5"}')).toBe(2);
    const calls = 'gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-opus-5"';
    expect(m.get(`${calls},error_type="529"}`)).toBe(2);
    expect(m.get(`${calls},gen_ai_response_model="claude-opus-5"}`)).toBe(1);
    expect(m.get('gen_ai_server_request_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-opus-5",gen_ai_response_model="claude-opus-5"}')).toBe(1);
  });

  it('retries run out: each of the three calls counts with error.type 529, the request with the gateway\'s error kind', async () => {
    gw = await startTestGateway({ settings: { routing: routing() } });
    gw.mocks.anthropic.setHandler(() => overloaded);
    await expect(ask(gw)).rejects.toBeInstanceOf(Anthropic.APIError);
    const m = await scrape(gw);
    expect(m.get('gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-opus-5",error_type="529"}')).toBe(3);
    expect(m.get('gen_ai_server_request_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-opus-5",error_type="overloaded"}')).toBe(1);
    expect(m.get('gateway_requests_total{gateway_door="messages",gateway_provider="anthropic",gateway_model="claude-opus-5",http_response_status_code="529"}')).toBe(1);
  });

  it('a fallback from Anthropic to OpenAI, and the breaker opening on the failing model', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 0, breaker: { failures: 2, windowMs: 60_000, cooldownMs: 60_000 }, routes: { 'claude-opus-5': ['claude-opus-5', 'openai/gpt-5.4'] } }) } });
    gw.mocks.anthropic.setHandler(() => overloaded);
    await ask(gw);
    await ask(gw);
    // The third request skips the resting model: its first call is already the fallback.
    await ask(gw);
    expect(gw.mocks.anthropic.requests).toHaveLength(2);
    const m = await scrape(gw);
    expect(m.get('gateway_fallbacks_total{gateway_fallback_from="anthropic",gateway_fallback_to="openai"}')).toBe(3);
    expect(m.get('gateway_breaker_openings_total{gateway_provider="anthropic",gateway_model="claude-opus-5"}')).toBe(1);
    expect(m.get('gateway_requests_total{gateway_door="messages",gateway_provider="openai",gateway_model="gpt-5.4",http_response_status_code="200"}')).toBe(3);
  });

  it('a refused key of a pool hands the request to the next key: one key switch', async () => {
    gw = await startTestGateway({ providerKeys: { anthropic: ['sk-ant-bad-000000000000', 'real-anthropic-key-0123456789'] } });
    await ask(gw);
    const m = await scrape(gw);
    expect(m.get('gateway_key_switches_total{gateway_provider="anthropic"}')).toBe(1);
    expect([...m.keys()].join('\n')).not.toContain('sk-ant-bad');
  });

  it('a provider that cannot be reached is an upstream connection error', async () => {
    gw = await startTestGateway({ settings: { routing: routing({ retries: 1 }) } });
    await gw.mocks.anthropic.close();
    await expect(ask(gw)).rejects.toBeInstanceOf(Anthropic.APIError);
    const m = await scrape(gw);
    expect(m.get('gateway_upstream_errors_total{gateway_provider="anthropic",error_type="connect-error"}')).toBe(2);
  });
});

describe('limit refusals', () => {
  it('a request refused by its key\'s limit counts by the limit that refused it', async () => {
    gw = await startTestGateway();
    const { key } = gw.keys.create({ name: 'capped', limits: { rpm: 1, budget: { usd: 0.000001, period: 'day' } } });
    const { key: paced } = gw.keys.create({ name: 'paced', limits: { rpm: 1 } });
    await gw.daemon.reload();
    const send = (k: string) => new Anthropic({ baseURL: gw!.url, apiKey: k, maxRetries: 0 }).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    await send(key); // over its budget
    await send(paced);
    await send(paced); // over its rpm
    await send(paced);
    const m = await scrape(gw);
    expect(m.get('gateway_limit_refusals_total{gateway_limit_kind="budget"}')).toBe(1);
    expect(m.get('gateway_limit_refusals_total{gateway_limit_kind="rpm"}')).toBe(2);
    expect(m.get('gateway_limit_refusals_total{gateway_limit_kind="tpm"}') ?? 0).toBe(0);
  });
});

describe('streams in flight', () => {
  it('a stream counts while it runs and not after', async () => {
    gw = await startTestGateway();
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    gw.mocks.anthropic.setHandler((r, p) => {
      const reply = defaultReply(p, r);
      return { ...reply, beforeChunk: async (i: number) => { if (i === 2) await held; } };
    });
    const stream = new Anthropic({ baseURL: gw.url, apiKey: gw.key, maxRetries: 0 }).messages.stream({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
    await new Promise<void>((r) => stream.on('streamEvent', () => r()));
    expect((await scrape(gw)).get('gateway_streams_active{gateway_door="messages",gateway_provider="anthropic"}')).toBe(1);
    release();
    await stream.finalMessage();
    expect((await scrape(gw)).get('gateway_streams_active{gateway_door="messages",gateway_provider="anthropic"}')).toBe(0);
  });
});

describe('off means off', () => {
  it('telemetry.metrics false: no /metrics, and nothing listens on the bus', async () => {
    gw = await startTestGateway({ telemetry: { ...TELEMETRY_DEFAULTS, metrics: false } });
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
    expect(gw.daemon.ctx.bus.size).toBe(0);
  });

  it('without an OTLP endpoint no span is made: no trace context reaches a provider, translated or not', async () => {
    gw = await startTestGateway();
    expect(gw.daemon.ctx.startSpan).toBeUndefined();
    await ask(gw);
    await ask(gw, 'openai/gpt-5.4');
    expect(gw.mocks.anthropic.requests[0]!.headers.traceparent).toBeUndefined();
    expect(gw.mocks.openai.requests[0]!.headers.traceparent).toBeUndefined();
  });
});

describe('the metrics pushed over OTLP', () => {
  it('carry the same series under the OpenTelemetry names and attributes', async () => {
    otlp = await startOtlpReceiver();
    const telemetry: TelemetrySettings = { ...TELEMETRY_DEFAULTS, otlp: { endpoint: otlp.url, protocol: 'http/protobuf', metrics: true, metricsIntervalMs: 1000, batchDelayMs: 60_000 } };
    gw = await startTestGateway({ telemetry });
    const msg = await ask(gw);
    await otlp.until((r) => r.exports.some((e) => e.path.endsWith('/v1/metrics') && JSON.stringify(e.decoded).includes('gen_ai.client.token.usage')));
    const last = [...otlp.exports].reverse().find((e) => e.path.endsWith('/v1/metrics'))!;
    type Point = { attributes: Array<{ key: string; value: { stringValue?: string } }>; sum?: number; count?: string; asDouble?: number };
    type Metric = { name: string; unit?: string; histogram?: { dataPoints: Point[]; aggregationTemporality: string }; sum?: { dataPoints: Point[]; isMonotonic: boolean } };
    const rm = (last.decoded.resourceMetrics as Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeMetrics: Array<{ scope: { name: string }; metrics: Metric[] }> }>)[0]!;
    expect(rm.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue).toBe('model-gateway');
    const metrics = rm.scopeMetrics.flatMap((s) => s.metrics);
    const usage = metrics.find((x) => x.name === 'gen_ai.client.token.usage')!;
    expect(usage.unit).toBe('{token}');
    expect(usage.histogram!.aggregationTemporality).toBe('AGGREGATION_TEMPORALITY_CUMULATIVE');
    const input = usage.histogram!.dataPoints.find((p) => p.attributes.some((a) => a.key === 'gen_ai.token.type' && a.value.stringValue === 'input'))!;
    expect(input.sum).toBe(msg.usage.input_tokens);
    expect(Object.fromEntries(input.attributes.map((a) => [a.key, a.value.stringValue]))).toEqual({
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'claude-opus-5', 'gen_ai.response.model': 'claude-opus-5', 'gen_ai.token.type': 'input',
    });
    const requests = metrics.find((x) => x.name === 'gateway.requests')!;
    expect(requests.sum!.isMonotonic).toBe(true);
    expect(requests.sum!.dataPoints.map((p) => p.asDouble)).toEqual([1]);
    expect(metrics.find((x) => x.name === 'process.memory.usage')).toBeDefined();
  });
});

describe('the pinned conventions', () => {
  it('every GenAI name used is the one @opentelemetry/semantic-conventions defines', () => {
    expect(SEMCONV_VERSION).toBe('1.41.1');
    const defined = new Set<unknown>(Object.values(semconv as Record<string, unknown>));
    for (const name of [...Object.values(ATTR), ...Object.values(METRIC)]) expect(defined.has(name), name).toBe(true);
  });
});

describe('bounded series', () => {
  it('past the cap, every new label set lands in the one series whose labels are all other', async () => {
    const { Family, MAX_SERIES } = await import('../../src/daemon/telemetry/store.js');
    const family = new Family({ name: 'x', prom: 'x', kind: 'counter', unit: '1', help: 'x', labels: ['a', 'b'] } as never);
    for (let i = 0; i < MAX_SERIES; i++) family.get([`m${i}`, 'v']).sum++;
    family.get(['new-1', 'v']).sum++;
    family.get(['new-2', 'w']).sum++;
    expect(family.series.size).toBe(MAX_SERIES + 1);
    expect(family.get(['new-3', 'v'])).toMatchObject({ values: ['other', 'other'], sum: 2 });
  });
});
