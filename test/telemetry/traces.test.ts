// Traces over OTLP/HTTP, decoded by a loopback collector with the OpenTelemetry protocol's own
// definitions: span names and GenAI attributes, a caller's traceparent as the parent, each call to
// a provider a child span whose context the provider receives, a fallback's attempts, content only
// when asked for, a collector that is down changing nothing for clients, and no key in anything
// exported. The official SDKs are the clients; the daemon runs in-process against mock providers.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING } from '../../src/daemon/routing/settings.js';
import { TELEMETRY_DEFAULTS, type TelemetrySettings } from '../../src/daemon/telemetry/index.js';
import { parseTelemetry } from '../../src/daemon/telemetry/settings.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { MOCK_TEXT, type MockReply } from '../helpers/mock-provider.js';
import { closedPort } from '../helpers/ports.js';
import { startGatewayProcess, type GatewayProcess } from '../usage/gateway-process.js';
import { attr, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from './otlp-receiver.js';

let gw: TestGateway | undefined;
let otlp: OtlpReceiver | undefined;
afterEach(async () => { await gw?.close(); await otlp?.close(); gw = undefined; otlp = undefined; });

const PARENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${PARENT_TRACE}-${PARENT_SPAN}-01`;
const PROMPT = 'What is the capital of France? Answer in one word.';

type ExportThread = 'worker' | 'request';

function telemetry(endpoint: string, exportThread: ExportThread, over: Partial<TelemetrySettings> = {}): TelemetrySettings {
  return { ...TELEMETRY_DEFAULTS, ...over, otlp: { endpoint, protocol: 'http/protobuf', metrics: false, metricsIntervalMs: 60_000, batchDelayMs: 50, exportThread } };
}

async function start(exportThread: ExportThread, over: Partial<TelemetrySettings> = {}, routing = DEFAULT_ROUTING): Promise<TestGateway> {
  otlp = await startOtlpReceiver();
  gw = await startTestGateway({ telemetry: telemetry(otlp.url, exportThread, over), settings: { routing } });
  return gw;
}

const anthropic = (g: TestGateway, headers: Record<string, string> = {}) => new Anthropic({ baseURL: g.url, apiKey: g.key, maxRetries: 0, defaultHeaders: headers });
const byName = (spans: OtlpSpan[], name: string) => spans.filter((s) => s.name === name);

// Each behaviour holds wherever the spans are serialized and sent: the worker thread (a daemon with
// more than one CPU) or the request thread (one CPU).
for (const exportThread of ['worker', 'request'] as const) describe(`spans exported from the ${exportThread} thread`, () => {
  describe('a request as a span', () => {
    it('a caller\'s traceparent makes the request span its child; the provider call is a CLIENT child whose context the provider receives', async () => {
      const g = await start(exportThread);
      const msg = await anthropic(g, { traceparent: TRACEPARENT }).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
      expect(msg.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
      await g.daemon.close(1000); // flushes the last batch
      const spans = otlp!.spans();
      const [request] = spans.filter((s) => s.kind === 'SPAN_KIND_SERVER');
      expect(request).toBeDefined();
      expect(request!.name).toBe('chat claude-opus-5');
      expect(request!.traceId).toBe(PARENT_TRACE);
      expect(request!.parentSpanId).toBe(PARENT_SPAN);
      const calls = spans.filter((s) => s.kind === 'SPAN_KIND_CLIENT');
      expect(calls).toHaveLength(1);
      expect(calls[0]!.parentSpanId).toBe(request!.spanId);
      expect(calls[0]!.traceId).toBe(PARENT_TRACE);
      // The provider got the attempt's context, not the caller's.
      expect(g.mocks.anthropic.requests[0]!.headers.traceparent).toBe(`00-${PARENT_TRACE}-${calls[0]!.spanId}-01`);

      expect(attr(request!, 'gen_ai.operation.name')).toBe('chat');
      expect(attr(request!, 'gen_ai.provider.name')).toBe('anthropic');
      expect(attr(request!, 'gen_ai.request.model')).toBe('claude-opus-5');
      expect(attr(request!, 'gen_ai.response.model')).toBe('claude-opus-5');
      expect(attr(request!, 'gen_ai.response.id')).toBe('msg_mock');
      expect(attr(request!, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
      expect(attr(request!, 'gen_ai.usage.input_tokens')).toBe(msg.usage.input_tokens);
      expect(attr(request!, 'gen_ai.usage.output_tokens')).toBe(msg.usage.output_tokens);
      expect(attr(request!, 'gateway.door')).toBe('messages');
      expect(attr(request!, 'gateway.key.name')).toBe('test');
      expect(attr(request!, 'http.response.status_code')).toBe(200);
      // Content is opt-in: none by default.
      expect(request!.attributes.map((a) => a.key).filter((k) => /messages|instructions/.test(k))).toEqual([]);
    });

    it('a translated stream (Chat door to Anthropic) names the alias asked for and reads its finish reason from the stream', async () => {
      otlp = await startOtlpReceiver();
      gw = await startTestGateway({ telemetry: telemetry(otlp.url, exportThread), settings: { aliases: { smart: 'anthropic/claude-opus-5' } } });
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'smart', stream: true, messages: [{ role: 'user', content: PROMPT }] });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      expect(text).toBe(MOCK_TEXT);
      await gw.daemon.close(1000);
      const [request] = otlp.spans().filter((s) => s.kind === 'SPAN_KIND_SERVER');
      expect(request!.name).toBe('chat claude-opus-5');
      expect(attr(request!, 'gateway.model.alias')).toBe('smart');
      expect(attr(request!, 'gateway.door')).toBe('chat');
      expect(attr(request!, 'gen_ai.request.stream')).toBe(true);
      expect(attr(request!, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
      expect(typeof attr(request!, 'gen_ai.response.time_to_first_chunk')).toBe('number');
      // A new trace (no caller context), and the provider still gets the call's context.
      const [call] = otlp.spans().filter((s) => s.kind === 'SPAN_KIND_CLIENT');
      expect(gw.mocks.anthropic.requests[0]!.headers.traceparent).toBe(`00-${request!.traceId}-${call!.spanId}-01`);
    });

    it('the caller\'s tracestate travels on with its trace, through a translated door as through a native one', async () => {
      const g = await start(exportThread);
      const tracestate = 'vendor=abc123,other=x';
      const headers = { authorization: `Bearer ${g.key}`, 'content-type': 'application/json', traceparent: TRACEPARENT, tracestate };
      const body = JSON.stringify({ model: 'gpt-5.4', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] });
      expect((await fetch(`${g.url}/v1/messages`, { method: 'POST', headers, body })).status).toBe(200);
      expect((await fetch(`${g.url}/openai/v1/chat/completions`, { method: 'POST', headers, body })).status).toBe(200);
      const sent = g.mocks.openai.requests;
      expect(sent).toHaveLength(2);
      for (const r of sent) {
        expect(r.headers.traceparent).toMatch(new RegExp(`^00-${PARENT_TRACE}-[0-9a-f]{16}-01$`));
        expect(r.headers.tracestate).toBe(tracestate);
      }
    });

    it('a native request is one span, and its provider call carries its context onward', async () => {
      const g = await start(exportThread);
      const res = await fetch(`${g.url}/openai/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${g.key}`, 'content-type': 'application/json', traceparent: TRACEPARENT },
        body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: PROMPT }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      await g.daemon.close(1000);
      const spans = otlp!.spans();
      expect(spans).toHaveLength(1);
      expect(spans[0]).toMatchObject({ name: 'chat', kind: 'SPAN_KIND_SERVER', traceId: PARENT_TRACE, parentSpanId: PARENT_SPAN });
      expect(attr(spans[0]!, 'gen_ai.response.model')).toBe('gpt-5.4');
      expect(g.mocks.openai.requests[0]!.headers.traceparent).toBe(`00-${PARENT_TRACE}-${spans[0]!.spanId}-01`);
    });
  });

  describe('sampling', () => {
    it('at sampleRatio 0 a request of its own makes no span, while one whose caller sampled it is traced', async () => {
      otlp = await startOtlpReceiver();
      const base = telemetry(otlp.url, exportThread);
      gw = await startTestGateway({ telemetry: { ...base, otlp: { ...base.otlp!, sampleRatio: 0 } } });
      for (let i = 0; i < 5; i++) await anthropic(gw).messages.create({ model: 'claude-opus-5', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] });
      await anthropic(gw, { traceparent: TRACEPARENT }).messages.create({ model: 'claude-opus-5', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] });
      await gw.daemon.close(1000);
      const spans = otlp.spans();
      expect(spans.length).toBeGreaterThan(0);
      expect(spans.every((s) => s.traceId === PARENT_TRACE)).toBe(true);
      // An unsampled request makes no span at all, so the gateway gives its call no context; the sampled one's call carries the caller's trace.
      expect(gw.mocks.anthropic.requests[0]!.headers.traceparent).toBeUndefined();
      expect(gw.mocks.anthropic.requests[5]!.headers.traceparent).toMatch(new RegExp(`^00-${PARENT_TRACE}-[0-9a-f]{16}-01$`));
    });

    it('a sampler that decides alone (OTEL_TRACES_SAMPLER always_off / always_on) does not follow the caller\'s decision', async () => {
      otlp = await startOtlpReceiver();
      const base = telemetry(otlp.url, exportThread);
      gw = await startTestGateway({ telemetry: { ...base, otlp: { ...base.otlp!, sampleRatio: 0, ignoreCaller: true } } });
      await anthropic(gw, { traceparent: TRACEPARENT }).messages.create({ model: 'claude-opus-5', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] });
      await gw.daemon.close(1000);
      expect(otlp.spans()).toEqual([]);
      // Still in the caller's trace, marked not sampled.
      expect(gw.mocks.anthropic.requests[0]!.headers.traceparent).toMatch(new RegExp(`^00-${PARENT_TRACE}-[0-9a-f]{16}-00$`));
      await gw.close();
      await otlp.close();

      otlp = await startOtlpReceiver();
      gw = await startTestGateway({ telemetry: { ...base, otlp: { ...base.otlp!, endpoint: otlp.url, ignoreCaller: true } } });
      await anthropic(gw, { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-00` }).messages.create({ model: 'claude-opus-5', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] });
      await gw.daemon.close(1000);
      const server = otlp.spans().find((sp) => sp.kind === 'SPAN_KIND_SERVER');
      expect(server).toMatchObject({ traceId: PARENT_TRACE, parentSpanId: PARENT_SPAN });
      expect(gw.mocks.anthropic.requests[0]!.headers.traceparent).toMatch(new RegExp(`^00-${PARENT_TRACE}-[0-9a-f]{16}-01$`));
    });

    it('at sampleRatio 0.5 about half the requests are traced, and each traced one\'s call carries its context', async () => {
      otlp = await startOtlpReceiver();
      const base = telemetry(otlp.url, exportThread);
      gw = await startTestGateway({ telemetry: { ...base, otlp: { ...base.otlp!, sampleRatio: 0.5 } } });
      const N = 200;
      for (let i = 0; i < N; i++) {
        const res = await fetch(`${gw.url}/openai/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: PROMPT }] }),
        });
        await res.text();
      }
      await gw.daemon.close(1000);
      const traced = otlp.spans().filter((s) => s.kind === 'SPAN_KIND_SERVER');
      // Binomial(200, 0.5): 100 ± 7; outside 65..135 once in a million runs.
      expect(traced.length).toBeGreaterThanOrEqual(65);
      expect(traced.length).toBeLessThanOrEqual(135);
      const carried = gw.mocks.openai.requests.map((r) => r.headers.traceparent).filter((t) => t !== undefined);
      expect(carried.sort()).toEqual(traced.map((s) => `00-${s.traceId}-${s.spanId}-01`).sort());
    });
  });

  describe('a fallback\'s attempts', () => {
    it('Anthropic answers 529, OpenAI serves: two CLIENT spans under the request, the first with error.type 529', async () => {
      const overloaded: MockReply = { status: 529, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };
      const g = await start(exportThread, {}, { ...DEFAULT_ROUTING, retries: 0, routes: { 'claude-opus-5': ['claude-opus-5', 'openai/gpt-5.4'] } });
      g.mocks.anthropic.setHandler(() => overloaded);
      const { response } = await anthropic(g).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] }).withResponse();
      expect(response.headers.get('x-gateway-route')).toBe('anthropic/claude-opus-5=529, openai/gpt-5.4=200');
      await g.daemon.close(1000);
      const spans = otlp!.spans();
      const [request] = spans.filter((s) => s.kind === 'SPAN_KIND_SERVER');
      const calls = spans.filter((s) => s.kind === 'SPAN_KIND_CLIENT');
      expect(calls.map((c) => [c.name, attr(c, 'gen_ai.provider.name'), attr(c, 'error.type') ?? null, c.parentSpanId])).toEqual([
        ['chat claude-opus-5', 'anthropic', '529', request!.spanId],
        ['chat gpt-5.4', 'openai', null, request!.spanId],
      ]);
      expect(calls[0]!.status?.code).toBe('STATUS_CODE_ERROR');
      expect(attr(request!, 'gen_ai.provider.name')).toBe('openai');
      expect(attr(request!, 'gateway.route')).toBe('anthropic/claude-opus-5=529, openai/gpt-5.4=200');
      // Each provider received its own attempt's context.
      expect(g.mocks.anthropic.requests[0]!.headers.traceparent).toContain(calls[0]!.spanId);
      expect(g.mocks.openai.requests[0]!.headers.traceparent).toContain(calls[1]!.spanId);
    });
  });

  describe('content', () => {
    it('with captureContent the prompt, the system instructions and the answer are in the conventions\' opt-in attributes', async () => {
      const g = await start(exportThread, { captureContent: true });
      await anthropic(g).messages.create({ model: 'claude-opus-5', max_tokens: 32, system: 'Be brief.', messages: [{ role: 'user', content: PROMPT }] });
      await g.daemon.close(1000);
      const [request] = otlp!.spans().filter((s) => s.kind === 'SPAN_KIND_SERVER');
      expect(JSON.parse(attr(request!, 'gen_ai.input.messages') as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: PROMPT }] }]);
      expect(JSON.parse(attr(request!, 'gen_ai.system_instructions') as string)).toEqual([{ type: 'text', content: 'Be brief.' }]);
      expect(JSON.parse(attr(request!, 'gen_ai.output.messages') as string)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: MOCK_TEXT }], finish_reason: 'stop' }]);
    });

    it('a translated whole answer (Messages door to OpenAI): the id the client was shown, its finish reason, and with captureContent its prompt and answer', async () => {
      const g = await start(exportThread, { captureContent: true });
      const msg = await anthropic(g).messages.create({ model: 'openai/gpt-5.4', max_tokens: 32, system: 'Be brief.', messages: [{ role: 'user', content: PROMPT }] });
      expect(msg.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
      await g.daemon.close(1000);
      const [request] = otlp!.spans().filter((s) => s.kind === 'SPAN_KIND_SERVER');
      expect(request!.name).toBe('chat gpt-5.4');
      expect(attr(request!, 'gen_ai.response.id')).toBe(msg.id);
      expect(attr(request!, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
      expect(JSON.parse(attr(request!, 'gen_ai.input.messages') as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: PROMPT }] }]);
      expect(JSON.parse(attr(request!, 'gen_ai.system_instructions') as string)).toEqual([{ type: 'text', content: 'Be brief.' }]);
      expect(JSON.parse(attr(request!, 'gen_ai.output.messages') as string)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: MOCK_TEXT }], finish_reason: 'stop' }]);
    });

    it('a translated whole answer without captureContent: its id and finish reason, and no content attribute', async () => {
      const g = await start(exportThread);
      const msg = await anthropic(g).messages.create({ model: 'openai/gpt-5.4', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
      await g.daemon.close(1000);
      const [request] = otlp!.spans().filter((s) => s.kind === 'SPAN_KIND_SERVER');
      expect(attr(request!, 'gen_ai.response.id')).toBe(msg.id);
      expect(attr(request!, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
      expect(request!.attributes.map((a) => a.key).filter((k) => /messages|instructions/.test(k))).toEqual([]);
    });

    it('without it, neither the prompt nor the answer appears anywhere in what is exported', async () => {
      const g = await start(exportThread);
      await anthropic(g).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
      await g.daemon.close(1000);
      expect(otlp!.exports.length).toBeGreaterThan(0);
      for (const e of otlp!.exports) {
        const text = `${e.raw.toString('latin1')}${JSON.stringify(e.decoded)}`;
        expect(text).not.toContain('capital of France');
        expect(text).not.toContain(MOCK_TEXT);
      }
    });
  });

  describe('a collector that is down', () => {
    it('changes nothing for clients: the same answers, and the dropped spans are counted on /metrics', async () => {
      const endpoint = `http://127.0.0.1:${await closedPort()}`;
      gw = await startTestGateway({ telemetry: telemetry(endpoint, exportThread) });
      const client = anthropic(gw);
      for (let i = 0; i < 5; i++) {
        const msg = await client.messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
        expect(msg.content[0]).toMatchObject({ type: 'text', text: MOCK_TEXT });
      }
      const stream = client.messages.stream({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
      expect((await stream.finalMessage()).content[0]).toMatchObject({ text: MOCK_TEXT });
      // The batches fail as they leave (after the exporter's own retries); each failed span is counted.
      let dropped = 0;
      for (const deadline = Date.now() + 40_000; dropped < 12 && Date.now() < deadline;) {
        const text = await (await fetch(`${gw.url}/metrics`)).text();
        dropped = Number(/^gateway_telemetry_dropped_total\{gateway_telemetry_signal="spans"\} (\S+)$/m.exec(text)?.[1] ?? 0);
        if (dropped < 12) await new Promise((r) => setTimeout(r, 200));
      }
      expect(dropped).toBe(12); // six requests, each a request span and one call span
    }, 60_000);
  });

  describe('no key material in anything exported', () => {
    it('the provider keys, the proxy key and the admin token appear in no span, attribute or metric export', async () => {
      otlp = await startOtlpReceiver();
      gw = await startTestGateway({ telemetry: { ...telemetry(otlp.url, exportThread, { captureContent: true, keyLabels: 'all' }), otlp: { endpoint: otlp.url, protocol: 'http/protobuf', metrics: true, metricsIntervalMs: 1000, batchDelayMs: 50, exportThread } } });
      const g = gw;
      // The proxy key also sits in the prompt: content capture must redact it.
      await anthropic(g).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: `my key is ${g.key}` }] });
      await new OpenAI({ baseURL: `${g.url}/v1`, apiKey: g.key, maxRetries: 0 }).chat.completions.create({ model: 'gpt-5.4', messages: [{ role: 'user', content: PROMPT }] });
      await fetch(`${g.url}/gemini/v1beta/models/gemini-3.5-flash:generateContent?key=${g.key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: PROMPT }] }] }) }).then((r) => r.text());
      await otlp.until((r) => r.exports.some((e) => e.path.endsWith('/v1/metrics')));
      const metricsText = await (await fetch(`${g.url}/metrics`)).text();
      await g.daemon.close(1000);
      expect(otlp.spans().length).toBeGreaterThanOrEqual(5);
      const secrets = [g.key, g.key.slice(-16), g.mocks.anthropic.key, g.mocks.openai.key, g.mocks.gemini.key, g.daemon.adminToken];
      const everything = [metricsText, ...otlp.exports.map((e) => `${e.raw.toString('latin1')}\n${JSON.stringify(e.decoded)}`)];
      for (const text of everything) for (const s of secrets) expect(text.includes(s), `found ${s.slice(0, 6)}…`).toBe(false);
      expect(everything.join('\n')).not.toMatch(/sk-proxy-/);
    });
  });

  describe('no key material in a response id', () => {
    it('an answer whose id echoes the provider key and the proxy key is exported with both redacted, content capture off', async () => {
      const g = await start(exportThread);
      const id = `msg_${g.mocks.anthropic.key}_${g.key}`;
      g.mocks.anthropic.setHandler(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, type: 'message', role: 'assistant', model: 'claude-opus-5', content: [{ type: 'text', text: MOCK_TEXT }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }) }));
      // Twice: the first request loads the door protocol's reader, the second finds it loaded.
      for (let i = 0; i < 2; i++) {
        const msg = await anthropic(g).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
        expect(msg.id).toBe(id); // the client gets the provider's answer as it is
      }
      await g.daemon.close(1000);
      const requests = otlp!.spans().filter((s) => s.kind === 'SPAN_KIND_SERVER');
      expect(requests).toHaveLength(2);
      for (const r of requests) {
        expect(attr(r, 'gen_ai.response.id')).toBe('msg_[redacted]_[redacted]');
        expect(attr(r, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
      }
    });
  });
});

describe('the sampler from the standard variables', () => {
  const otlpOf = (env: NodeJS.ProcessEnv) => {
    const { settings, warnings } = parseTelemetry({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', ...env });
    const { sampleRatio, ignoreCaller } = settings.otlp!;
    return { sampleRatio, ignoreCaller, warnings };
  };
  it('parent-based samplers follow the caller; the others decide alone', () => {
    expect(otlpOf({})).toEqual({ sampleRatio: undefined, ignoreCaller: undefined, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' })).toEqual({ sampleRatio: undefined, ignoreCaller: undefined, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'always_on' })).toEqual({ sampleRatio: undefined, ignoreCaller: true, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'always_off' })).toEqual({ sampleRatio: 0, ignoreCaller: true, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toEqual({ sampleRatio: 0, ignoreCaller: undefined, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual({ sampleRatio: 0.25, ignoreCaller: true, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual({ sampleRatio: 0.25, ignoreCaller: undefined, warnings: [] });
    expect(otlpOf({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }).warnings).toEqual(['OTEL_TRACES_SAMPLER "jaeger_remote" is not supported (always_on, always_off, traceidratio, and their parentbased_ forms); tracing every request']);
  });
});

describe('configured as a user would', () => {
  let proc: GatewayProcess | undefined;
  afterEach(async () => { await proc?.close(); proc = undefined; });

  it('`gateway start` with telemetry.otlp in config.json and the standard variables: named spans, with content as the variable asks', async () => {
    otlp = await startOtlpReceiver();
    proc = await startGatewayProcess(
      { OTEL_SERVICE_NAME: 'team-gateway', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true', OTEL_BSP_SCHEDULE_DELAY: '100' },
      { telemetry: { otlp: { endpoint: otlp.url } } },
    );
    const key = (await proc.cli(['keys', 'create', '--name', 'ops'])).stdout.trim();
    await new Anthropic({ baseURL: proc.url, apiKey: key, maxRetries: 0 }).messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
    await otlp.until((r) => r.spans().some((x) => x.kind === 'SPAN_KIND_SERVER'));
    const [request] = otlp.spans().filter((x) => x.kind === 'SPAN_KIND_SERVER');
    expect(request!.name).toBe('chat claude-opus-5');
    expect(attr(request!, 'gateway.key.name')).toBe('ops');
    expect(JSON.parse(attr(request!, 'gen_ai.input.messages') as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: PROMPT }] }]);
    const traces = otlp.exports.find((e) => e.path === '/v1/traces')!;
    expect(traces.contentType).toBe('application/x-protobuf');
    const resource = (traces.decoded.resourceSpans as Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> } }>)[0]!.resource;
    expect(resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue).toBe('team-gateway');
  });

  // The batches would leave only after 10 minutes: every span the collector has came from the
  // stop's flush (from the span worker, on a daemon that may use two CPUs), and each came once.
  for (const how of ['`gateway stop`', 'SIGTERM'] as const) it(`${how} exports the spans recorded but not yet sent, each once`, async () => {
    otlp = await startOtlpReceiver();
    proc = await startGatewayProcess({ OTEL_BSP_SCHEDULE_DELAY: '600000' }, { telemetry: { otlp: { endpoint: otlp.url } } });
    const key = (await proc.cli(['keys', 'create', '--name', 'ops'])).stdout.trim();
    const client = new Anthropic({ baseURL: proc.url, apiKey: key, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.messages.create({ model: 'claude-opus-5', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] });
    if (how === 'SIGTERM') {
      process.kill(proc.pid, 'SIGTERM');
      for (const deadline = Date.now() + 20_000; proc.alive() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
    } else {
      expect((await proc.cli(['stop'])).stdout).toMatch(/gateway stopped/);
    }
    expect(proc.alive()).toBe(false);
    const spans = otlp.spans();
    // Three requests, each a SERVER span with one CLIENT child.
    expect(spans.filter((s) => s.kind === 'SPAN_KIND_SERVER')).toHaveLength(3);
    expect(spans.filter((s) => s.kind === 'SPAN_KIND_CLIENT')).toHaveLength(3);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(6);
  }, 60_000);
});
