// Loads a worker thread's main module from its bootstrap: the compiled `.js` when the bootstrap sits in dist/
// (npm start), else the TypeScript source through tsx (tests, development).
// Plain JS because Node 20 starts a worker's entry with the default loader: a `.ts` entry fails with
// "Unknown file extension" even when the parent runs under `--import tsx` (tried: execArgv inherited or given).
import { existsSync } from 'node:fs';

/** `name` is the module's file name without extension, beside the bootstrap at `bootstrapUrl`. */
export async function loadThreadEntry(bootstrapUrl, name) {
  const compiled = new URL(`./${name}.js`, bootstrapUrl);
  if (existsSync(compiled)) return import(compiled.href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(new URL(`./${name}.ts`, bootstrapUrl).href);
}
