// Triton's model configuration rules (core/src/model_config_utils.cc: ValidateModelConfig,
// ValidateInstanceGroup, ValidateModelIOConfig, ValidateEnsembleSchedulingConfig) with Triton's wording,
// plus the few rules Herd adds (marked). Errors are INVALID_ARG whose `param` is the offending field path.
import { HerdError, internal, invalidArg } from '../../core/errors.ts';
import type { ModelConfig, ModelInput, ModelOutput, SequenceControlKind } from './model-config.ts';
import { indexPath, keyPath } from './message-schema.ts';

export interface ValidateModelConfigOptions {
  /** The model's folder name; the config's `name` must equal it (Triton's repository rule). */
  expectedName?: string;
  /** Names the config's source at the start of messages: `<file>: <problem> (<field path>)`. */
  file?: string;
  /** Also check inputs/outputs (Triton's ValidateModelIOConfig); default true. */
  validateIO?: boolean;
  /** Whether a model exists in the repository; lets ensemble validation check each step's model. */
  modelExists?: (name: string) => boolean;
}

/** The checks Triton runs on a normalized config before and after backend auto-complete; throws the first problem. */
export function validateModelConfig(config: ModelConfig, options: ValidateModelConfigOptions = {}): void {
  withSource(options.file, () => {
    checkModel(config, options);
    checkInstanceGroups(config);
    if (options.validateIO !== false) checkModelIO(config);
  });
}

/** Inputs, outputs and batch inputs/outputs only: what Triton checks once a backend has auto-completed them. */
export function validateModelIOConfig(config: ModelConfig, options: Pick<ValidateModelConfigOptions, 'file'> = {}): void {
  withSource(options.file, () => checkModelIO(config));
}

/**
 * What a config allows but probably does not mean, one line each, for the load log. Triton accepts
 * dynamic_batching on a model with max_batch_size 0 and runs its batcher with batches of one
 * (core dynamic_batch_scheduler.cc: max_batch_size_ = max(1, max_batch_size)); so does Herd, and says so.
 */
export function listModelConfigWarnings(config: ModelConfig): string[] {
  const warnings: string[] = [];
  if (config.dynamic_batching && config.max_batch_size === 0) {
    warnings.push(
      `model '${config.name}': dynamic_batching with max_batch_size 0 cannot batch; requests are queued (priorities, queue policies and timeouts apply) and run one at a time. Set max_batch_size > 0 to batch.`,
    );
  }
  return warnings;
}

function withSource(file: string | undefined, check: () => void): void {
  try {
    check();
  } catch (err) {
    if (!(err instanceof HerdError) || file === undefined) throw err;
    const path = err.param ? ` (${err.param})` : '';
    throw new HerdError(err.code, `${file}: ${err.message}${path}`, { param: err.param, cause: err });
  }
}

function reject(message: string, path: string): never {
  throw invalidArg(message, { param: path });
}

/** GetBackendType / GetBackendTypeFromPlatform: Triton only cross-checks the backends it knows. */
const BACKEND_OF_BACKEND: Record<string, string> = { tensorflow: 'tf', tensorrt: 'trt', onnxruntime: 'ort', pytorch: 'pytorch' };
const BACKEND_OF_PLATFORM: Record<string, string> = {
  tensorflow_graphdef: 'tf',
  tensorflow_savedmodel: 'tf',
  tensorrt_plan: 'trt',
  onnxruntime_onnx: 'ort',
  pytorch_libtorch: 'pytorch',
  torch_aoti: 'torch_aoti',
};

