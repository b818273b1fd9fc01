// execution_thread "auto": decides at load where an instance's session runs. onnxruntime-node's session.run
// computes synchronously on the calling thread, so the main thread suits only runs shorter than the worker hop
// they save (docs/decisions/onnx-execution-thread.md). A model is probed at its largest batch; one too slow there
// is probed at a smaller batch, and if that one qualifies, batches up to it stay on the main thread and larger
// ones go to a worker (a split host).
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { mapConfigTypeToDataType } from '../../../core/datatype.ts';
import { allocateTensorData, elementCount, type Tensor } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import { OnnxMainThreadHost } from './onnx-main-thread-host.ts';
import type { HostedRun } from './onnx-session-host.ts';
import type { OnnxWorkerData } from './onnx-worker-protocol.ts';

/**
 * A run must take at most this (as timeRun measures it) to stay on the main thread: about what the worker
 * hop costs (docs/decisions/onnx-execution-thread.md).
 */
export const AUTO_MAIN_THREAD_MAX_RUN_US = 500;
/**
 * Larger files go to a worker unprobed: opening a session blocks the thread that opens it (a model loaded at
 * run time would stall serving), and tens of megabytes of weights compute too long for the event loop even
 * at batch 1 (docs/decisions/onnx-execution-thread.md).
 */
export const AUTO_MAIN_THREAD_MAX_FILE_BYTES = 8 << 20;
// The first runs are slow (the session's allocations, and the JS around session.run not yet optimised,
// whose compilation runs on V8's background threads and counts as this process's CPU): they are not timed.
const PROBE_WARMUP_RUNS = 20;
const PROBE_TIMED_RUNS = 21;
// Later probes of the same session at a smaller batch: the JS is warm; ORT plans the new shape in a run or two.
const REPROBE_WARMUP_RUNS = 3;
const REPROBE_TIMED_RUNS = 11;
// Timed runs all this far over the limit settle the answer without the rest of them.
const CLEARLY_OVER_RUNS = 5;
const CLEARLY_OVER_FACTOR = 1.5;

/**
 * Synthetic inputs of a batch of `batchSize` (default the largest: max_batch_size, or the config dims for a
 * non-batching model), or undefined when the shape is not fixed (-1 dims beyond the batch dim, reshape) or the
 * datatype is BYTES: then nothing can tell how costly a run is and the instance goes to a worker.
 */
export function createProbeRun(config: ModelConfig, modelInputs: readonly string[], batchSize = config.max_batch_size): HostedRun | undefined {
  const inputs: Tensor[] = [];
  const configured = new Set((config.input ?? []).map((i) => i.name));
  // Inputs the server feeds itself (sequence controls, states) are not modelled by a probe.
  if (modelInputs.some((name) => !configured.has(name))) return undefined;
  const batch = config.max_batch_size > 0 ? [batchSize] : [];
  for (const input of config.input ?? []) {
    const datatype = mapConfigTypeToDataType(input.data_type);
    if (!datatype || datatype === 'BYTES' || input.reshape || input.dims.some((d) => d < 0)) return undefined;
    const shape = [...batch, ...input.dims];
    inputs.push({ name: input.name, datatype, shape, data: allocateTensorData(datatype, elementCount(shape)) });
  }
  if (inputs.length === 0) return undefined;
  return { inputs, outputNames: (config.output ?? []).map((o) => o.name), ownsInputs: true, batchSize: batch[0] ?? 1 };
}

/** What a probe run of `batchSize` samples is taken to cost, µs, instead of timing it: tests fix the outcome with it. */
export type ProbeCost = (batchSize: number) => number;

/**
 * What one run costs the event loop, in µs: the lower quartile over the timed runs of each run's smaller
 * reading, wall time or the process's CPU time. Both are upper bounds of the probing thread's own time (Node 20
 * has no per-thread clock finer than 10 ms ticks) and each fails differently: wall time counts waiting for a
 * core, CPU time counts this process's other threads (a GC, a worker starting beside the probe); see
 * docs/decisions/onnx-execution-thread.md. With several intra-op threads, wall time is also the stall itself.
 * The lower quartile ignores up to three quarters of disturbed runs.
 */
