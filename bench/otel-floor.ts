// `node bench/otel-floor.ts [--requests N]`: what the OpenTelemetry JS SDK itself costs per traced
// request, with no gateway around it: the two spans the daemon makes for a request (the SERVER span
// and its CLIENT attempt, with the same attributes), ended into the BatchSpanProcessor and
// serialized by the OTLP protobuf serializer the exporter uses; nothing is sent. Prints one JSON line
// ({ sdkUs, serializeUs, bytesPerRequest }): the floor under the "telemetry on" rows, which no
// gateway code can go below while it uses these packages and traces every request.
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';

const argv = process.argv.slice(2);
const N = Number(argv[argv.indexOf('--requests') + 1] || 100_000);

async function run(serialize: boolean): Promise<{ us: number; bytes: number; spans: number }> {
  let bytes = 0;
  let spans = 0;
  const exporter: SpanExporter = {
    export(batch: ReadableSpan[], done) {
      if (serialize) bytes += ProtobufTraceSerializer.serializeRequest(batch)?.length ?? 0;
      spans += batch.length;
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'model-gateway' }),
    spanProcessors: [new BatchSpanProcessor({ exporter, maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 200 })],
  });
  const tracer = provider.getTracer('model-gateway');
  const request = (i: number) => {
    const attributes: Attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-5.4', 'gateway.door': 'openai', 'gateway.provider': 'openai', 'gateway.key.name': 'bench' };
    const span = tracer.startSpan('chat gpt-5.4', { kind: SpanKind.SERVER, attributes });
    const attempt = tracer.startSpan('chat gpt-5.4', { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-5.4', 'gateway.provider': 'openai' } });
    attempt.setAttributes({ 'gen_ai.response.model': 'gpt-5.4-2026-03-05', 'http.response.status_code': 200 });
    attempt.end();
    span.setAttributes({
      'http.response.status_code': 200, 'gen_ai.response.model': 'gpt-5.4-2026-03-05', 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 12,
      'gen_ai.response.id': `chatcmpl-${i}`, 'gen_ai.response.finish_reasons': ['stop'],
    });
    span.end();
  };
  // As in a daemon: requests arrive between turns of the event loop, so batches leave on their own.
  const burst = async (n: number) => { for (let i = 0; i < n; i += 500) { for (let j = 0; j < 500; j++) request(i + j); await new Promise((r) => setImmediate(r)); } };
  await burst(20_000);
  await provider.forceFlush();
  bytes = 0;
  spans = 0;
  const t0 = process.cpuUsage();
  await burst(N);
  await provider.forceFlush();
  const t = process.cpuUsage(t0);
  await provider.shutdown();
  return { us: (t.user + t.system) / N, bytes: bytes / N, spans: spans / N };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sdk: number[] = [];
const full: number[] = [];
let bytesPerRequest = 0;
for (let rep = 0; rep < 5; rep++) {
  sdk.push((await run(false)).us);
  const f = await run(true);
  full.push(f.us);
  bytesPerRequest = f.bytes;
}
console.log(JSON.stringify({ sdkUs: median(sdk), serializeUs: median(full) - median(sdk), totalUs: median(full), bytesPerRequest: Math.round(bytesPerRequest) }));
