// Worker entry for the crash tests: the real ONNX worker, plus a fault chosen by the model name. An uncaught
// error or process.exit() ends the thread the way a fatal runtime error would.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

// `node --test` with no file list also runs every .mjs under test/; outside a worker there is nothing to do.
if (!isMainThread) {
  const fault = workerData.config.name;
  if (fault === 'crash_on_load') throw new Error('simulated crash while loading');
  // Registered before the real worker's listener, so the fault strikes before the run even starts.
  parentPort.on('message', (message) => {
    if (message.type !== 'run') return;
    if (fault === 'crash_on_run') throw new Error('simulated crash');
    if (fault === 'exit_on_run') process.exit(7);
  });
  register();
  await import('../../../src/serving/backends/onnxruntime/onnx-worker-entry.ts');
}
