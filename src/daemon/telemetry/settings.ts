// config.json's `telemetry` section and the standard OpenTelemetry variables, read when the daemon
// starts:
//
//   "telemetry": {
//     "metrics": true,                      // GET /metrics (default on)
//     "keyLabels": "all" | ["team-a"],      // per-key series (default none)
//     "captureContent": false,              // prompts and completions in spans (default off)
//     "serviceName": "model-gateway",
//     "otlp": { "endpoint": "http://collector:4318", "protocol": "http/protobuf", "metrics": false, "metricsIntervalSeconds": 60 }
//   }
//
// The section wins over OTEL_EXPORTER_OTLP_ENDPOINT / _PROTOCOL, OTEL_SERVICE_NAME and
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT; OTEL_SDK_DISABLED=true turns OTLP off;
// OTEL_BSP_SCHEDULE_DELAY sets how often span batches leave (ms). The
// exporters read OTEL_EXPORTER_OTLP_HEADERS (and the per-signal variables) themselves.

export type KeyLabels = 'none' | 'all' | readonly string[];
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TelemetrySettings {
  metrics: boolean;
  keyLabels: KeyLabels;
  captureContent: boolean;
  serviceName: string;
  /** Absent: nothing is exported over OTLP, and no span is ever made. */
  otlp?: {
    endpoint: string; protocol: OtlpProtocol; metrics: boolean; metricsIntervalMs: number; batchDelayMs: number; sampleRatio?: number;
    /** The sampler decides alone (OTEL_TRACES_SAMPLER always_on, always_off, traceidratio): a caller's decision is not followed. */
    ignoreCaller?: true;
    /** Where spans are serialized and sent: a worker thread, or the request thread. Not read from config.json: by default a worker when the daemon may use more than one CPU (tests set each). */
    exportThread?: 'worker' | 'request';
  };
}

export const TELEMETRY_DEFAULTS: TelemetrySettings = { metrics: true, keyLabels: 'none', captureContent: false, serviceName: 'model-gateway' };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The settings, and a warning for each value that was not used. */
export function parseTelemetry(raw: unknown, env: NodeJS.ProcessEnv = process.env): { settings: TelemetrySettings; warnings: string[] } {
  const warnings: string[] = [];
  const t = raw === undefined ? {} : isObj(raw) ? raw : (warnings.push('telemetry must be an object; using the defaults'), {});
  const bool = (v: unknown, field: string, dflt: boolean): boolean => {
    if (v === undefined) return dflt;
    if (typeof v === 'boolean') return v;
    warnings.push(`telemetry.${field} must be true or false; using ${dflt}`);
    return dflt;
  };
  let keyLabels: KeyLabels = 'none';
  if (t.keyLabels === 'all' || t.keyLabels === true) keyLabels = 'all';
  else if (Array.isArray(t.keyLabels) && t.keyLabels.every((k) => typeof k === 'string')) keyLabels = t.keyLabels as string[];
  else if (t.keyLabels !== undefined && t.keyLabels !== false && t.keyLabels !== 'none') warnings.push('telemetry.keyLabels must be "all" or a list of key names; no per-key series');

  const contentEnv = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true';
  const settings: TelemetrySettings = {
    metrics: bool(t.metrics, 'metrics', true),
    keyLabels,
    captureContent: bool(t.captureContent, 'captureContent', contentEnv),
    serviceName: typeof t.serviceName === 'string' && t.serviceName !== '' ? t.serviceName : env.OTEL_SERVICE_NAME || TELEMETRY_DEFAULTS.serviceName,
  };

  const o = t.otlp === undefined ? {} : isObj(t.otlp) ? t.otlp : (warnings.push('telemetry.otlp must be an object'), {});
  const endpoint = typeof o.endpoint === 'string' && o.endpoint !== '' ? o.endpoint : env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint && env.OTEL_SDK_DISABLED?.toLowerCase() !== 'true') {
    let url: URL | undefined;
    try { url = new URL(endpoint); } catch { /* reported below */ }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      warnings.push(`telemetry: the OTLP endpoint "${endpoint}" is not an http(s) URL; nothing is exported`);
    } else {
      const asked = typeof o.protocol === 'string' ? o.protocol : env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
      let protocol: OtlpProtocol = 'http/protobuf';
      if (asked === 'http/json') protocol = 'http/json';
      else if (asked !== 'http/protobuf') warnings.push(`telemetry: OTLP protocol "${asked}" is not supported; using http/protobuf (the collector's OTLP/HTTP port, usually 4318)`);
      const interval = o.metricsIntervalSeconds;
      const seconds = typeof interval === 'number' && Number.isFinite(interval) && interval >= 1 ? interval : 60;
      if (interval !== undefined && seconds !== interval) warnings.push('telemetry.otlp.metricsIntervalSeconds must be a number >= 1; using 60');
      // The standard variable for the span batches' interval (the SDK's default, 5 s, otherwise).
      const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
      const batchDelayMs = Number.isFinite(delay) && delay > 0 ? delay : 5000;
      // The share of requests traced: the section's sampleRatio, else the standard
      // OTEL_TRACES_SAMPLER(_ARG); every request by default. A caller's decision is followed, but
      // for the samplers that are not parent-based.
      const { sampleRatio, ignoreCaller } = samplerOf(o.sampleRatio, env, warnings);
      settings.otlp = {
        endpoint: endpoint.replace(/\/+$/, ''), protocol, metrics: bool(o.metrics, 'otlp.metrics', false), metricsIntervalMs: seconds * 1000, batchDelayMs,
        ...(sampleRatio === undefined ? {} : { sampleRatio }), ...(ignoreCaller ? { ignoreCaller } : {}),
      };
    }
  }
  return { settings, warnings };
}


/**
 * The trace sampler, from the section's sampleRatio (parent-based), or from the standard
 * OTEL_TRACES_SAMPLER / _ARG: a ratio in [0, 1] (undefined: every request), and `ignoreCaller`
 * for the samplers that are not parent-based (`always_on`, `always_off`, `traceidratio`).
 */
function samplerOf(v: unknown, env: NodeJS.ProcessEnv, warnings: string[]): { sampleRatio?: number; ignoreCaller?: true } {
  if (v !== undefined) {
    if (typeof v === 'number' && v >= 0 && v <= 1) return { sampleRatio: v };
    warnings.push('telemetry.otlp.sampleRatio must be a number from 0 to 1; tracing every request');
    return {};
  }
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (sampler === undefined || sampler === '') return {};
  const ignoreCaller = !sampler.startsWith('parentbased_') ? { ignoreCaller: true as const } : {};
  switch (sampler.replace(/^parentbased_/, '')) {
    case 'always_on': return ignoreCaller;
    case 'always_off': return { sampleRatio: 0, ...ignoreCaller };
    case 'traceidratio': {
      const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
      if (!(arg >= 0 && arg <= 1)) warnings.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, not "${env.OTEL_TRACES_SAMPLER_ARG}"; tracing every request`);
      return { sampleRatio: arg >= 0 && arg <= 1 ? arg : 1, ...ignoreCaller };
    }
    default:
      warnings.push(`OTEL_TRACES_SAMPLER "${env.OTEL_TRACES_SAMPLER}" is not supported (always_on, always_off, traceidratio, and their parentbased_ forms); tracing every request`);
      return {};
  }
}
