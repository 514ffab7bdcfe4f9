// What the request thread records of a span, and the messages it exchanges with the span worker
// (span-worker.ts), which turns the records into OpenTelemetry spans and exports them. Types only:
// the worker imports this file as a type, so it runs from dist and under Node's type stripping alike.
import type { Attributes, AttributeValue } from '@opentelemetry/api';

/** A span's attribute values, in the order of WorkerSetup.attributes; undefined: not set. */
export type SpanValues = Array<AttributeValue | undefined>;

/** A finished span, as plain data (it crosses to the worker by structured clone). */
export interface SpanRecord {
  name: string;
  /** SpanKind's number (SERVER 1, CLIENT 2). */
  kind: number;
  traceId: string;
  spanId: string;
  /** The parent's span id: the request span's for an attempt, the caller's for a request with a traceparent. */
  parentId: string | undefined;
  /** The parent is the caller's (came in a traceparent header). */
  remoteParent: boolean;
  /** The caller's W3C tracestate, carried as the SDK carries it. */
  traceState: string | undefined;
  /** Milliseconds since the epoch, fractional. */
  start: number;
  end: number;
  error: boolean;
  values: SpanValues;
}

export interface WorkerSetup {
  /** Set when the file runs as the span worker (the request thread imports it too). */
  spanWorker?: true;
  protocol: 'http/protobuf' | 'http/json';
  /** The traces URL (`…/v1/traces`). */
  url: string;
  resource: Attributes;
  /** The attribute names, in the order a record's values list them. */
  attributes: readonly string[];
  scope: { name: string; version: string; schemaUrl: string };
  /** How often the worker's batch processor exports, and how many spans it holds at most. */
  batchDelayMs: number;
  queue: number;
}

/** Request thread → worker. */
export type ToWorker =
  | { type: 'spans'; spans: SpanRecord[] }
  | { type: 'close' };

/** Worker → request thread. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /** `took` spans were taken off the port; `dropped` were lost (queue full, or a failed export). */
  | { type: 'took'; took: number; dropped: number }
  | { type: 'closed' };
