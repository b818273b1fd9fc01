// Entry file of an ONNX Runtime instance's worker thread: registers tsx, then loads the TypeScript worker.

// Plain JS because Node 20 starts a worker's entry with the default loader: a `.ts` entry fails with
// "Unknown file extension" even when the parent runs under `--import tsx` (tried: execArgv inherited or given).
import { register } from 'tsx/esm/api';

register();
await import('./onnx-worker-entry.ts');
