// Triton's ONNX auto-complete (onnxruntime_backend AutoCompleteConfig), as a pure function of the config
// and the model's signature: fills inputs/outputs and, when every tensor has a variable first dim,
// max_batch_size (Triton's default 4) plus an empty dynamic_batching. User-given fields are never changed.
import { invalidArg, unsupported } from '../../../core/errors.ts';
import type { ModelConfig, ModelDynamicBatching, ModelInput, ModelOutput } from '../../model-config/model-config.ts';
import type { OnnxIoInfo, OnnxSignature } from './onnx-model-file.ts';
import { mapOrtTypeToConfigType } from './ort-datatype.ts';
import { listSequenceInputs } from './sequence-inputs.ts';

/** tritonserver's `--backend-config=default-max-batch-size` default. */
export const TRITON_DEFAULT_MAX_BATCH_SIZE = 4;

export interface OnnxAutoCompleteOptions {
  defaultMaxBatchSize?: number;
}

/** Triton skips auto-complete entirely when the config already lists inputs (or batch inputs) and outputs. */
export function needsOnnxSignature(config: ModelConfig): boolean {
  const inputCount = (config.input?.length ?? 0) + (config.batch_input?.length ?? 0);
  return inputCount === 0 || (config.output?.length ?? 0) === 0;
}

/** platform/backend as Triton normalises them for ONNX models (either one implies the other). */
export function fillOnnxBackendFields(config: ModelConfig): ModelConfig {
  return {
    ...config,
    platform: config.platform || 'onnxruntime_onnx',
    backend: config.backend || 'onnxruntime',
  };
}

function checkNamesKnown(config: ModelConfig, kind: 'input' | 'output', given: readonly { name: string }[], model: OnnxIoInfo[]): void {
  const known = new Set(model.map((io) => io.name));
  for (const io of given) {
    if (!known.has(io.name)) {
      throw invalidArg(
        `unable to auto-complete model '${config.name}': configuration ${kind} '${io.name}' is not an ${kind} of the ` +
          `ONNX model; model ${kind}s: ${[...known].join(', ') || '(none)'}`,
      );
    }
  }
}

function emptyDynamicBatching(): ModelDynamicBatching {
  return {
    preferred_batch_size: [],
    max_queue_delay_microseconds: 0,
    preserve_ordering: false,
    priority_levels: 0,
    default_priority_level: 0,
    priority_queue_policy: {},
  };
}

/** Returns max_batch_size (and maybe dynamic_batching) per Triton's AutoCompleteMaxBatch. */
function completeMaxBatch(config: ModelConfig, signature: OnnxSignature, defaultMaxBatchSize: number): ModelConfig {
  const all = [...signature.inputs, ...signature.outputs];
  const canBatch = all.length > 0 && all.every((io) => io.dims.length > 0 && io.dims[0] === -1);
  const maxBatch = config.max_batch_size ?? 0;
  if (!canBatch) {
    if (maxBatch !== 0) {
      throw invalidArg(
        `autofill failed for model '${config.name}': model does not support batching while non-zero max_batch_size ` +
          `${maxBatch} is specified (every input and output needs a variable first dimension)`,
      );
    }
    return config;
  }
  const next = { ...config, max_batch_size: maxBatch === 0 ? Math.max(defaultMaxBatchSize, 0) : maxBatch };
  if (next.max_batch_size > 1 && !next.sequence_batching && !next.dynamic_batching) {
    next.dynamic_batching = emptyDynamicBatching();
  }
  return next;
}

function configTypeOf(config: ModelConfig, kind: string, io: OnnxIoInfo) {
  const type = mapOrtTypeToConfigType(io.ortType);
  if (type === undefined) {
    throw unsupported(`unable to auto-complete model '${config.name}': ${kind} '${io.name}' has ONNX type '${io.ortType}', which Herd cannot serve`);
  }
  return type;
}

/** dims without the batch dim; a scalar becomes [1] with an empty reshape when batching (Triton's rule). */
function completeDims(io: OnnxIoInfo, maxBatchSize: number): { dims: number[]; reshape?: { shape: number[] } } {
  const dims = io.dims.slice(maxBatchSize > 0 ? 1 : 0);
  if (dims.length > 0) return { dims };
  return maxBatchSize > 0 ? { dims: [1], reshape: { shape: [] } } : { dims: [1] };
}

function completeInput(config: ModelConfig, io: OnnxIoInfo, maxBatchSize: number): ModelInput {
  return {
    name: io.name,
    data_type: configTypeOf(config, 'input', io),
    format: 'FORMAT_NONE',
    ...completeDims(io, maxBatchSize),
    is_shape_tensor: false,
    is_non_linear_format_io: false,
    allow_ragged_batch: false,
    optional: false,
  };
}

function completeOutput(config: ModelConfig, io: OnnxIoInfo, maxBatchSize: number): ModelOutput {
  return {
    name: io.name,
    data_type: configTypeOf(config, 'output', io),
    ...completeDims(io, maxBatchSize),
    label_filename: '',
    is_shape_tensor: false,
    is_non_linear_format_io: false,
  };
}

/** The config completed from the model signature; returns the input unchanged when nothing is missing. */
export function autoCompleteOnnxConfig(config: ModelConfig, signature: OnnxSignature, options: OnnxAutoCompleteOptions = {}): ModelConfig {
  if (!needsOnnxSignature(config)) return config;
  checkNamesKnown(config, 'input', config.input ?? [], signature.inputs);
  checkNamesKnown(config, 'output', config.output ?? [], signature.outputs);

  let next = completeMaxBatch(config, signature, options.defaultMaxBatchSize ?? TRITON_DEFAULT_MAX_BATCH_SIZE);
  const maxBatch = next.max_batch_size;
  if ((config.input?.length ?? 0) + (config.batch_input?.length ?? 0) === 0) {
    // Unlike Triton, leave out tensors the sequence batcher feeds: listing START/READY as plain inputs
    // would make the completed config fail its own validation.
    const fedByBatcher = new Set(listSequenceInputs(config).map((s) => s.name));
    next = { ...next, input: signature.inputs.filter((io) => !fedByBatcher.has(io.name)).map((io) => completeInput(config, io, maxBatch)) };
  }
  if ((config.output?.length ?? 0) === 0) {
    next = { ...next, output: signature.outputs.map((io) => completeOutput(config, io, maxBatch)) };
  }
  return next;
}
