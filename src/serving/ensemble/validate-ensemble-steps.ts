// Triton's ValidateEnsembleConfig (core/src/ensemble_scheduler/ensemble_utils.cc), run once every step's
// model is loaded: each mapping names a real input/output of the step's model, every required input is
// mapped exactly once, and a tensor seen by several models agrees on datatype and shape. Errors carry the
// offending field path as `param` so the caller can point at config.pbtxt's line and column.
import { invalidArg } from '../../core/errors.ts';
import type { ConfigDataType, ModelConfig } from '../model-config/model-config.ts';
import { indexPath, keyPath } from '../model-config/message-schema.ts';

interface TensorNode {
  model: string;
  type: ConfigDataType;
  dims: readonly number[];
  fullDims: readonly number[];
}

const node = (model: string, batching: boolean, type: ConfigDataType, dims: readonly number[]): TensorNode => ({ model, type, dims, fullDims: batching ? [-1, ...dims] : dims });

/** `stepConfig(i)` is the loaded config of step i's model (the version the step names, or the latest). */
export function validateEnsembleSteps(ensemble: ModelConfig, stepConfig: (index: number) => ModelConfig): void {
  const name = ensemble.name;
  const batching = ensemble.max_batch_size > 0;
  const tensors = new Map<string, TensorNode>();
  for (const input of ensemble.input) tensors.set(input.name, node(name, batching, input.data_type, input.reshape?.shape ?? input.dims));
  for (const output of ensemble.output) tensors.set(output.name, node(name, batching, output.data_type, output.reshape?.shape ?? output.dims));

  (ensemble.ensemble_scheduling?.step ?? []).forEach((step, i) => {
    const path = indexPath('ensemble_scheduling.step', i);
    const model = stepConfig(i);
    const stepName = step.model_name;
    if (model.max_batch_size !== 0 && model.max_batch_size < ensemble.max_batch_size) {
      throw invalidArg(
        `ensemble ${name} allows maximum batch size ${ensemble.max_batch_size}, but it contains model ${stepName} which only allows maximum batch size to be ${model.max_batch_size}`,
        { param: `${path}.model_name` },
      );
    }
    const stepBatching = model.max_batch_size > 0;
    const prefix = `in ensemble ${name}, `;
    for (const [input, tensorName] of Object.entries(step.input_map)) {
      const declared = model.input.find((m) => m.name === input);
      const at = keyPath(`${path}.input_map`, input);
      if (!declared) throw invalidArg(`${prefix}ensemble tensor ${tensorName} is mapping to non-existing input ${input} in model ${stepName}`, { param: at });
      merge(tensors, tensorName, node(stepName, stepBatching, declared.data_type, declared.dims), prefix, at);
    }
    for (const input of model.input) {
      if (step.input_map[input.name] === undefined && !input.optional) {
        throw invalidArg(`${prefix}input ${input.name} in model ${stepName} is not mapped to any ensemble tensors`, { param: `${path}.input_map` });
      }
    }
    for (const [output, tensorName] of Object.entries(step.output_map)) {
      const declared = model.output.find((m) => m.name === output);
      const at = keyPath(`${path}.output_map`, output);
      if (!declared) throw invalidArg(`${prefix}ensemble tensor ${tensorName} is mapped from non-existing output ${output} in model ${stepName}`, { param: at });
      merge(tensors, tensorName, node(stepName, stepBatching, declared.data_type, declared.dims), prefix, at);
    }
    const targets = Object.values(step.output_map);
    const repeated = targets.find((t, k) => targets.indexOf(t) !== k);
    if (repeated !== undefined) {
      throw invalidArg(`${prefix}multiple outputs in model ${stepName} are mapped to the same ensemble tensor ${repeated}`, { param: `${path}.output_map` });
    }
  });
}

/**
 * Triton's decoupled-workflow check (the end of ValidateEnsembleConfig): tensors carry the label of the
 * decoupled step they descend from (0 for the ensemble's inputs); a step fed by tensors of two labels is
 * refused. True when some step is decoupled, which makes the ensemble itself decoupled.
 */
export function checkDecoupledLineage(ensemble: ModelConfig, stepConfig: (index: number) => ModelConfig): boolean {
  const steps = ensemble.ensemble_scheduling?.step ?? [];
  const labels = new Map<string, number>();
  for (const input of ensemble.input) labels.set(input.name, 0);
  const visited = new Uint8Array(steps.length);
  let nextLabel = 0;
  for (let progress = true; progress; ) {
    progress = false;
    steps.forEach((step, i) => {
      const sources = Object.values(step.input_map);
      if (visited[i] === 1 || !sources.every((t) => labels.has(t))) return;
      visited[i] = 1;
      progress = true;
      const inputLabels = new Set(sources.map((t) => labels.get(t)));
      if (inputLabels.size > 1) {
        throw invalidArg(`in ensemble ${ensemble.name}, step of model '${step.model_name}' receives inputs originated from different decoupled models`, {
          param: `${indexPath('ensemble_scheduling.step', i)}.input_map`,
        });
      }
      const label = stepConfig(i).model_transaction_policy?.decoupled === true ? ++nextLabel : ([...inputLabels][0] ?? 0);
      for (const tensor of Object.values(step.output_map)) labels.set(tensor, label);
    });
  }
  return nextLabel > 0;
}

/** ValidateTensorConsistency: the first model to name a tensor fixes its datatype and shape. */
function merge(tensors: Map<string, TensorNode>, tensorName: string, seen: TensorNode, prefix: string, param: string): void {
  const known = tensors.get(tensorName);
  if (!known) {
    tensors.set(tensorName, seen);
    return;
  }
  const message = `${prefix}ensemble tensor ${tensorName}: `;
  if (known.type !== seen.type) {
    throw invalidArg(`${message}inconsistent data type: ${known.type} is inferred from model ${known.model} while ${seen.type} is inferred from model ${seen.model}`, { param });
  }
  if (!sameDims(known.dims, seen.dims) && !sameDims(known.fullDims, seen.fullDims)) {
    throw invalidArg(
      `${message}inconsistent shape: [${known.fullDims.join(',')}] is inferred from model ${known.model} while [${seen.fullDims.join(',')}] is inferred from model ${seen.model}`,
      { param },
    );
  }
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}
