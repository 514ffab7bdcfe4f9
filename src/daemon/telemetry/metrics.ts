// Every metric the gateway exports: the GenAI conventions' (semconv.ts) and the gateway's own. The
// Prometheus names follow OpenTelemetry's mapping (dots to underscores, the unit as a suffix,
// `_total` on counters, added when rendered); attribute `gen_ai.request.model` is label
// `gen_ai_request_model`.
import { ATTR, DURATION_BUCKETS, METRIC, TIME_PER_TOKEN_BUCKETS, TIME_TO_FIRST_TOKEN_BUCKETS, TOKEN_BUCKETS } from './semconv.js';
import { MetricStore, type Family, type MetricDef } from './store.js';

/** The gateway's own attributes. */
export const GW = {
  door: 'gateway.door',
  provider: 'gateway.provider',
  model: 'gateway.model',
  key: 'gateway.key.name',
  limit: 'gateway.limit.kind',
  fallbackFrom: 'gateway.fallback.from',
  fallbackTo: 'gateway.fallback.to',
  signal: 'gateway.telemetry.signal',
} as const;

const GENAI = [ATTR.operationName, ATTR.providerName, ATTR.requestModel, ATTR.responseModel] as const;
const GENAI_ERR = [...GENAI, ATTR.errorType] as const;