async function timeRun(
  host: OnnxMainThreadHost,
  run: HostedRun,
  maxRunUs: number,
  cost: ProbeCost | undefined,
  warmup = PROBE_WARMUP_RUNS,
  runs = PROBE_TIMED_RUNS,
): Promise<number | undefined> {
  const timed: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const startCpu = process.cpuUsage();
    const start = performance.now();
    const batch = await host.runBatch([run]);
    const wallUs = (performance.now() - start) * 1000;
    const used = process.cpuUsage(startCpu);
    const us = cost ? cost(run.batchSize) : Math.min(wallUs, used.user + used.system);
    if (!batch.results.every((r) => r.ok)) return undefined;
    // A clearly slow model stops the probe early (every probe run stalls the event loop too); not on the
    // first run, which pays the session's one-off costs.
    if (i > 0 && us > 20 * maxRunUs) return us;
    if (i >= warmup) timed.push(us);
    if (timed.length === CLEARLY_OVER_RUNS && timed.every((t) => t > CLEARLY_OVER_FACTOR * maxRunUs)) break;
  }
  timed.sort((a, b) => a - b);
  return timed[timed.length >> 2];
}

export interface AutoThreadChoice {
  /** The opened main-thread host when the model qualifies (all its batches, or up to mainMaxBatch); undefined: a worker only. */
  host: OnnxMainThreadHost | undefined;
  /** Set when only batches of up to this many samples qualify: larger ones need a worker beside the host. */
  mainMaxBatch?: number;
  /** Why, for the load log and tests. */
  reason: string;
}

/**
 * The largest batch that runs within the limit, guessed from the full batch's time as if cost were linear in
 * the batch, aiming at 90% of the limit (a fixed cost per run makes small batches dearer per sample than the
 * guess), then timed and shrunk the same way until a timed run qualifies. A few tries: every probe run stalls
 * the event loop too.
 */
async function findMainThreadBatch(
  host: OnnxMainThreadHost,
  config: ModelConfig,
  largestUs: number,
  maxRunUs: number,
  cost: ProbeCost | undefined,
): Promise<{ batch: number; us: number } | undefined> {
  const aim = 0.9 * maxRunUs;
  let batch = Math.floor((config.max_batch_size * aim) / largestUs);
  for (let tries = 0; tries < 4 && batch >= 1; tries++) {
    const run = createProbeRun(config, host.modelInputs, batch);
    const us = run && (await timeRun(host, run, maxRunUs, cost, REPROBE_WARMUP_RUNS, REPROBE_TIMED_RUNS));
    if (us === undefined) return undefined;
    if (us <= maxRunUs) return { batch, us };
    // After a second miss, at least halve: timings on a shared machine can swing 2x between probes.
    batch = Math.min(batch - 1, Math.floor((batch * aim) / us), tries >= 1 ? batch >> 1 : batch);
  }
  return undefined;
}

/** Opens the session on the main thread only to probe it; closes it again unless the model qualifies. */
export async function chooseAutoExecutionThread(data: OnnxWorkerData, maxRunUs = AUTO_MAIN_THREAD_MAX_RUN_US, cost?: ProbeCost): Promise<AutoThreadChoice> {
  // A model shipped as a directory (`model.onnx/model.onnx`) keeps its weights in external files beside it.
  if (basename(dirname(data.modelFile)).endsWith('.onnx')) return { host: undefined, reason: 'weights in external files' };
  const size = (await stat(data.modelFile)).size;
  if (size > AUTO_MAIN_THREAD_MAX_FILE_BYTES) return { host: undefined, reason: `model file of ${size} bytes` };
  const host = await OnnxMainThreadHost.open(data);
  let keep = false;
  try {
    const run = createProbeRun(data.config, host.modelInputs);
    if (!run) return { host: undefined, reason: 'inputs of variable shape or BYTES' };
    const us = await timeRun(host, run, maxRunUs, cost);
    if (us === undefined) return { host: undefined, reason: 'the probe run failed' };
    const largest = `largest batch runs in ${Math.round(us)} µs`;
    if (us <= maxRunUs) {
      keep = true;
      return { host, reason: largest };
    }
    const split = data.config.max_batch_size > 1 ? await findMainThreadBatch(host, data.config, us, maxRunUs, cost) : undefined;
    if (!split) return { host: undefined, reason: largest };
    keep = true;
    return { host, mainMaxBatch: split.batch, reason: `${largest}; batches of up to ${split.batch} run in ${Math.round(split.us)} µs and stay on the main thread` };
  } finally {
    if (!keep) await host.close();
  }
}
