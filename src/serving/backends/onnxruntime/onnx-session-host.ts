// Where an instance's session lives: in a worker thread of its own (onnx-worker-host.ts), on the main thread
// (onnx-main-thread-host.ts), or both, split by batch size (onnx-split-host.ts). All take the same runs.
import type { SessionBatchResult, SessionRun } from './onnx-session-runner.ts';

export interface HostedRun extends SessionRun {
  /** The numeric input buffers are the run's own (freshly concatenated): a worker may transfer them uncopied. */
  ownsInputs: boolean;
  /** Rows along the batch dim, summed over the requests run together (what a split host routes by). */
  batchSize: number;
}

/** 'split': small batches on the main thread, large ones in a worker. */
export type ExecutionSide = 'main' | 'worker' | 'split';

export interface OnnxSessionHost {
  /** Where the session runs (diagnostics and tests; execution_thread "auto" picks at load). */
  readonly thread: ExecutionSide;
  /** The ONNX file's input names, read when the session was opened. */
  readonly modelInputs: readonly string[];
  /** Sessions reopened after a crash, and attempts that failed (diagnostics; 0 on the main thread). */
  readonly restartCount: number;
  readonly failedRestartCount: number;
  /** One result per run, in order. Rejects only when the call as a whole fails (crash, shutdown). */
  runBatch(runs: readonly HostedRun[]): Promise<SessionBatchResult>;
  /** Releases the session. Callers first let running batches finish. */
  close(): Promise<void>;
}
