// Worker entry for the crash tests: the real ONNX worker, plus a fault. An uncaught error or process.exit()
// ends the thread the way a fatal runtime error would. The fault is the model name, or, when the config has
// a `fault_file` parameter, that file's content read at each start (so a test can change it between restarts).
import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

/** An INT32 input whose first element is this makes `crash_on_poison` crash; other runs go through. */
const POISON = -999;

// `node --test` with no file list also runs every .mjs under test/; outside a worker there is nothing to do.
if (!isMainThread) {
  const faultFile = workerData.config.parameters?.fault_file?.string_value;
  const fault = faultFile ? readFileSync(faultFile, 'utf8').trim() : workerData.config.name;
  if (fault === 'crash_on_load') throw new Error('simulated crash while loading');
  // Registered before the real worker's listener, so the fault strikes before the run even starts.
  parentPort.on('message', (message) => {
    if (message.type !== 'run') return;
    if (fault === 'crash_on_run') throw new Error('simulated crash');
    if (fault === 'exit_on_run') process.exit(7);
    if (fault === 'crash_on_poison' && message.runs.some((run) => run.inputs[0]?.data?.[0] === POISON)) {
      throw new Error('simulated crash on a poisoned input');
    }
  });
  register();
  await import('../../../src/serving/backends/onnxruntime/onnx-worker-entry.ts');
}
