// The server side of a measurement: /v2/models/{m}/stats read around each window, subtracted, and
// turned into per-request averages (queue, compute input/infer/output, overhead) as perf_analyzer does.
import type { ModelStatistics } from '../../client/kserve-types.ts';

/** Cumulative counters of one model (summed over the versions measured). */
export interface ServerCounters {
  inferenceCount: number;
  executionCount: number;
  successCount: number;
  successNs: number;
  failCount: number;
  queueCount: number;
  queueNs: number;
  computeInputCount: number;
  computeInputNs: number;
  computeInferCount: number;
  computeInferNs: number;
  computeOutputCount: number;
  computeOutputNs: number;
}

/** Per-request averages over a set of windows, in µs, plus the counts they come from. */
export interface ServerBreakdown {
  successCount: number;
  failCount: number;
  inferenceCount: number;
  executionCount: number;
  /** Average request duration inside the server (Triton's "success" time). */
  requestUs: number;
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
  /** requestUs minus queue and compute: time in the front end the breakdown does not name; never negative. */
  overheadUs: number;
}

const KEYS: readonly (keyof ServerCounters)[] = [
  'inferenceCount',
  'executionCount',
  'successCount',
  'successNs',
  'failCount',
  'queueCount',
  'queueNs',
  'computeInputCount',
  'computeInputNs',
  'computeInferCount',
  'computeInferNs',
  'computeOutputCount',
  'computeOutputNs',
];

export function createZeroCounters(): ServerCounters {
  const zero = {} as ServerCounters;
  for (const key of KEYS) zero[key] = 0;
  return zero;
}

/** Sums the entries of `model` (only `version` when given: the server may report several versions). */
export function convertStatisticsToCounters(stats: readonly ModelStatistics[], model: string, version?: string): ServerCounters {
  const total = createZeroCounters();
  for (const entry of stats) {
    if (entry.name !== model || (version !== undefined && version !== '' && entry.version !== version)) continue;
    const s = entry.inference_stats;
    total.inferenceCount += entry.inference_count;
    total.executionCount += entry.execution_count;
    total.successCount += s.success.count;
    total.successNs += s.success.ns;
    total.failCount += s.fail.count;
    total.queueCount += s.queue.count;
    total.queueNs += s.queue.ns;
    total.computeInputCount += s.compute_input.count;
    total.computeInputNs += s.compute_input.ns;
    total.computeInferCount += s.compute_infer.count;
    total.computeInferNs += s.compute_infer.ns;
    total.computeOutputCount += s.compute_output.count;
    total.computeOutputNs += s.compute_output.ns;
  }
  return total;
}

export function subtractCounters(after: ServerCounters, before: ServerCounters): ServerCounters {
  const delta = createZeroCounters();
  for (const key of KEYS) delta[key] = after[key] - before[key];
  return delta;
}

export function addCounters(a: ServerCounters, b: ServerCounters): ServerCounters {
  const sum = createZeroCounters();
  for (const key of KEYS) sum[key] = a[key] + b[key];
  return sum;
}

export function summarizeServerCounters(c: ServerCounters): ServerBreakdown {
  const avgUs = (ns: number, count: number) => (count > 0 ? ns / count / 1000 : 0);
  const queueUs = avgUs(c.queueNs, c.queueCount);
  const computeInputUs = avgUs(c.computeInputNs, c.computeInputCount);
  const computeInferUs = avgUs(c.computeInferNs, c.computeInferCount);
  const computeOutputUs = avgUs(c.computeOutputNs, c.computeOutputCount);
  const requestUs = avgUs(c.successNs, c.successCount);
  return {
    successCount: c.successCount,
    failCount: c.failCount,
    inferenceCount: c.inferenceCount,
    executionCount: c.executionCount,
    requestUs,
    queueUs,
    computeInputUs,
    computeInferUs,
    computeOutputUs,
    overheadUs: Math.max(0, requestUs - queueUs - computeInputUs - computeInferUs - computeOutputUs),
  };
}
