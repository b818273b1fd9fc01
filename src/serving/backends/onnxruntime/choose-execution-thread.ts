// execution_thread "auto": decides at load whether an instance's session may run on the event loop thread.
// onnxruntime-node's session.run computes synchronously on the calling thread, so the main thread is only
// right for models whose largest run costs less than the worker hop it saves: measured on 2 busy cores, a
// postMessage round trip adds ~150 µs of latency and ~12% of the main thread's time at load, while add_sub
// runs in ~20-50 µs. The decision rests on a timed run of the largest batch the scheduler may send.
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { mapConfigTypeToDataType } from '../../../core/datatype.ts';
import { allocateTensorData, elementCount, type Tensor } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../repository/model-config.ts';
import { OnnxMainThreadHost } from './onnx-main-thread-host.ts';
import type { HostedRun } from './onnx-session-host.ts';
import type { OnnxWorkerData } from './onnx-worker-protocol.ts';

/**
 * A run of the largest batch must take at most this (CPU time, median of the probe runs) to stay on the main
 * thread: a stall no longer than the latency one worker round trip adds. Measured on 2 busy cores through
 * this probe: add_sub at batch 8 in 65-90 µs, Triton's `simple` in 110-150 µs (my_model, 1.5 MB, is not probed).
 */
export const AUTO_MAIN_THREAD_MAX_RUN_US = 200;
/**
 * Larger files go to a worker unprobed: opening a session blocks the thread that opens it (a model loaded at
 * run time would stall serving), and megabytes of weights mean far more than 100 µs of compute per batch.
 */
export const AUTO_MAIN_THREAD_MAX_FILE_BYTES = 1 << 20;
// The first runs are slow (the session's allocations, and the JS around session.run not yet optimised,
// whose compilation runs on V8's background threads and counts as this process's CPU): they are not timed.
const PROBE_WARMUP_RUNS = 20;
const PROBE_TIMED_RUNS = 21;

/**
 * Synthetic inputs of the largest batch (max_batch_size, or the config dims for a non-batching model), or
 * undefined when the shape is not fixed (-1 dims beyond the batch dim, reshape) or the datatype is BYTES:
 * then nothing can tell how costly a run is and the instance goes to a worker.
 */
export function createProbeRun(config: ModelConfig, modelInputs: readonly string[]): HostedRun | undefined {
  const inputs: Tensor[] = [];
  const configured = new Set((config.input ?? []).map((i) => i.name));
  // Inputs the server feeds itself (sequence controls, states) are not modelled by a probe.
  if (modelInputs.some((name) => !configured.has(name))) return undefined;
  const batch = config.max_batch_size > 0 ? [config.max_batch_size] : [];
  for (const input of config.input ?? []) {
    const datatype = mapConfigTypeToDataType(input.data_type);
    if (!datatype || datatype === 'BYTES' || input.reshape || input.dims.some((d) => d < 0)) return undefined;
    const shape = [...batch, ...input.dims];
    inputs.push({ name: input.name, datatype, shape, data: allocateTensorData(datatype, elementCount(shape)) });
  }
  if (inputs.length === 0) return undefined;
  return { inputs, outputNames: (config.output ?? []).map((o) => o.name), ownsInputs: true };
}

/**
 * Median CPU µs of the timed runs. CPU time rather than wall time: on a busy machine a thread waits for
 * a core, and wall time would send a fast model to a worker (measured: the fastest of ten wall-clock runs
 * of Triton's `simple` at batch 8 took 83 µs once and 2.7 ms the next time, while another benchmark ran). session.run computes on this thread
 * (intra-op threads add their time too, erring towards a worker) and the rest of the process is mostly
 * idle while a model loads; the median drops runs that met a burst of background work.
 */
async function timeRunCpu(host: OnnxMainThreadHost, run: HostedRun, maxRunUs: number): Promise<number | undefined> {
  const timed: number[] = [];
  for (let i = 0; i < PROBE_WARMUP_RUNS + PROBE_TIMED_RUNS; i++) {
    const start = process.cpuUsage();
    const batch = await host.runBatch([run]);
    const used = process.cpuUsage(start);
    const us = used.user + used.system;
    if (!batch.results.every((r) => r.ok)) return undefined;
    // A clearly slow model stops the probe early (every probe run stalls the event loop too); not on the
    // first run, which pays the session's one-off costs.
    if (i > 0 && us > 20 * maxRunUs) return us;
    if (i >= PROBE_WARMUP_RUNS) timed.push(us);
  }
  timed.sort((a, b) => a - b);
  return timed[timed.length >> 1];
}

export interface AutoThreadChoice {
  /** The opened main-thread host when the model qualifies; undefined: use a worker. */
  host: OnnxMainThreadHost | undefined;
  /** Why, for the load log and tests. */
  reason: string;
}

/** Opens the session on the main thread only to probe it; closes it again unless the model qualifies. */
export async function chooseAutoExecutionThread(data: OnnxWorkerData, maxRunUs = AUTO_MAIN_THREAD_MAX_RUN_US): Promise<AutoThreadChoice> {
  // A model shipped as a directory (`model.onnx/model.onnx`) keeps its weights in external files beside it.
  if (basename(dirname(data.modelFile)).endsWith('.onnx')) return { host: undefined, reason: 'weights in external files' };
  const size = (await stat(data.modelFile)).size;
  if (size > AUTO_MAIN_THREAD_MAX_FILE_BYTES) return { host: undefined, reason: `model file of ${size} bytes` };
  const host = await OnnxMainThreadHost.open(data);
  let keep = false;
  try {
    const run = createProbeRun(data.config, host.modelInputs);
    if (!run) return { host: undefined, reason: 'inputs of variable shape or BYTES' };
    const us = await timeRunCpu(host, run, maxRunUs);
    if (us === undefined) return { host: undefined, reason: 'the probe run failed' };
    keep = us <= maxRunUs;
    return { host: keep ? host : undefined, reason: `largest batch runs in ${Math.round(us)} µs of CPU` };
  } finally {
    if (!keep) await host.close();
  }
}
