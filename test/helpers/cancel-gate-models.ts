// In-process JS models for cancellation tests: each records its executions, holds `block*` requests on a gate
// the test opens, and waits in `watch*` requests until request.signal aborts. The models and the test share one
// state object on globalThis (the models are loaded by Herd in the same process), named per test file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CancelGateState {
  executions: string[];
  gates: Map<string, () => void>;
  sawAbort: string[];
}

/** A fresh state under `globalThis[globalName]`, for models written with the same name. */
export function createCancelGateState(globalName: string): CancelGateState {
  const state: CancelGateState = { executions: [], gates: new Map(), sawAbort: [] };
  (globalThis as Record<string, unknown>)[globalName] = state;
  return state;
}

function modelSource(globalName: string): string {
  return `
const state = globalThis.${globalName};
export default class {
  initialize(args) { this.name = args.model_name; this.herd = args.herd; }
  async execute(requests) {
    const out = [];
    for (const r of requests) {
      const key = this.name + ':' + r.id;
      state.executions.push(key);
      if (r.id.startsWith('block')) await new Promise((open) => state.gates.set(key, open));
      if (r.id.startsWith('watch')) {
        await new Promise((done) => (r.signal.aborted ? done() : r.signal.addEventListener('abort', done, { once: true })));
        state.sawAbort.push(key);
      }
      out.push({ outputs: [this.herd.createTensor('OUT', 'INT32', [1], [1])] });
    }
    return out;
  }
}
`;
}

/** config.pbtxt of a one-instance INT32 IN → OUT js model, with optional scheduling lines. */
export function cancelGateConfig(name: string, batching = ''): string {
  return (
    `name: "${name}"\nbackend: "js"\nmax_batch_size: 0\n${batching}instance_group [ { kind: KIND_CPU count: 1 } ]\n` +
    'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]\noutput [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n'
  );
}

/** Writes each model (name → config.pbtxt) with the gate model's source into `dir`. */
export function writeCancelGateModels(dir: string, globalName: string, configs: Readonly<Record<string, string>>): void {
  for (const [name, config] of Object.entries(configs)) {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    writeFileSync(join(dir, name, 'config.pbtxt'), config);
    writeFileSync(join(dir, name, '1', 'model.mjs'), modelSource(globalName));
  }
}
