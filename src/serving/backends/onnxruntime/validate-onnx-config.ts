// Checks a (completed) config against the ONNX model at load time, after Triton's ValidateInputs /
// ValidateOutputs: names exist, datatypes match, dims (or reshape) fit the model's shape, batching is possible.
import { invalidArg } from '../../../core/errors.ts';
import type { ConfigDataType, ModelConfig } from '../../model-config/model-config.ts';
import type { OnnxIoInfo, OnnxSignature } from './onnx-model-file.ts';
import { mapConfigTypeToOrtType } from './ort-datatype.ts';
import { listSequenceInputs } from './sequence-inputs.ts';

const formatDims = (dims: readonly number[]) => `[${dims.join(',')}]`;

interface DimsCheck {
  model: string;
  kind: 'input' | 'output';
  io: OnnxIoInfo;
  /** Config dims, or reshape.shape when present (that is what the model sees). */
  dims: readonly number[];
  maxBatchSize: number;
  /** Outputs must match exactly; an input's -1 may meet a fixed model dim (the request decides). */
  exact: boolean;
}

function checkDims({ model, kind, io, dims, maxBatchSize, exact }: DimsCheck): void {
  const prefix = `unable to load model '${model}': ${kind} '${io.name}'`;
  if (io.dims.length === 0) {
    // A scalar model tensor: the config may only describe it as 1s.
    if (dims.some((d) => d !== 1)) {
      throw invalidArg(`${prefix} is a scalar in the model; the configuration may only give 1s, got ${formatDims(dims)}`);
    }
    return;
  }
  const batching = maxBatchSize > 0;
  if (batching && io.dims[0] !== -1) {
    throw invalidArg(
      `${prefix}: max_batch_size is ${maxBatchSize} but the model's first dimension is not a variable batch ` +
        `dimension: model shape ${formatDims(io.dims)}, configuration shape ${formatDims(dims)}`,
    );
  }
  const modelDims = io.dims.slice(batching ? 1 : 0);
  const mismatch =
    modelDims.length !== dims.length ||
    modelDims.some((m, i) => {
      if (m === -1 || m === dims[i]) return false;
      return exact || dims[i] !== -1;
    });
  if (mismatch) {
    throw invalidArg(`${prefix}: model shape ${formatDims(modelDims)}${batching ? ' (batch dim excluded)' : ''} ` + `doesn't match configuration shape ${formatDims(dims)}`);
  }
}

function checkType(model: string, kind: string, io: OnnxIoInfo, configType: ConfigDataType): void {
  const expected = mapConfigTypeToOrtType(configType);
  if (expected === undefined) {
    throw invalidArg(`unable to load model '${model}': ${kind} '${io.name}' has datatype ${configType}, which the onnxruntime backend does not support`);
  }
  if (expected !== io.ortType) {
    throw invalidArg(`unable to load model '${model}': configuration expects datatype ${configType} for ${kind} '${io.name}', ` + `the ONNX model has ${io.ortType}`);
  }
}

function lookup(model: string, kind: 'input' | 'output', name: string, ios: OnnxIoInfo[]): OnnxIoInfo {
  const io = ios.find((x) => x.name === name);
  if (!io) {
    throw invalidArg(
      `unable to load model '${model}': configuration ${kind} '${name}' is not an ${kind} of the ONNX model; ` + `model ${kind}s: ${ios.map((x) => x.name).join(', ') || '(none)'}`,
    );
  }
  return io;
}

/** Throws INVALID_ARG with a message naming the tensor when the config cannot serve this model. */
export function validateOnnxConfig(config: ModelConfig, signature: OnnxSignature): void {
  const model = config.name;
  const maxBatchSize = config.max_batch_size ?? 0;
  for (const input of config.input ?? []) {
    const io = lookup(model, 'input', input.name, signature.inputs);
    if (input.optional && maxBatchSize !== 0) {
      throw invalidArg(`unable to load model '${model}': optional input '${input.name}' is not supported for models that batch`);
    }
    checkType(model, 'input', io, input.data_type);
    checkDims({ model, kind: 'input', io, dims: input.reshape?.shape ?? input.dims, maxBatchSize, exact: false });
  }
  for (const output of config.output ?? []) {
    const io = lookup(model, 'output', output.name, signature.outputs);
    checkType(model, 'output', io, output.data_type);
    checkDims({ model, kind: 'output', io, dims: output.reshape?.shape ?? output.dims, maxBatchSize, exact: true });
  }

  const sequenceInputs = listSequenceInputs(config);
  for (const seq of sequenceInputs) {
    const io = lookup(model, 'input', seq.name, signature.inputs);
    if (seq.dataType) checkType(model, 'sequence control input', io, seq.dataType);
  }
  const covered = new Set([...(config.input ?? []).map((i) => i.name), ...sequenceInputs.map((s) => s.name)]);
  const uncovered = signature.inputs.filter((io) => !covered.has(io.name)).map((io) => `'${io.name}'`);
  if (uncovered.length > 0 && (config.batch_input?.length ?? 0) === 0) {
    throw invalidArg(
      `unable to load model '${model}': the ONNX model needs input ${uncovered.join(', ')}, which the configuration ` +
        `neither lists under 'input' nor feeds as a sequence_batching control or state`,
    );
  }
}
