// Small model repositories for ensemble tests: JS models written into a temp folder, plus ensembles over them.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FixtureModel {
  config: string;
  model?: string;
}

export function writeRepository(models: Record<string, FixtureModel>): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-ensemble-'));
  for (const [name, m] of Object.entries(models)) {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    writeFileSync(join(dir, name, 'config.pbtxt'), m.config);
    if (m.model) writeFileSync(join(dir, name, '1', 'model.mjs'), m.model);
  }
  return dir;
}

/** A JS model `name` with INT32 IN -> INT32 OUT computing `expr` of each element `x`. */
export function int32Model(name: string, expr: string, options: { extraInput?: string; wait?: string } = {}): FixtureModel {
  const extra = options.extraInput ? `, { name: "${options.extraInput}" data_type: TYPE_INT32 dims: [ -1 ] }` : '';
  return {
    config: `name: "${name}"\nbackend: "js"\nmax_batch_size: 0\ninput [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] }${extra} ]\noutput [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]\n`,
    model: `export default {
  initialize(args) { this.herd = args.herd; },
  async execute(requests) {
    ${options.wait ?? ''}
    return requests.map((r) => {
      const x = r.input('IN');
      const y = ${options.extraInput ? `r.input('${options.extraInput}').data` : 'null'};
      if (x.data[0] === -999) return { error: this.herd.createError('INVALID_ARG', 'the model refuses -999') };
      const out = Int32Array.from(x.data, (x, i) => ${expr});
      return { outputs: [this.herd.createTensor('OUT', 'INT32', x.shape, out)] };
    });
  },
};
`,
  };
}

/** Two models that each wait until the other has started: they only finish when run concurrently. */
export const BARRIER = `
    const g = globalThis.__herdBarrier ??= { arrived: 0, waiters: [] };
    g.arrived += 1;
    if (g.arrived % 2 === 0) { for (const w of g.waiters.splice(0)) w(); }
    else await new Promise((resolve, reject) => { g.waiters.push(resolve); setTimeout(() => reject(new Error('the other step never started: steps ran one after the other')), 5000).unref(); });
`;

export const DIAMOND_ENSEMBLE = `name: "diamond"
platform: "ensemble"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling {
  step [
    { model_name: "double" model_version: -1 input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "doubled" } },
    { model_name: "add_one" model_version: 1 input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "plus_one" } },
    { model_name: "sum" model_version: -1 input_map [ { key: "IN" value: "doubled" }, { key: "B" value: "plus_one" } ] output_map { key: "OUT" value: "Y" } }
  ]
}
`;

export function diamondModels(): Record<string, FixtureModel> {
  return {
    double: int32Model('double', 'x * 2', { wait: BARRIER }),
    add_one: int32Model('add_one', 'x + 1', { wait: BARRIER }),
    sum: int32Model('sum', 'x + y[i]', { extraInput: 'B' }),
    diamond: { config: DIAMOND_ENSEMBLE },
  };
}
