// Shapes the serving side's per-version statistics (what /v2/models/stats answers) into the plain
// snapshot metrics/ reads, so /metrics is computed from the very numbers /stats shows.
import type { InferenceStatsSnapshot } from '../metrics/inference-stats-snapshot.ts';
import type { LoadedModel } from '../serving/repository/model-repository-manager.ts';
import type { ModelStatistics } from '../serving/stats.ts';

/** What a model version knows beyond its /stats body. */
export interface LiveModelState {
  /** Requests waiting for execution (from enqueue until execution starts, as Triton counts). */
  pending: number;
  /** Failures by Triton's reason labels; their sum is the /stats fail count. */
  failures?: Partial<Record<'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER', number>>;
  /** Requests whose client went away, by where they were (herd_inference_cancelled_total). */
  cancelled?: { queued: number; running: number };
  /** Seconds its last load took; omitted, the load-duration series is left out. */
  loadDurationSecs?: number;
  /** The model enables response_cache: its nv_cache_* series exist (zero without a server cache, as in Triton). */
  cacheEnabled?: boolean;
  /** config.pbtxt metric_tags. */
  tags?: Readonly<Record<string, string>>;
}

export function convertModelStatisticsToSnapshot(stats: ModelStatistics, live: LiveModelState): InferenceStatsSnapshot {
  const s = stats.inference_stats;
  const duration = (d: { count: number; ns: number }) => ({ count: d.count, ns: d.ns });
  return {
    model: stats.name,
    version: stats.version,
    success: duration(s.success),
    fail: { ...duration(s.fail), reasons: live.failures ?? { BACKEND: s.fail.count } },
    queue: duration(s.queue),
    compute_input: duration(s.compute_input),
    compute_infer: duration(s.compute_infer),
    compute_output: duration(s.compute_output),
    inference_count: stats.inference_count,
    execution_count: stats.execution_count,
    pending: live.pending,
    ...(live.cancelled === undefined ? {} : { cancelled: { ...live.cancelled } }),
    ...(live.loadDurationSecs === undefined ? {} : { load_duration_secs: live.loadDurationSecs }),
    ...(live.cacheEnabled ? { cache: { hit: duration(s.cache_hit), miss: duration(s.cache_miss) } } : {}),
    ...(live.tags && Object.keys(live.tags).length > 0 ? { tags: live.tags } : {}),
  };
}

/**
 * The source registerInferenceMetrics wants, over the repository's loaded versions. `loadSeconds`
 * is filled from ModelRepositoryManager's onLoaded callback, keyed by the LoadedModel object so a
 * reload's new versions start fresh and unloaded ones are forgotten.
 */
export function createServingStatsSource(repository: { loadedModels(): LoadedModel[] }, loadSeconds: WeakMap<LoadedModel, number> = new WeakMap()): () => InferenceStatsSnapshot[] {
  return () =>
    repository.loadedModels().map((model) => {
      const seconds = loadSeconds.get(model);
      return convertModelStatisticsToSnapshot(model.stats.snapshot(), {
        pending: model.stats.pending,
        failures: model.stats.failureCounts(),
        cancelled: model.stats.cancelled,
        ...(seconds === undefined ? {} : { loadDurationSecs: seconds }),
        cacheEnabled: model.config.response_cache?.enable === true,
        tags: model.config.metric_tags,
      });
    });
}
