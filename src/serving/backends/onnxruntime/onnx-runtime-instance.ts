// One loaded instance of an ONNX model, as the scheduler sees it: a Backend that ships each batch to the
// worker thread owning the instance's InferenceSession (onnx-worker-entry.ts) and maps the replies back.
import { internal, unavailable } from '../../../core/errors.ts';
import type { ModelConfig } from '../../repository/model-config.ts';
import type { Backend, ExecutionMarks, InferenceRequest, InferenceResult } from '../backend.ts';
import { convertTensorToWire, convertWireToTensor } from './convert-wire-tensor.ts';
import type { OnnxWorkerClient } from './onnx-worker-client.ts';
import { convertWireToError, type WireRequest, type WireResult } from './onnx-worker-protocol.ts';

const clamp = (value: bigint, low: bigint, high: bigint) => (value < low ? low : value > high ? high : value);

function convertWireToResult(result: WireResult): InferenceResult {
  if (!result.ok) return { ok: false, error: convertWireToError(result.error) };
  return { ok: true, outputs: result.outputs.map(convertWireToTensor) };
}

/**
 * Why a thread per instance: onnxruntime-node 1.30's session.run() computes on the calling JS thread (its
 * promise only defers with setImmediate), so on the main thread every run blocks the event loop and
 * instances add no parallelism. Measured on 2 cores, mlp_2048 batch 64: 2 instances on the main thread
 * 6.7k samples/s with event-loop p99 19 ms; one worker each 12k samples/s, p99 2 ms.
 */
export class OnnxRuntimeInstance implements Backend {
  readonly #config: ModelConfig;
  readonly #worker: OnnxWorkerClient;
  readonly #pending = new Set<Promise<unknown>>();
  #released = false;

  constructor(config: ModelConfig, worker: OnnxWorkerClient) {
    this.#config = config;
    this.#worker = worker;
  }

  async execute(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<InferenceResult[]> {
    if (this.#released) {
      throw unavailable(`model '${this.#config.name}' instance has been unloaded`);
    }
    if (requests.length === 0) return [];
    const start = process.hrtime.bigint();
    // Copy each input once into a buffer of its own and transfer that: the caller keeps its arrays.
    const transfer = new Set<ArrayBuffer>();
    const wire: WireRequest[] = requests.map((r) => ({
      inputs: r.inputs.map((t) => convertTensorToWire(t, 'copy', transfer)),
      requestedOutputs: r.requestedOutputs,
    }));
    const run = this.#worker.run(wire, [...transfer]);
    this.#pending.add(run);
    try {
      const reply = await run;
      if (reply.results.length !== requests.length) {
        throw internal(`model '${this.#config.name}': worker returned ${reply.results.length} results for ${requests.length} requests`);
      }
      const results = reply.results.map(convertWireToResult);
      if (marks) {
        // Worker readings are on the same monotonic clock; clamping only guards the statistics' arithmetic.
        const end = process.hrtime.bigint();
        marks.inputEnd = clamp(reply.inputEnd, start, end);
        marks.inferEnd = clamp(reply.inferEnd, marks.inputEnd, end);
      }
      return results;
    } finally {
      this.#pending.delete(run);
    }
  }

  async unload(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    // Let running batches finish: releasing a session under a running call is undefined behaviour in ORT.
    await Promise.allSettled(this.#pending);
    await this.#worker.close();
  }
}
