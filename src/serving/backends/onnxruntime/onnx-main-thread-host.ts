// execution_thread "main": the session runs on the event loop thread, with no thread hop and no copy of the
// inputs (ORT reads the callers' arrays in place). Worth it only for models that compute in microseconds.
import type { OnnxSessionRunner, SessionBatchResult } from './onnx-session-runner.ts';
import { openOnnxSessionRunner } from './onnx-session-runner.ts';
import type { HostedRun, OnnxSessionHost } from './onnx-session-host.ts';
import type { OnnxWorkerData } from './onnx-worker-protocol.ts';

/**
 * onnxruntime-node 1.30's session.run() computes synchronously on the calling thread (its promise only
 * defers with setImmediate), so every run here blocks the event loop for its whole duration, and several
 * instances of one model add no parallelism. A crash here is the process's crash: nothing to restart.
 * It saves the worker hop; a model slower than the hop stalls every other request meanwhile: opt-in
 * ("main"), or chosen by "auto" for runs measured at load to be short: all of a model's, or its small
 * batches beside a worker for the large ones (docs/decisions/onnx-execution-thread.md).
 */
export class OnnxMainThreadHost implements OnnxSessionHost {
  readonly thread = 'main';
  readonly restartCount = 0;
  readonly failedRestartCount = 0;
  readonly #runner: OnnxSessionRunner;

  private constructor(runner: OnnxSessionRunner) {
    this.#runner = runner;
  }

  static async open(data: OnnxWorkerData): Promise<OnnxMainThreadHost> {
    return new OnnxMainThreadHost(await openOnnxSessionRunner(data));
  }

  get modelInputs(): readonly string[] {
    return this.#runner.modelInputs;
  }

  runBatch(runs: readonly HostedRun[]): Promise<SessionBatchResult> {
    return this.#runner.runBatch(runs);
  }

  close(): Promise<void> {
    return this.#runner.release();
  }
}
