// A loopback OTLP/HTTP collector for the tests: takes what the daemon exports on /v1/traces and
// /v1/metrics, and decodes it with the OpenTelemetry protocol's own .proto definitions (as shipped
// in the @elastic/mockotlpserver package) through protobufjs; JSON exports are parsed as they are.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { REPO_ROOT } from '../helpers/cli.js';

const PROTOS = join(REPO_ROOT, 'node_modules', '@elastic', 'mockotlpserver');
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(PROTOS, target);
root.loadSync([
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
], { keepCase: false });
const TRACES = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const METRICS = root.lookupType('opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest');

export interface OtlpAttribute { key: string; value: Record<string, unknown> }
export interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId: string; name: string; kind: string;
  attributes: OtlpAttribute[]; status?: { code?: string };
}
export interface OtlpExport { path: string; contentType: string; raw: Buffer; decoded: Record<string, unknown> }

/** Ids as hex, as a traceparent writes them (protobuf bytes are decoded to base64). */
const hex = (b64: unknown): string => (typeof b64 === 'string' && b64 !== '' ? Buffer.from(b64, 'base64').toString('hex') : '');

export interface OtlpReceiver {
  url: string;
  exports: OtlpExport[];
  spans(): OtlpSpan[];
  /** Resolves once `pred` holds for what was received (checked on each export). */
  until(pred: (r: OtlpReceiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: OtlpExport[] = [];
  let waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      const contentType = req.headers['content-type'] ?? '';
      const path = req.url ?? '';
      const type = path.endsWith('/v1/traces') ? TRACES : METRICS;
      const decoded = contentType.includes('json')
        ? JSON.parse(raw.toString('utf8')) as Record<string, unknown>
        : type.toObject(type.decode(raw), { longs: String, enums: String, bytes: String, defaults: false }) as Record<string, unknown>;
      exports.push({ path, contentType, raw, decoded });
      res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' });
      res.end(contentType.includes('json') ? '{}' : undefined);
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const receiver: OtlpReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans() {
      const out: OtlpSpan[] = [];
      for (const e of exports.filter((x) => x.path.endsWith('/v1/traces'))) {
        for (const rs of (e.decoded.resourceSpans ?? []) as Array<{ scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }>) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              out.push({ ...(s as unknown as OtlpSpan), traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId) });
            }
          }
        }
      }
      return out;
    },
    until(pred, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => { waiters = waiters.filter((w) => w !== check); reject(new Error(`OTLP receiver: condition not met in ${timeoutMs} ms (${exports.length} exports)`)); }, timeoutMs);
        const check = () => { if (pred(receiver)) { clearTimeout(t); resolve(); } else waiters.push(check); };
        check();
      });
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
  return receiver;
}

/** An attribute's value as a plain JS value (string, number, boolean, or a list of them). */
export function attr(span: { attributes: OtlpAttribute[] }, key: string): unknown {
  const a = span.attributes.find((x) => x.key === key);
  return a === undefined ? undefined : anyValue(a.value);
}

function anyValue(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(anyValue);
  return undefined;
}
