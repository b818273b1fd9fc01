// Where an instance's session lives: in a worker thread of its own (the default, onnx-worker-host.ts) or
// on the main thread (execution_thread "main", onnx-main-thread-host.ts). Both take the same runs.
import type { SessionBatchResult, SessionRun } from './onnx-session-runner.ts';

export interface HostedRun extends SessionRun {
  /** The numeric input buffers are the run's own (freshly concatenated): a worker may transfer them uncopied. */
  ownsInputs: boolean;
}

export interface OnnxSessionHost {
  /** Where the session runs (diagnostics and tests; execution_thread "auto" picks one at load). */
  readonly thread: 'main' | 'worker';
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
