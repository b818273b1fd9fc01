// The `execution_thread` model parameter: where an instance's session runs, "auto" (default), "worker" or "main".
import { invalidArg } from '../../../core/errors.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';

export type ExecutionThread = 'auto' | 'worker' | 'main';

/** Throws INVALID_ARG for any other value (no silent fallback to the default). */
export function parseExecutionThread(config: ModelConfig): ExecutionThread {
  const raw = config.parameters?.['execution_thread']?.string_value;
  if (raw === undefined) return 'auto';
  const value = raw.trim();
  if (value === 'auto' || value === 'worker' || value === 'main') return value;
  throw invalidArg(
    `model '${config.name}': parameter 'execution_thread' must be "auto" (the default: runs timed at load decide; batches ` +
      `that compute in microseconds stay on the main thread, larger ones go to a worker), "worker" (each instance's session ` +
      `runs in a thread of its own) or "main" (on the event loop thread, only for models that compute in microseconds), got '${raw}'`,
  );
}