const defs = {
  clientDuration: { name: METRIC.clientOperationDuration, prom: 'gen_ai_client_operation_duration_seconds', kind: 'histogram', unit: 's', help: 'GenAI operation duration: each call the gateway made to a provider.', labels: GENAI_ERR, buckets: DURATION_BUCKETS },
  clientTokens: { name: METRIC.clientTokenUsage, prom: 'gen_ai_client_token_usage', kind: 'histogram', unit: '{token}', help: 'Number of input and output tokens used, per request.', labels: [...GENAI, ATTR.tokenType], buckets: TOKEN_BUCKETS },
  clientFirstChunk: { name: METRIC.clientTimeToFirstChunk, prom: 'gen_ai_client_operation_time_to_first_chunk_seconds', kind: 'histogram', unit: 's', help: 'Time from the call to the provider to its first chunk (streams).', labels: GENAI, buckets: DURATION_BUCKETS },
  clientPerChunk: { name: METRIC.clientTimePerOutputChunk, prom: 'gen_ai_client_operation_time_per_output_chunk_seconds', kind: 'histogram', unit: 's', help: 'Time per output chunk after the first (streams; the mean gap of each stream).', labels: GENAI, buckets: DURATION_BUCKETS },
  serverDuration: { name: METRIC.serverRequestDuration, prom: 'gen_ai_server_request_duration_seconds', kind: 'histogram', unit: 's', help: 'Request duration as the gateway serves its clients, to the last byte.', labels: GENAI_ERR, buckets: DURATION_BUCKETS },
  serverFirstToken: { name: METRIC.serverTimeToFirstToken, prom: 'gen_ai_server_time_to_first_token_seconds', kind: 'histogram', unit: 's', help: 'Time to the first byte of a successful answer, as the gateway serves it.', labels: GENAI, buckets: TIME_TO_FIRST_TOKEN_BUCKETS },
  serverPerToken: { name: METRIC.serverTimePerOutputToken, prom: 'gen_ai_server_time_per_output_token_seconds', kind: 'histogram', unit: 's', help: 'Time per output token after the first, for successful answers.', labels: GENAI, buckets: TIME_PER_TOKEN_BUCKETS },

  requests: { name: 'gateway.requests', prom: 'gateway_requests', kind: 'counter', unit: '{request}', help: 'Requests by door, the provider and model that served, and status.', labels: [GW.door, GW.provider, GW.model, ATTR.httpStatus, GW.key] },
  streams: { name: 'gateway.streams.active', prom: 'gateway_streams_active', kind: 'gauge', unit: '{stream}', help: 'Streams being answered now.', labels: [GW.door, GW.provider] },
  inFlight: { name: 'gateway.requests.active', prom: 'gateway_requests_active', kind: 'gauge', unit: '{request}', help: 'Requests in flight now.', labels: [] },
  tokens: { name: 'gateway.tokens', prom: 'gateway_tokens', kind: 'counter', unit: '{token}', help: 'Tokens by provider, model and type (input includes cache reads and writes; output includes reasoning).', labels: [GW.provider, GW.model, ATTR.tokenType, GW.key] },
  cost: { name: 'gateway.cost', prom: 'gateway_cost_usd', kind: 'counter', unit: '{USD}', help: 'Cost in US dollars at the usage history\'s prices (requests of unpriced models add nothing).', labels: [GW.provider, GW.model, GW.key] },
  retries: { name: 'gateway.retries', prom: 'gateway_retries', kind: 'counter', unit: '{attempt}', help: 'Attempts that retried the same target with the same key.', labels: [GW.provider, GW.model] },
  keySwitches: { name: 'gateway.key_switches', prom: 'gateway_key_switches', kind: 'counter', unit: '{attempt}', help: 'Attempts that moved to another key of the provider\'s pool.', labels: [GW.provider] },
  fallbacks: { name: 'gateway.fallbacks', prom: 'gateway_fallbacks', kind: 'counter', unit: '{attempt}', help: 'Attempts that moved to another target of the route.', labels: [GW.fallbackFrom, GW.fallbackTo] },
  breakerOpenings: { name: 'gateway.breaker.openings', prom: 'gateway_breaker_openings', kind: 'counter', unit: '{opening}', help: 'Circuit breaker openings, by provider (and model, when one model rests).', labels: [GW.provider, GW.model] },
  limitRefusals: { name: 'gateway.limit.refusals', prom: 'gateway_limit_refusals', kind: 'counter', unit: '{request}', help: 'Requests refused by a key\'s limit, by kind.', labels: [GW.limit] },
  upstreamErrors: { name: 'gateway.upstream.errors', prom: 'gateway_upstream_errors', kind: 'counter', unit: '{error}', help: 'Calls to providers that failed before an answer (connect-error, timeout) or broke off (interrupted).', labels: [GW.provider, ATTR.errorType] },
  dropped: { name: 'gateway.telemetry.dropped', prom: 'gateway_telemetry_dropped', kind: 'counter', unit: '{item}', help: 'Spans or metric exports dropped because the OTLP collector could not take them.', labels: [GW.signal] },

  rss: { name: 'process.memory.usage', prom: 'process_resident_memory_bytes', kind: 'gauge', unit: 'By', help: 'Resident memory of the daemon.', labels: [] },
  heap: { name: 'v8js.memory.heap.used', prom: 'nodejs_heap_used_bytes', kind: 'gauge', unit: 'By', help: 'V8 heap in use.', labels: [] },
  cpu: { name: 'process.cpu.time', prom: 'process_cpu_seconds', kind: 'counter', unit: 's', help: 'CPU time of the daemon (user and system).', labels: [] },
  startTime: { name: 'process.start_time', prom: 'process_start_time_seconds', kind: 'gauge', unit: 's', help: 'When the daemon started, in seconds since the epoch.', labels: [] },
  loopDelay: { name: 'nodejs.eventloop.delay', prom: 'nodejs_eventloop_delay_seconds', kind: 'gauge', unit: 's', help: 'Event-loop delay over the last minute or so, by percentile (100: the maximum).', labels: ['nodejs.eventloop.delay.percentile'] },
} satisfies Record<string, MetricDef>;

export type Metrics = { readonly [K in keyof typeof defs]: Family };

/** A store with every family. */
export function createMetrics(store: MetricStore): Metrics {
  const out = {} as Record<keyof typeof defs, Family>;
  for (const k of Object.keys(defs) as Array<keyof typeof defs>) out[k] = store.family(defs[k] as MetricDef);
  return out;
}