function checkModel(config: ModelConfig, options: ValidateModelConfigOptions): void {
  const name = config.name;
  if (!name) reject("model configuration must specify 'name'", 'name');
  if (!config.backend && config.platform !== 'ensemble') reject(`unexpected platform type '${config.platform}' for ${name}`, 'platform');
  if (config.backend && config.platform === 'ensemble') {
    reject(`Ensemble model '${name}' must have platform type 'ensemble' and empty backend type`, 'backend');
  }
  const backendType = BACKEND_OF_BACKEND[config.backend];
  if (backendType !== undefined && backendType !== BACKEND_OF_PLATFORM[config.platform]) {
    reject(`unexpected 'platform' and 'backend' pair, got:${config.platform}, ${config.backend}`, 'platform');
  }
  if (config.max_batch_size < 0) reject(`'max_batch_size' must be non-negative value for ${name}`, 'max_batch_size');
  if (!config.version_policy) reject(`must specify 'version policy' for ${name}`, 'version_policy');
  checkDynamicBatching(config);
  if (config.sequence_batching) checkSequenceBatching(config);
  if (config.ensemble_scheduling) checkEnsemble(config, options.modelExists);
  else if (config.platform === 'ensemble') reject(`ensemble scheduling must be set for ensemble ${name} whose platform is ensemble`, 'ensemble_scheduling');
  if (config.model_transaction_policy?.decoupled && config.response_cache?.enable) {
    reject(`Response Cache does not currently support model ${name} with 'decoupled' transaction policy. Please disable the response cache.`, 'response_cache.enable');
  }
  config.model_metrics?.metric_control.forEach((control, i) => {
    const path = indexPath('model_metrics.metric_control', i);
    if (!control.metric_identifier) reject("metric control must specify 'metric_identifier'", path);
    if (!control.metric_identifier.family) reject("metric identifier must specify non-empty 'family'", `${path}.metric_identifier.family`);
    if (!control.histogram_options) reject("metric control must specify 'histogram_options'", path);
    if (control.histogram_options.buckets.length === 0) reject("histogram options must specify non-empty 'buckets'", `${path}.histogram_options.buckets`);
  });
  if (options.expectedName !== undefined && name !== options.expectedName) {
    reject(`unexpected directory name '${options.expectedName}' for model '${name}', directory name must equal model name`, 'name');
  }
}

function checkDynamicBatching(config: ModelConfig): void {
  const batching = config.dynamic_batching;
  if (!batching) return;
  const name = config.name;
  batching.preferred_batch_size.forEach((size, i) => {
    const path = indexPath('dynamic_batching.preferred_batch_size', i);
    if (size <= 0) reject(`dynamic batching preferred size must be positive for ${name}`, path);
    if (size > config.max_batch_size) reject(`dynamic batching preferred size must be <= max batch size for ${name}`, path);
  });
  const levels = batching.priority_levels;
  if (levels !== 0) {
    if (batching.default_priority_level === 0 || batching.default_priority_level > levels) {
      reject(`default priority level must be in range [1, ${levels}] for ${name}`, 'dynamic_batching.default_priority_level');
    }
    for (const level of Object.keys(batching.priority_queue_policy)) {
      if (Number(level) === 0 || Number(level) > levels) {
        reject(`priority queue policy must have priority level in range [1, ${levels}] for ${name}`, keyPath('dynamic_batching.priority_queue_policy', level));
      }
    }
  }
  if (batching.preserve_ordering) {
    if (levels > 1) reject(`Only one priority level is allowed when 'preserve_ordering' is true for ${name}`, 'dynamic_batching.priority_levels');
    const policies = [
      ['dynamic_batching.default_queue_policy', batching.default_queue_policy] as const,
      ...Object.entries(batching.priority_queue_policy).map(([k, p]) => [keyPath('dynamic_batching.priority_queue_policy', k), p] as const),
    ];
    for (const [path, policy] of policies) {
      if (policy && policy.default_timeout_microseconds !== 0 && policy.timeout_action === 'DELAY') {
        reject(`Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${name}`, `${path}.timeout_action`);
      }
    }
  }
}

