// perf_analyzer's stability rule: the last three windows agree, max/min within the stability
// percentage, on throughput and on the stabilizing latency (average, or the --percentile one).
export const STABILITY_WINDOWS = 3;

export interface WindowMeasure {
  inferPerSec: number;
  /** Average latency, or the --percentile latency when one was given (any unit, used as a ratio). */
  latency: number;
}

/**
 * True when the last STABILITY_WINDOWS measures are within `stabilityPercentage`% (max / min) on
 * throughput and, unless `checkLatency` is false, on latency. A window with no completed request
 * (throughput 0, latency NaN) is never stable.
 */
export function isStable(measures: readonly WindowMeasure[], stabilityPercentage: number, checkLatency = true): boolean {
  if (measures.length < STABILITY_WINDOWS) return false;
  const recent = measures.slice(-STABILITY_WINDOWS);
  if (recent.some((m) => !(m.inferPerSec > 0))) return false;
  const limit = 1 + stabilityPercentage / 100;
  if (
    !withinRatio(
      recent.map((m) => m.inferPerSec),
      limit,
    )
  )
    return false;
  if (!checkLatency) return true;
  const latencies = recent.map((m) => m.latency);
  if (latencies.some((l) => !Number.isFinite(l) || l < 0)) return false;
  return withinRatio(latencies, limit);
}

function withinRatio(values: readonly number[], limit: number): boolean {
  const max = Math.max(...values);
  const min = Math.min(...values);
  if (min === 0) return max === 0;
  return max / min <= limit;
}
