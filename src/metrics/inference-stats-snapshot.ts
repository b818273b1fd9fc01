// The plain data the metrics layer reads per model version at scrape time. The serving side (through
// a small adapter in http/ or app.ts) satisfies it; metrics/ never imports serving/.

/** Triton's failure reasons, the `reason` label of nv_inference_request_failure. */
export const FAILURE_REASONS = ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** A cumulative duration statistic, as in Triton's statistics extension. */
export interface DurationStat {
  count: number;
  /** Sum of the durations, in nanoseconds. */
  ns: number;
  /**
   * Sum of each duration truncated to whole microseconds (Σ⌊ns_i/1000⌋), which is what Triton's
   * *_duration_us counters hold. Optional because it needs per-request accounting; without it the
   * metric is ⌊ns/1000⌋ of the total, which can exceed Triton's by less than `count` µs.
   */
  us?: number;
}

export interface FailureStat extends DurationStat {
  /**
   * Failures by reason. Whatever part of `count` the reasons do not cover is reported as OTHER, so
   * the series always sum to `count` (a source without a breakdown reports everything as OTHER).
   */
  reasons?: Readonly<Partial<Record<FailureReason, number>>>;
}

/** One loaded model version's statistics at one instant. */
export interface InferenceStatsSnapshot {
  model: string;
  version: string;
  /** Requests answered successfully (1 per request, whatever its batch size). */
  success: DurationStat;
  fail: FailureStat;
  queue: DurationStat;
  compute_input: DurationStat;
  compute_infer: DurationStat;
  compute_output: DurationStat;
  /** Batch elements inferred (a batch of n counts n). */
  inference_count: number;
  /** Backend executions (several requests may share one). */
  execution_count: number;
  /** Requests waiting in the scheduler queue, not yet executing (Triton's meaning of "pending"). */
  pending: number;
  /** Requests whose client went away: dropped while queued, or told while running; undefined leaves the series out. */
  cancelled?: { queued: number; running: number };
  /** Seconds the last load of this version took; undefined leaves the series out. */
  load_duration_secs?: number;
  /** Response cache hits and misses; present when the model enables response_cache (Triton's nv_cache_* series exist then). */
  cache?: { hit: DurationStat; miss: DurationStat };
  /** The model's metric_tags: each becomes a `_<key>` label on every series of this version, as in Triton. */
  tags?: Readonly<Record<string, string>>;
}
