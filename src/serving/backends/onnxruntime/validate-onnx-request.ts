// Checks one request against an ONNX instance before it joins a batch: everything that would otherwise
// only fail inside session.run (and then fail every request run with it) is caught here, per request.
import { mapConfigTypeToDataType, type DataType } from '../../../core/datatype.ts';
import { internal, invalidArg } from '../../../core/errors.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import type { InferenceRequest } from '../backend.ts';
import { validateTensorForOrt } from './convert-ort-tensor.ts';
import { convertShapeForReshape, type ReshapeRule } from './reshape.ts';

interface InputRule {
  dataType: DataType;
  /** Config dims, batch dim excluded; -1 matches anything. */
  dims: readonly number[];
  optional: boolean;
  reshape?: ReshapeRule;
}

/** What validateOnnxRequest checks against, built once per instance. */
export interface OnnxRequestRules {
  model: string;
  /** 0: the model does not batch (no batch dim, requests are never concatenated). */
  maxBatchSize: number;
  /** The ONNX file's inputs: config inputs plus those the server feeds (sequence controls). */
  modelInputs: ReadonlySet<string>;
  /** Config inputs by name. */
  inputs: ReadonlyMap<string, InputRule>;
  /** Config outputs, in config order. */
  outputs: readonly string[];
}

export interface ValidatedOnnxRequest {
  /** Dim 0 of every input for a batching model; 1 otherwise. */
  batchSize: number;
  /** The outputs to return, in the order the request asked for them (config order when it asked for none). */
  outputNames: string[];
}

const formatDims = (dims: readonly number[]) => `[${dims.join(',')}]`;

export function createOnnxRequestRules(config: ModelConfig, modelInputs: readonly string[]): OnnxRequestRules {
  const maxBatchSize = config.max_batch_size ?? 0;
  const inputs = new Map<string, InputRule>();
  for (const input of config.input ?? []) {
    const dataType = mapConfigTypeToDataType(input.data_type);
    // validateOnnxConfig accepted the config, so an unmappable type here is a bug, not user error.
    if (!dataType) throw internal(`model '${config.name}': input '${input.name}' has unusable datatype ${input.data_type}`);
    const reshape = input.reshape ? { from: input.dims, to: input.reshape.shape, hasBatchDim: maxBatchSize > 0 } : undefined;
    inputs.set(input.name, { dataType, dims: input.dims, optional: input.optional, reshape });
  }
  return {
    model: config.name,
    maxBatchSize,
    modelInputs: new Set(modelInputs),
    inputs,
    outputs: (config.output ?? []).map((o) => o.name),
  };
}

function resolveOutputNames(rules: OnnxRequestRules, requested: readonly string[]): string[] {
  if (requested.length === 0) return [...rules.outputs];
  for (const name of requested) {
    if (!rules.outputs.includes(name)) {
      throw invalidArg(`unexpected inference output '${name}' for model '${rules.model}', allowed outputs are: ${rules.outputs.join(', ')}`);
    }
  }
  return [...new Set(requested)];
}

/** The request's batch size: dim 0, the same on every input, within 1..max_batch_size. */
function resolveBatchSize(rules: OnnxRequestRules, request: InferenceRequest): number {
  if (rules.maxBatchSize === 0) return 1;
  let batchSize: number | undefined;
  for (const tensor of request.inputs) {
    if (tensor.shape.length === 0) {
      throw invalidArg(`input '${tensor.name}' has no shape but model '${rules.model}' requires a batch dimension`);
    }
    batchSize ??= tensor.shape[0];
    if (tensor.shape[0] !== batchSize) {
      throw invalidArg(`input '${tensor.name}' batch size ${tensor.shape[0]} does not match other inputs (${batchSize}) for model '${rules.model}'`);
    }
  }
  batchSize ??= 1;
  if (batchSize < 1 || batchSize > rules.maxBatchSize) {
    throw invalidArg(`inference request batch-size must be between 1 and ${rules.maxBatchSize} for model '${rules.model}', got ${batchSize}`);
  }
  return batchSize;
}

function dimsMatch(expected: readonly number[], dims: readonly number[]): boolean {
  return expected.length === dims.length && expected.every((d, i) => d === -1 || d === dims[i]);
}

/** Throws INVALID_ARG (UNSUPPORTED for a datatype ORT cannot take) naming the tensor; the caller fails that request alone. */
export function validateOnnxRequest(rules: OnnxRequestRules, request: InferenceRequest): ValidatedOnnxRequest {
  const { model } = rules;
  const outputNames = resolveOutputNames(rules, request.requestedOutputs);
  const present = new Set<string>();
  for (const tensor of request.inputs) {
    if (!rules.modelInputs.has(tensor.name)) {
      throw invalidArg(`unexpected inference input '${tensor.name}' for model '${model}', allowed inputs are: ${[...rules.modelInputs].join(', ')}`);
    }
    if (present.has(tensor.name)) throw invalidArg(`input '${tensor.name}' appears more than once in the request for model '${model}'`);
    present.add(tensor.name);
  }
  for (const [name, rule] of rules.inputs) {
    if (!rule.optional && !present.has(name)) throw invalidArg(`expected input '${name}' for model '${model}' is missing from the request`);
  }
  const batchSize = resolveBatchSize(rules, request);
  for (const tensor of request.inputs) {
    const rule = rules.inputs.get(tensor.name);
    // Inputs the config does not list (sequence controls) are built by the server; ORT checks their types.
    if (rule) {
      if (tensor.datatype !== rule.dataType) {
        throw invalidArg(`input '${tensor.name}' has datatype ${tensor.datatype} but model '${model}' expects ${rule.dataType}`);
      }
      const dims = rules.maxBatchSize > 0 ? tensor.shape.slice(1) : tensor.shape;
      if (!dimsMatch(rule.dims, dims)) {
        const expected = rules.maxBatchSize > 0 ? [-1, ...rule.dims] : rule.dims;
        throw invalidArg(`unexpected shape for input '${tensor.name}' for model '${model}': expected ${formatDims(expected)}, got ${formatDims(tensor.shape)}`);
      }
    }
    const shape = rule?.reshape ? convertShapeForReshape(tensor.name, tensor.shape, rule.reshape) : tensor.shape;
    validateTensorForOrt(tensor, shape);
  }
  return { batchSize, outputNames };
}