const CORRID_TYPES = ['TYPE_UINT64', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_INT32', 'TYPE_STRING'];

/** GetBooleanSequenceControlProperties / GetTypedSequenceControlProperties, for every control kind at once. */
function checkSequenceBatching(config: ModelConfig): void {
  const batching = config.sequence_batching!;
  const name = config.name;
  if (config.response_cache?.enable) {
    reject(`Response Cache does not currently support model ${name} with sequence batching scheduler. Please disable the response cache.`, 'response_cache.enable');
  }
  const tensors = new Set<string>();
  const kinds = new Set<SequenceControlKind>();
  batching.control_input.forEach((input, i) => {
    const inputPath = indexPath('sequence_batching.control_input', i);
    if (!input.name) reject(`sequence batching control tensor must have a name for ${name}`, `${inputPath}.name`);
    if (tensors.has(input.name)) reject(`sequence batching control tensor '${input.name}' is specified for multiple control kinds for ${name}`, `${inputPath}.name`);
    tensors.add(input.name);
    input.control.forEach((control, j) => {
      const path = indexPath(`${inputPath}.control`, j);
      const kind = control.kind;
      if (kinds.has(kind)) reject(`sequence batching specifies multiple ${kind} tensors for ${name}`, `${path}.kind`);
      kinds.add(kind);
      const lists = (['int32_false_true', 'fp32_false_true', 'bool_false_true'] as const).filter((l) => control[l].length > 0);
      if (kind === 'CONTROL_SEQUENCE_CORRID') {
        if (lists.length > 0) {
          reject(`sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${name}`, `${path}.${lists[0]}`);
        }
        if (!CORRID_TYPES.includes(control.data_type)) {
          reject(
            `unexpected data type for control ${kind} for ${name}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`,
            `${path}.data_type`,
          );
        }
        return;
      }
      if (lists.length === 0) reject(`sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${name}`, path);
      if (lists.length > 1) reject(`sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${name}`, path);
      if (control[lists[0]].length !== 2) reject(`sequence batching control '${lists[0]}' must have exactly 2 entries for ${kind} for ${name}`, `${path}.${lists[0]}`);
    });
  });
  batching.oldest?.preferred_batch_size.forEach((size, i) => {
    const path = indexPath('sequence_batching.oldest.preferred_batch_size', i);
    if (size <= 0) reject(`sequence batching preferred batch size must be positive for ${name}`, path);
    if (size > config.max_batch_size) reject(`sequence batching preferred batch size must be <= max batch size for ${name}`, path);
  });
  const utilization = batching.direct?.minimum_slot_utilization;
  if (utilization !== undefined && (utilization < 0 || utilization > 1)) {
    reject(`sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${name}`, 'sequence_batching.direct.minimum_slot_utilization');
  }
}

interface EnsembleTensor {
  name: string;
  isOutput: boolean;
  ready: boolean;
  prev: EnsembleTensor[];
  next: EnsembleTensor[];
}

/** ValidateEnsembleSchedulingConfig + BuildEnsembleGraph: every ensemble output must be computable from its inputs. */
function checkEnsemble(config: ModelConfig, modelExists: ((name: string) => boolean) | undefined): void {
  const name = config.name;
  if (config.platform !== 'ensemble') reject(`ensemble scheduling cannot be set for model '${name}' whose platform is not ensemble`, 'ensemble_scheduling');
  if (config.instance_group.length !== 0) reject(`instance group should not be specified for ensemble '${name}'`, 'instance_group');
  if (config.optimization) reject(`optimization should not be specified for ensemble '${name}'`, 'optimization');
  if (config.model_warmup.length !== 0) reject(`model_warmup can not be specified for ensemble '${name}'`, 'model_warmup');
  const steps = config.ensemble_scheduling!.step;
  if (steps.length === 0) reject(`must specify 'step' for ensemble '${name}'`, 'ensemble_scheduling.step');

  const tensors = new Map<string, EnsembleTensor>();
  const tensor = (tensorName: string, isOutput: boolean) => {
    let t = tensors.get(tensorName);
    if (!t) tensors.set(tensorName, (t = { name: tensorName, isOutput, ready: false, prev: [], next: [] }));
    return t;
  };
  steps.forEach((step, i) => {
    const path = indexPath('ensemble_scheduling.step', i);
    if (!step.model_name) reject(`must specify 'model_name' in step ${i} of ensemble '${name}'`, `${path}.model_name`);
    // Herd rules: a step's model must exist (when the repository can say) and cannot be the ensemble itself.
    if (step.model_name === name) reject(`ensemble '${name}' cannot use itself as the model of step ${i}`, `${path}.model_name`);
    if (modelExists && !modelExists(step.model_name)) {
      reject(`ensemble '${name}' step ${i} uses model '${step.model_name}', which is not in the model repository`, `${path}.model_name`);
    }
    if (Object.keys(step.input_map).length === 0) reject(`must specify 'input_map' in step ${i} of ensemble '${name}'`, `${path}.input_map`);
    if (Object.keys(step.output_map).length === 0) reject(`must specify 'output_map' in step ${i} of ensemble '${name}'`, `${path}.output_map`);
    const produced = Object.values(step.output_map).map((tensorName) => {
      const existing = tensors.get(tensorName);
      if (existing?.isOutput) reject(`ensemble tensor '${tensorName}' can appear in an output map only once for ensemble '${name}' step ${i}`, `${path}.output_map`);
      if (existing) existing.isOutput = true;
      return existing ?? tensor(tensorName, true);
    });
    // input_map keys are unique model inputs by construction (an object), which Triton checks explicitly.
    for (const tensorName of Object.values(step.input_map)) {
      const source = tensor(tensorName, false);
      for (const out of produced) {
        out.prev.push(source);
        source.next.push(out);
      }
    }
  });

  const queue: EnsembleTensor[] = [];
  config.input.forEach((input, i) => {
    const t = tensors.get(input.name);
    if (!t) reject(`ensemble input '${input.name}' for ensemble '${name}' is not used`, indexPath('input', i));
    t.ready = true;
    queue.push(t);
  });
  for (let t = queue.shift(); t; t = queue.shift()) {
    for (const next of t.next) {
      if (!next.ready && next.prev.every((p) => p.ready)) {
        next.ready = true;
        queue.push(next);
      }
    }
  }
  const outputs = new Set<string>();
  config.output.forEach((output, i) => {
    const t = tensors.get(output.name);
    if (!t) reject(`ensemble output '${output.name}' for ensemble '${name}' is not used`, indexPath('output', i));
    if (!t.ready) {
      // Walk back to the first tensor that never became ready: that is the unconnected one.
      let last = t;
      const seen = new Set<string>();
      for (let prev: EnsembleTensor[] | undefined = t.prev; prev && prev.length > 0; ) {
        const notReady: EnsembleTensor | undefined = prev.find((p) => !p.ready && !seen.has(p.name));
        if (!notReady) break;
        seen.add(notReady.name);
        last = notReady;
        prev = notReady.prev;
      }
      const cause = last !== t ? `: at least one of its depending tensors, '${last.name}', is not connected` : '';
      reject(`output '${output.name}' for ensemble '${name}' is not written${cause}`, indexPath('output', i));
    }
    outputs.add(output.name);
  });
  for (const t of tensors.values()) {
    if (!outputs.has(t.name) && (!t.ready || t.next.length === 0)) {
      reject(`ensemble tensor '${t.name}' is unused in ensemble '${name}'`, 'ensemble_scheduling.step');
    }
  }
}

function checkInstanceGroups(config: ModelConfig): void {
  if (config.ensemble_scheduling) return;
  const name = config.name;
  if (config.instance_group.length === 0) reject(`must specify one or more 'instance group's for ${name}`, 'instance_group');
  config.instance_group.forEach((group, i) => {
    const path = indexPath('instance_group', i);
    const prefix = `instance group ${group.name} of model ${name}`;
    if (group.kind === 'KIND_AUTO') throw internal(`${prefix} has unexpected kind KIND_AUTO`, { param: `${path}.kind` });
    // Herd runs without GPUs, as a Triton built without GPU support does.
    if (group.kind === 'KIND_GPU') reject(`${prefix} has kind KIND_GPU but server does not support GPUs`, `${path}.kind`);
    if (group.gpus.length > 0) reject(`${prefix} has kind ${group.kind} but specifies one or more GPUs`, `${path}.gpus`);
    if (group.profile.length > 0 && config.platform !== 'tensorrt_plan') {
      reject(`${prefix} and platform ${config.platform} specifies profile field which is only supported for TensorRT models`, `${path}.profile`);
    }
    // Herd rule: Triton silently replaces a count below 1 with its default; a negative count is a typo worth reporting.
    if (group.count < 1) reject(`${prefix} must have count >= 1, got ${group.count}`, `${path}.count`);
  });
}

/**
 * ValidateModelIOConfig. With max_batch_size > 0, `dims` leave out the batch dimension (Triton adds
 * [-1] in front); nothing here can tell a batch dimension written by mistake, so it is not guessed at.
 */
function checkModelIO(config: ModelConfig): void {
  const name = config.name;
  const seen = new Set<string>();
  config.input.forEach((input, i) => {
    const path = indexPath('input', i);
    checkTensorShape(input, 'input', path, config);
    if ((input.format === 'FORMAT_NHWC' || input.format === 'FORMAT_NCHW') && input.dims.length !== 3) {
      reject(`model input NHWC/NCHW require 3 dims for ${name}`, `${path}.format`);
    }
    checkTensorFlags(input, 'input', path, config);
    // Herd rule: Triton keeps the first of two same-named inputs and ignores the second; refuse instead.
    if (seen.has(input.name)) reject(`model input '${input.name}' is specified more than once for ${name}`, `${path}.name`);
    seen.add(input.name);
  });
  seen.clear();
  config.output.forEach((output, i) => {
    const path = indexPath('output', i);
    checkTensorShape(output, 'output', path, config);
    checkTensorFlags(output, 'output', path, config);
    if (seen.has(output.name)) reject(`model output '${output.name}' is specified more than once for ${name}`, `${path}.name`);
    seen.add(output.name);
  });
  checkBatchIO(config);
}

const WILDCARD_DIM = -1;

/** ValidateIOShape. */
function checkTensorShape(io: ModelInput | ModelOutput, role: 'input' | 'output', path: string, config: ModelConfig): void {
  const suffix = ` for ${config.name}`;
  if (!io.name) reject(`model ${role} must specify 'name'${suffix}`, `${path}.name`);
  const prefix = `model ${role} '${io.name}'`;
  if (io.data_type === 'TYPE_INVALID') reject(`${prefix} must specify 'data_type'${suffix}`, `${path}.data_type`);
  if (io.dims.length === 0) reject(`${prefix} must specify 'dims'${suffix}`, `${path}.dims`);
  if (io.reshape && io.reshape.shape.length === 0 && config.max_batch_size === 0) {
    reject(`${prefix} cannot have empty reshape for non-batching model as scalar tensors are not supported${suffix}`, `${path}.reshape`);
  }
  io.dims.forEach((dim, j) => {
    if (dim < 1 && dim !== WILDCARD_DIM) {
      reject(`${prefix} dimension must be integer >= 1, or ${WILDCARD_DIM} to indicate a variable-size dimension${suffix}`, indexPath(`${path}.dims`, j));
    }
  });
  if (!io.reshape) return;
  const shape = io.reshape.shape;
  shape.forEach((dim, j) => {
    if (dim < 1 && dim !== WILDCARD_DIM) {
      reject(`${prefix} reshape dimensions must be integer >= 1, or ${WILDCARD_DIM} to indicate a variable-size dimension${suffix}`, indexPath(`${path}.reshape.shape`, j));
    }
  });
  const reshapePath = `${path}.reshape.shape`;
  const dimsSize = elementCount(io.dims);
  const reshapeSize = elementCount(shape);
  // An empty reshape (a scalar) matches dims of one element.
  if (dimsSize !== reshapeSize && (reshapeSize !== 0 || dimsSize !== 1)) reject(`${prefix} has different size for dims and reshape${suffix}`, reshapePath);
  if (dimsSize === WILDCARD_DIM) {
    // With variable dims, each run of fixed dims between -1s must hold as many elements: [2,4,-1,6] -> [8,-1,1,6].
    const a = fixedRuns(io.dims);
    const b = fixedRuns(shape);
    if (a.length !== b.length) reject(`${prefix} has different number of variable-size dimensions for dims and reshape${suffix}`, reshapePath);
    if (a.some((n, k) => n !== b[k])) reject(`${prefix} has different size for dims and reshape${suffix}`, reshapePath);
  }
}

/** GetElementCount: -1 when any dimension is variable; an empty shape counts 0, as Triton's does. */
function elementCount(dims: readonly number[]): number {
  if (dims.length === 0) return 0;
  if (dims.includes(WILDCARD_DIM)) return WILDCARD_DIM;
  return dims.reduce((n, d) => n * d, 1);
}

function fixedRuns(dims: readonly number[]): number[] {
  const runs = [1];
  for (const d of dims) {
    if (d === WILDCARD_DIM) runs.push(1);
    else runs[runs.length - 1] *= d;
  }
  return runs;
}

function checkTensorFlags(io: ModelInput | ModelOutput, role: 'input' | 'output', path: string, config: ModelConfig): void {
  if (config.platform === 'tensorrt_plan') {
    if (io.is_non_linear_format_io && io.dims.length !== 3) reject(`Non-linear IO format ${role} requires 3 dims for ${config.name}`, `${path}.dims`);
    return;
  }
  if (io.is_shape_tensor) reject(`shape tensors are only supported for TensorRT platform for ${config.name}`, `${path}.is_shape_tensor`);
  if (io.is_non_linear_format_io) reject(`Non-linear IO format is only supported for the TensorRT platform for ${config.name}`, `${path}.is_non_linear_format_io`);
}

/** ValidateBatchIO. */
function checkBatchIO(config: ModelConfig): void {
  const suffix = ` for ${config.name}`;
  const inputs = new Set(config.input.map((i) => i.name));
  const outputs = new Set(config.output.map((o) => o.name));
  config.batch_input.forEach((batchInput, i) => {
    const path = indexPath('batch_input', i);
    if (batchInput.source_input.length !== 1) {
      reject(`batch input kind '${batchInput.kind}' expects 1 source input, got ${batchInput.source_input.length}${suffix}`, `${path}.source_input`);
    }
    if (batchInput.data_type !== 'TYPE_INT32' && batchInput.data_type !== 'TYPE_FP32') {
      reject(`batch input data type must be TYPE_INT32 or TYPE_FP32${suffix}`, `${path}.data_type`);
    }
    for (const source of batchInput.source_input) {
      if (!inputs.has(source)) reject(`unknown source input name '${source}'${suffix}`, `${path}.source_input`);
    }
  });
  config.batch_output.forEach((batchOutput, i) => {
    const path = indexPath('batch_output', i);
    if (batchOutput.source_input.length !== 1) {
      reject(`batch output kind '${batchOutput.kind}' expects 1 source input, got ${batchOutput.source_input.length}${suffix}`, `${path}.source_input`);
    }
    for (const source of batchOutput.source_input) {
      if (!inputs.has(source)) reject(`unknown source input name '${source}'${suffix}`, `${path}.source_input`);
    }
    const targets = new Set<string>();
    for (const target of batchOutput.target_name) {
      if (!outputs.has(target)) reject(`unknown target output name '${target}'${suffix}`, `${path}.target_name`);
      if (targets.has(target)) reject(`target output name '${target}' can only be specified once${suffix}`, `${path}.target_name`);
      targets.add(target);
    }
  });
}
