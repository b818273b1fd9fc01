// Entry file of an ONNX Runtime instance's worker thread: loads the compiled worker when this file
// sits in dist/ (npm start), else registers tsx and loads the TypeScript one (tests, development).

// Plain JS because Node 20 starts a worker's entry with the default loader: a `.ts` entry fails with
// "Unknown file extension" even when the parent runs under `--import tsx` (tried: execArgv inherited or given).
import { existsSync } from 'node:fs';

const compiled = new URL('./onnx-worker-entry.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./onnx-worker-entry.ts');
}
