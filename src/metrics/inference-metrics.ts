// Triton's per-model inference metrics (names, types, HELP text and labels as tritonserver prints
// them), computed at scrape time from statistics snapshots so /metrics and /stats never disagree.
import type { Registry } from 'prom-client';
import { createComputedCounter, createComputedGauge, type Sample } from './computed-metric.ts';
import { FAILURE_REASONS, type DurationStat, type InferenceStatsSnapshot } from './inference-stats-snapshot.ts';

type ModelLabel = 'model' | 'version';
type FailureLabel = ModelLabel | 'reason';

/**
 * Microseconds as Triton's *_duration_us counters hold them. Triton adds ⌊ns/1000⌋ per request; when
 * the source kept that sum (`us`) it is used as is, otherwise the total's ⌊ns/1000⌋ is the closest.
 */
export function convertDurationToTritonUs(duration: DurationStat): number {
  return duration.us ?? Math.floor(duration.ns / 1000);
}

/** The counters labelled by model and version, with the HELP text of Triton core's metrics.cc. */
const COUNTERS: readonly { name: string; help: string; value: (s: InferenceStatsSnapshot) => number }[] = [
  { name: 'nv_inference_request_success', help: 'Number of successful inference requests, all batch sizes', value: (s) => s.success.count },
  { name: 'nv_inference_count', help: 'Number of inferences performed (does not include cached requests)', value: (s) => s.inference_count },
  { name: 'nv_inference_exec_count', help: 'Number of model executions performed (does not include cached requests)', value: (s) => s.execution_count },
  // Triton counts only successful requests in the duration counters (a failure adds to the failure count alone).
  {
    name: 'nv_inference_request_duration_us',
    help: 'Cumulative inference request duration in microseconds (includes cached requests)',
    value: (s) => convertDurationToTritonUs(s.success),
  },
  {
    name: 'nv_inference_queue_duration_us',
    help: 'Cumulative inference queuing duration in microseconds (includes cached requests)',
    value: (s) => convertDurationToTritonUs(s.queue),
  },
  {
    name: 'nv_inference_compute_input_duration_us',
    help: 'Cumulative compute input duration in microseconds (does not include cached requests)',
    value: (s) => convertDurationToTritonUs(s.compute_input),
  },
  {
    name: 'nv_inference_compute_infer_duration_us',
    help: 'Cumulative compute inference duration in microseconds (does not include cached requests)',
    value: (s) => convertDurationToTritonUs(s.compute_infer),
  },
  {
    name: 'nv_inference_compute_output_duration_us',
    help: 'Cumulative inference compute output duration in microseconds (does not include cached requests)',
    value: (s) => convertDurationToTritonUs(s.compute_output),
  },
];

/**
 * Registers the nv_inference_* and nv_model_load_duration_secs families on `registry`. `source` is
 * called once per scrape (every family of one scrape reads the same snapshot) and returns one entry
 * per loaded model version; a version missing from it has no series, as in Triton after an unload.
 */
export interface InferenceMetricsOptions {
  /**
   * Register the nv_cache_* families (the server has a response cache). Triton prints them for models
   * with response_cache enabled; prom-client prints a registered family even with no series, so they
   * are left out where no cache can ever fill them.
   */
  cache?: boolean;
}

export function registerInferenceMetrics(registry: Registry, source: () => readonly InferenceStatsSnapshot[], options: InferenceMetricsOptions = {}): void {
  const read = memoizePerScrape(source);
  const samples = (value: (s: InferenceStatsSnapshot) => number) => () => read().map((s): Sample<ModelLabel> => ({ labels: labelsOf(s), value: value(s) }));
  const extraLabels = true;

  for (const counter of COUNTERS) {
    createComputedCounter<ModelLabel>({ registry, name: counter.name, help: counter.help, labelNames: ['model', 'version'], read: samples(counter.value), extraLabels });
  }
  createComputedCounter<FailureLabel>({
    registry,
    name: 'nv_inference_request_failure',
    help: 'Number of failed inference requests, all batch sizes',
    labelNames: ['model', 'reason', 'version'],
    read: () => read().flatMap(failureSamples),
    extraLabels,
  });
  createComputedGauge<ModelLabel>({
    registry,
    name: 'nv_inference_pending_request_count',
    help: 'Instantaneous number of pending requests awaiting execution per-model.',
    labelNames: ['model', 'version'],
    read: samples((s) => s.pending),
    extraLabels,
  });
  createComputedGauge<ModelLabel>({
    registry,
    name: 'nv_model_load_duration_secs',
    help: 'Model load time in seconds',
    labelNames: ['model', 'version'],
    read: () => read().flatMap((s) => (s.load_duration_secs === undefined ? [] : [{ labels: labelsOf(s), value: s.load_duration_secs }])),
    extraLabels,
  });
  // Triton creates these only for models with response_cache enabled (metric_model_reporter.cc).
  for (const family of options.cache ? CACHE_COUNTERS : []) {
    createComputedCounter<ModelLabel>({
      registry,
      name: family.name,
      help: family.help,
      labelNames: ['model', 'version'],
      extraLabels,
      read: () => read().flatMap((s) => (s.cache === undefined ? [] : [{ labels: labelsOf(s), value: family.value(s.cache) }])),
    });
  }
}

