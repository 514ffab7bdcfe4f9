// The gateway's metric values, held in plain arrays. A request's twelve or so observations cost
// 5.5 µs through prom-client and 7.8 µs through the OpenTelemetry SDK's instruments (each hashes
// its label object on every call; measured here), against a daemon's ~55 µs of CPU per request;
// here the whole recording of a request (recorder.ts) is about 1.3 µs. Both exports read from
// here: the Prometheus text (exposition.ts) and the OTLP push (otlp-metrics.ts), each at its own
// pace, never on a request.

export type MetricKind = 'counter' | 'gauge' | 'histogram';

export interface MetricDef {
  /** The OpenTelemetry name (`gen_ai.client.operation.duration`). */
  readonly name: string;
  /** The Prometheus family name (`gen_ai_client_operation_duration_seconds`; a counter's without `_total`). */
  readonly prom: string;
  readonly kind: MetricKind;
  /** UCUM unit as OpenTelemetry writes it (`s`, `{token}`, `By`). */
  readonly unit: string;
  readonly help: string;
  /** Attribute names, in the order a series' values are given. */
  readonly labels: readonly string[];
  /** A histogram's upper bounds (the last bucket, +Inf, is implied). */
  readonly buckets?: readonly number[];
}

export interface Series {
  /** Label values in the family's order; '' means the attribute is absent from this series. */
  readonly values: readonly string[];
  /** A counter's total, a gauge's value, a histogram's sum. */
  sum: number;
  /** A histogram's observation count. */
  count: number;
  /** A histogram's count per bucket (not cumulative), +Inf last. */
  readonly buckets: number[] | undefined;
  /** A histogram's upper bounds (its family's). */
  readonly bounds: readonly number[] | undefined;
}

/** One observation into a histogram series. */
export function observe(s: Series, v: number): void {
  const bounds = s.bounds!;
  let i = 0;
  while (i < bounds.length && v > bounds[i]!) i++;
  s.buckets![i]!++;
  s.sum += v;
  s.count++;
}

/** Past this many series a family folds new label sets into one whose every value is `other`. */
export const MAX_SERIES = 2000;

export class Family {
  readonly series = new Map<string, Series>();
  constructor(readonly def: MetricDef) {}

  /**
   * The series for `values` (in the def's label order); `key` is their join by `\u0001`, which the
   * caller makes once for every family that shares a label set.
   */
  at(key: string, values: readonly string[]): Series {
    let s = this.series.get(key);
    if (s) return s;
    if (this.series.size >= MAX_SERIES) {
      // Full: every new label set shares the one series whose values are all `other` (made past the cap).
      const other = this.def.labels.map(() => 'other');
      const otherKey = other.join('\u0001');
      return this.series.get(otherKey) ?? this.create(otherKey, other);
    }
    return this.create(key, values);
  }

  private create(key: string, values: readonly string[]): Series {
    const bounds = this.def.buckets;
    const s: Series = { values, sum: 0, count: 0, bounds, buckets: bounds ? new Array<number>(bounds.length + 1).fill(0) : undefined };
    this.series.set(key, s);
    return s;
  }

  /** The series for `values`. */
  get(values: readonly string[]): Series {
    return this.at(seriesKey(values), values);
  }

  add(key: string, values: readonly string[], v: number): void {
    this.at(key, values).sum += v;
  }

  set(key: string, values: readonly string[], v: number): void {
    this.at(key, values).sum = v;
  }
}

export class MetricStore {
  readonly families: Family[] = [];
  /** Set values read only when the metrics are read (process figures, requests in flight). */
  private readonly refreshers: Array<() => void> = [];
  /** When the counters started (OTLP's start time for cumulative series). */
  readonly startedAt = Date.now();

  family(def: MetricDef): Family {
    const f = new Family(def);
    this.families.push(f);
    return f;
  }

  onRead(fn: () => void): void {
    this.refreshers.push(fn);
  }

  /** The families, their read-time values set first. */
  read(): readonly Family[] {
    for (const fn of this.refreshers) {
      try { fn(); } catch { /* a figure that cannot be read is left as it was */ }
    }
    return this.families;
  }
}

/** The key for a series' label values (see Family.at). */
export const seriesKey = (values: readonly string[]): string => values.join('\u0001');
