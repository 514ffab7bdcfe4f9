// Latency histograms with logarithmic buckets (each 10 % wider than the last), so percentiles can
// be read from hourly rollups instead of raw rows: any percentile is within ±5 % of the truth.
const GROWTH = 1.1;
const LOG_GROWTH = Math.log(GROWTH);
/** Bucket 0 holds everything under 1 ms; bucket b (b ≥ 1) holds [1.1^(b-1), 1.1^b) ms. */
export function latencyBucket(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(1 + Math.floor(Math.log(ms) / LOG_GROWTH), 400);
}

/** A representative value for a bucket (its geometric middle). */
export function bucketValue(bucket: number): number {
  if (bucket <= 0) return 0.5;
  return Math.pow(GROWTH, bucket - 0.5);
}

export interface Percentiles { count: number; p50: number | null; p90: number | null; p99: number | null }

/** Percentiles from `bucket → count`. */
export function percentiles(hist: Map<number, number>): Percentiles {
  const buckets = [...hist.entries()].filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
  const count = buckets.reduce((s, [, c]) => s + c, 0);
  if (count === 0) return { count: 0, p50: null, p90: null, p99: null };
  const at = (q: number): number => {
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (const [b, c] of buckets) {
      seen += c;
      if (seen >= rank) return bucketValue(b);
    }
    return bucketValue(buckets[buckets.length - 1]![0]);
  };
  return { count, p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}
