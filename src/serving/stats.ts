// Per model-version statistics with Triton's counting rules: one success/queue/compute record per
// request, inference_count counts batch elements, execution_count counts backend executions.

export interface Duration {
  count: number;
  ns: number;
}

export interface BatchStat {
  batch_size: number;
  compute_input: Duration;
  compute_infer: Duration;
  compute_output: Duration;
}

/** What GET /v2/models/{m}/stats returns for one version (Triton's field names). */
export interface ModelStatistics {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: {
    success: Duration;
    fail: Duration;
    queue: Duration;
    compute_input: Duration;
    compute_infer: Duration;
    compute_output: Duration;
    cache_hit: Duration;
    cache_miss: Duration;
  };
  response_stats: Record<string, never>;
  batch_stats: BatchStat[];
  memory_usage: never[];
}

/** Timings of one request, in nanoseconds. */
export interface RequestTimings {
  queueNs: number;
  computeInputNs: number;
  computeInferNs: number;
  computeOutputNs: number;
  totalNs: number;
}

/** Why a request failed, as Triton labels nv_inference_request_failure. */
export type FailureReason = 'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER';
/** Where a cancelled request was when its client went away. */
export type CancelStage = 'queued' | 'running';

const zero = (): Duration => ({ count: 0, ns: 0 });
// Whole nanoseconds, as Triton reports them: the clock reads fractional milliseconds.
const add = (d: Duration, ns: number): void => {
  d.count += 1;
  d.ns += Math.round(ns);
};

export class ModelStats {
  private readonly stats: ModelStatistics;
  private readonly batches = new Map<number, BatchStat>();
  private readonly failures: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };
  /** Requests queued and not yet executing (nv_inference_pending_request_count, as Triton counts it). */
  pending = 0;
  /** Requests whose client went away: dropped from the queue, or told while running (herd_inference_cancelled_total). */
  readonly cancelled: Record<CancelStage, number> = { queued: 0, running: 0 };

  constructor(name: string, version: number) {
    this.stats = {
      name,
      version: String(version),
      last_inference: 0,
      inference_count: 0,
      execution_count: 0,
      inference_stats: {
        success: zero(),
        fail: zero(),
        queue: zero(),
        compute_input: zero(),
        compute_infer: zero(),
        compute_output: zero(),
        cache_hit: zero(),
        cache_miss: zero(),
      },
      response_stats: {},
      batch_stats: [],
      memory_usage: [],
    };
  }

  recordSuccess(t: RequestTimings, batchElements: number, nowMs: number): void {
    const s = this.stats.inference_stats;
    add(s.success, t.totalNs);
    add(s.queue, t.queueNs);
    add(s.compute_input, t.computeInputNs);
    add(s.compute_infer, t.computeInferNs);
    add(s.compute_output, t.computeOutputNs);
    this.stats.inference_count += batchElements;
    this.stats.last_inference = nowMs;
  }

  recordFailure(totalNs: number, nowMs: number, reason: FailureReason = 'BACKEND'): void {
    add(this.stats.inference_stats.fail, totalNs);
    this.failures[reason] += 1;
    this.stats.last_inference = nowMs;
  }

  /**
   * A request answered from the response cache (Triton's UpdateSuccessCacheHit): a success with its
   * queue time, no compute and no inference or execution counted; `lookupNs` is the hit's duration.
   */
  recordCacheHit(totalNs: number, queueNs: number, lookupNs: number): void {
    const s = this.stats.inference_stats;
    add(s.success, totalNs);
    add(s.queue, queueNs);
    add(s.cache_hit, lookupNs);
  }

  /**
   * A request that missed and was executed (Triton's UpdateSuccessCacheMiss): the lookup and insert time
   * is added to its request duration, already counted by the scheduler.
   */
  recordCacheMiss(missNs: number): void {
    const s = this.stats.inference_stats;
    s.success.ns += Math.round(missNs);
    add(s.cache_miss, missNs);
  }

  /** One backend execution of `batchSize` elements (several requests may share it). */
  recordExecution(batchSize: number, computeInputNs: number, computeInferNs: number, computeOutputNs: number): void {
    this.stats.execution_count += 1;
    let b = this.batches.get(batchSize);
    if (!b) {
      b = { batch_size: batchSize, compute_input: zero(), compute_infer: zero(), compute_output: zero() };
      this.batches.set(batchSize, b);
    }
    add(b.compute_input, computeInputNs);
    add(b.compute_infer, computeInferNs);
    add(b.compute_output, computeOutputNs);
  }

  /** Failures by reason (their sum is inference_stats.fail.count). */
  failureCounts(): Readonly<Record<FailureReason, number>> {
    return { ...this.failures };
  }

  snapshot(): ModelStatistics {
    const batch_stats = [...this.batches.values()].sort((a, b) => a.batch_size - b.batch_size);
    return structuredClone({ ...this.stats, batch_stats });
  }
}