/**
 * Herd's own family beside Triton's: requests whose client went away, by where the cancellation found
 * them. Registered apart so the nv_* families stay exactly Triton's.
 */
export function registerCancelledMetrics(registry: Registry, source: () => readonly InferenceStatsSnapshot[]): void {
  createComputedCounter<ModelLabel | 'stage'>({
    registry,
    name: 'herd_inference_cancelled_total',
    help: 'Inference requests whose client went away (HTTP disconnect, gRPC cancel or deadline): dropped from the queue (stage="queued") or told while running (stage="running")',
    labelNames: ['model', 'stage', 'version'],
    read: () => source().flatMap(cancelledSamples),
    extraLabels: true,
  });
}

type CacheStats = NonNullable<InferenceStatsSnapshot['cache']>;

/** Names and HELP text of Triton core's metrics.cc. */
const CACHE_COUNTERS: readonly { name: string; help: string; value: (c: CacheStats) => number }[] = [
  { name: 'nv_cache_num_hits_per_model', help: 'Number of cache hits per model', value: (c) => c.hit.count },
  { name: 'nv_cache_hit_duration_per_model', help: 'Total cache hit duration per model, in microseconds', value: (c) => convertDurationToTritonUs(c.hit) },
  { name: 'nv_cache_num_misses_per_model', help: 'Number of cache misses per model', value: (c) => c.miss.count },
  { name: 'nv_cache_miss_duration_per_model', help: 'Total cache miss (insert+lookup) duration per model, in microseconds', value: (c) => convertDurationToTritonUs(c.miss) },
];

/**
 * Label keys in Triton's order (its label maps are sorted by key), so the text matches byte for byte;
 * metric_tags add `_<key>` labels, which sort before the lower-case ones.
 */
function labelsOf(s: InferenceStatsSnapshot, extra: Record<string, string> = {}): Record<ModelLabel, string> {
  const labels: Record<string, string> = { ...extra, model: s.model, version: s.version };
  for (const [key, value] of Object.entries(s.tags ?? {})) labels[`_${key}`] = value;
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as Record<ModelLabel, string>;
}

/** Both stages of a model version that reports cancellations, zeros included. */
function cancelledSamples(s: InferenceStatsSnapshot): Sample<ModelLabel | 'stage'>[] {
  const counts = s.cancelled;
  if (counts === undefined) return [];
  return (['queued', 'running'] as const).map((stage) => ({ labels: labelsOf(s, { stage }) as Record<ModelLabel | 'stage', string>, value: counts[stage] }));
}

/** Every reason gets a series, zeros included, as Triton creates all four when a model loads. */
function failureSamples(s: InferenceStatsSnapshot): Sample<FailureLabel>[] {
  const reasons = s.fail.reasons ?? {};
  const covered = FAILURE_REASONS.reduce((sum, reason) => sum + (reasons[reason] ?? 0), 0);
  const uncovered = Math.max(0, s.fail.count - covered);
  return FAILURE_REASONS.map((reason) => ({
    labels: labelsOf(s, { reason }) as Record<FailureLabel, string>,
    value: (reasons[reason] ?? 0) + (reason === 'OTHER' ? uncovered : 0),
  }));
}

/**
 * prom-client collects every metric of a scrape in one synchronous pass, so a value cached until
 * the next microtask is shared by exactly one scrape: one source() call, one consistent instant.
 */
function memoizePerScrape<T>(source: () => readonly T[]): () => readonly T[] {
  let current: readonly T[] | undefined;
  return () => {
    if (current === undefined) {
      current = source();
      queueMicrotask(() => {
        current = undefined;
      });
    }
    return current;
  };
}
