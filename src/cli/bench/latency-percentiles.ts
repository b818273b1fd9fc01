// Client latency statistics the way perf_analyzer computes them: mean, sample standard deviation and
// percentiles picked by rounded index over the sorted latencies (no interpolation).
export const REPORTED_PERCENTILES: readonly number[] = [50, 90, 95, 99];

export interface LatencySummary {
  count: number;
  avgUs: number;
  /** Sample standard deviation; 0 with fewer than two samples. */
  stdUs: number;
  /** Percentile → latency in µs, ascending by percentile (the CSV column order). */
  percentilesUs: Map<number, number>;
}

/**
 * The value at `percentile` (0-100) of ascending `sorted` values: index round(p/100 * (n-1)),
 * perf_analyzer's `(p / 100.0) * (size - 1) + 0.5` truncated. NaN for no values.
 */
export function pickPercentile(sorted: ArrayLike<number>, percentile: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.floor((percentile / 100) * (sorted.length - 1) + 0.5);
  return sorted[Math.min(Math.max(index, 0), sorted.length - 1)] as number;
}

/** The percentiles to report: 50, 90, 95, 99 and the --percentile one, ascending and distinct. */
export function listReportedPercentiles(extra: number | undefined): number[] {
  const set = new Set(REPORTED_PERCENTILES);
  if (extra !== undefined) set.add(extra);
  return [...set].sort((a, b) => a - b);
}

/** Summarises latencies given in milliseconds (sorted in place) into µs. */
export function summarizeLatencies(latenciesMs: Float64Array, percentiles: readonly number[]): LatencySummary {
  latenciesMs.sort();
  const n = latenciesMs.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += latenciesMs[i] as number;
  const avgMs = n > 0 ? sum / n : Number.NaN;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const d = (latenciesMs[i] as number) - avgMs;
    squares += d * d;
  }
  const percentilesUs = new Map<number, number>();
  for (const p of percentiles) percentilesUs.set(p, pickPercentile(latenciesMs, p) * 1000);
  return {
    count: n,
    avgUs: avgMs * 1000,
    stdUs: n > 1 ? Math.sqrt(squares / (n - 1)) * 1000 : 0,
    percentilesUs,
  };
}
