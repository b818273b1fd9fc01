// execution_thread "auto" for a model too slow at its largest batch for the event loop but quick at small ones:
// batches of up to mainMaxBatch samples run on the main thread, larger ones in the instance's worker.
import type { OnnxMainThreadHost } from './onnx-main-thread-host.ts';
import type { SessionBatchResult } from './onnx-session-runner.ts';
import type { HostedRun, OnnxSessionHost } from './onnx-session-host.ts';
import type { OnnxWorkerHost } from './onnx-worker-host.ts';

/** Samples in a batch: the planner's batch sizes of its runs. */
export function countBatchSamples(runs: readonly HostedRun[]): number {
  let samples = 0;
  for (const run of runs) samples += run.batchSize;
  return samples;
}

/**
 * Two sessions of one instance, one on each side; the scheduler still gives the instance one batch at a
 * time, so they never run at once. Under load most batches are small, and those skip the hop; the rare
 * large one does not stall the event loop (docs/decisions/onnx-execution-thread.md).
 */
export class OnnxSplitHost implements OnnxSessionHost {
  readonly thread = 'split';
  readonly #main: OnnxMainThreadHost;
  readonly #worker: OnnxWorkerHost;
  readonly #mainMaxBatch: number;

  constructor(main: OnnxMainThreadHost, worker: OnnxWorkerHost, mainMaxBatch: number) {
    this.#main = main;
    this.#worker = worker;
    this.#mainMaxBatch = mainMaxBatch;
  }

  get modelInputs(): readonly string[] {
    return this.#main.modelInputs;
  }

  get restartCount(): number {
    return this.#worker.restartCount;
  }

  get failedRestartCount(): number {
    return this.#worker.failedRestartCount;
  }

  runBatch(runs: readonly HostedRun[]): Promise<SessionBatchResult> {
    return (countBatchSamples(runs) <= this.#mainMaxBatch ? this.#main : this.#worker).runBatch(runs);
  }

  async close(): Promise<void> {
    await Promise.all([this.#main.close(), this.#worker.close()]);
  }
}
