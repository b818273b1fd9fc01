// Checks decoded inputs against a model's config the way Triton core does (InferenceRequest::Normalize),
// in the same order and with the same messages, and returns the inputs shaped for the backend.
import { elementByteSize, mapConfigTypeToDataType } from '../core/datatype.ts';
import { internal, invalidArg } from '../core/errors.ts';
import { elementCount, isBytesData, type Tensor } from '../core/tensor.ts';
import type { ModelConfig, ModelInput, ModelOutput } from './model-config/model-config.ts';

/** The parts of a ModelConfig validation reads. */
export type ValidationModelConfig = Pick<ModelConfig, 'name' | 'max_batch_size'> & {
  input: readonly Pick<ModelInput, 'name' | 'data_type' | 'dims' | 'reshape' | 'optional' | 'is_shape_tensor'>[];
  output: readonly Pick<ModelOutput, 'name'>[];
};

export interface InferRequestToValidate {
  /** '' when the client sent none; messages then say `<id_unknown>`, as Triton's do. */
  id: string;
  inputs: readonly Tensor[];
  /** Output names the client asked for; empty means all. */
  outputs: readonly string[];
}

export interface ValidatedInferRequest {
  /**
   * The inputs in request order with the shape the backend must see: the config's `reshape`
   * applied, batch dim kept in front. Data is shared with the request, never copied.
   */
  inputs: Tensor[];
  /** The batch dim (1..max_batch_size), or 0 for a model without Triton batching. */
  batchSize: number;
}

const BATCH_NOTE =
  'NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended ' +
  'to each input shape. If you want to specify the full shape including the batch dim in your input dims ' +
  'config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.';

type ConfigInput = ValidationModelConfig['input'][number];

/** Throws INVALID_ARG with Triton's message for the first problem found, in Triton's order. */
export function validateInferRequest(config: ValidationModelConfig, request: InferRequestToValidate): ValidatedInferRequest {
  const model = config.name;
  const log = `[request id: ${request.id === '' ? '<id_unknown>' : request.id}] `;
  const batching = config.max_batch_size > 0;

  for (const name of request.outputs) {
    if (!config.output.some((o) => o.name === name)) throw invalidArg(`unexpected inference output '${name}' for model '${model}'`);
  }

  const present = new Set<string>();
  for (const tensor of request.inputs) {
    if (present.has(tensor.name)) throw invalidArg(`${log}input '${tensor.name}' already exists in request`);
    present.add(tensor.name);
  }
  const requiredCount = config.input.filter((i) => !i.optional).length;
  if (request.inputs.length > config.input.length || request.inputs.length < requiredCount) {
    throw inputCountError(config, request, log, requiredCount);
  }

  const configs = request.inputs.map((tensor): ConfigInput => {
    const found = config.input.find((i) => i.name === tensor.name);
    if (found === undefined) throw invalidArg(`unexpected inference input '${tensor.name}' for model '${model}'`);
    return found;
  });
  // Triton only counts inputs; with optional inputs the count can be right while a required one is absent.
  if (config.input.some((i) => !i.optional && !present.has(i.name))) {
    throw inputCountError(config, request, log, requiredCount);
  }

  let batchSize = 0;
  let batched = false;
  if (batching) {
    request.inputs.forEach((tensor, i) => {
      if (configs[i].is_shape_tensor) return; // shape tensors keep their whole shape, batch included
      if (tensor.shape.length === 0) {
        throw invalidArg(`${log}input '${tensor.name}' has no shape but model requires batch dimension for '${model}'`);
      }
      if (!batched) {
        batchSize = tensor.shape[0];
        batched = true;
      } else if (tensor.shape[0] !== batchSize) {
        throw invalidArg(`${log}input '${tensor.name}' batch size does not match other inputs for '${model}'`);
      }
    });
    if (batched && batchSize > config.max_batch_size) {
      throw invalidArg(`${log}inference request batch-size must be <= ${config.max_batch_size} for '${model}'`);
    }
    // Triton lets 0 through (and then trips over the byte sizes); an empty batch is never meant.
    if (batched && batchSize < 1) throw invalidArg(`${log}inference request batch-size must be >= 1 for '${model}'`);
  }

  const inputs = request.inputs.map((tensor, i) => validateInput(tensor, configs[i], { config, log, batchSize }));
  return { inputs, batchSize };
}

interface InputCheckContext {
  config: ValidationModelConfig;
  log: string;
  batchSize: number;
}

function validateInput(tensor: Tensor, input: ConfigInput, context: InputCheckContext): Tensor {
  const { config, log, batchSize } = context;
  const model = config.name;
  const name = tensor.name;
  const expectedType = mapConfigTypeToDataType(input.data_type);
  if (expectedType === undefined) throw internal(`input '${name}' of model '${model}' has no usable data_type (${input.data_type})`);
  if (tensor.datatype !== expectedType) {
    throw invalidArg(`${log}inference input '${name}' data-type is '${tensor.datatype}', but model '${model}' expects '${expectedType}'`);
  }

  if (tensor.shape.some((d) => d < 0)) {
    throw invalidArg(`${log}All input dimensions should be specified for input '${name}' for model '${model}', got ${formatDims(tensor.shape)}`);
  }
  const stripBatch = config.max_batch_size > 0 && !input.is_shape_tensor;
  const dims = stripBatch ? tensor.shape.slice(1) : tensor.shape;
  if (!dimsMatch(input.dims, dims)) {
    const expected = config.max_batch_size > 0 ? [-1, ...input.dims] : input.dims;
    throw invalidArg(
      `${log}unexpected shape for input '${name}' for model '${model}'. Expected ${formatDims(expected)}, ` +
        `got ${formatDims(tensor.shape)}. ${config.max_batch_size > 0 ? BATCH_NOTE : ''}`,
    );
  }

  const shape = input.reshape === undefined ? dims : applyReshape(input, dims, model);
  const backendShape = stripBatch ? [batchSize, ...shape] : [...shape];
  // A shape tensor's data matches the shape it came with, batch or not (Triton's OriginalShape).
  const count = elementCount(input.is_shape_tensor ? tensor.shape : backendShape);
  const { data } = tensor;
  if (tensor.datatype === 'BYTES') {
    const got = isBytesData(data) ? data.length : 0;
    if (!isBytesData(data) || got !== count) {
      throw invalidArg(`${log}expected ${count} string elements for inference input '${name}' for model '${model}', got ${got}`);
    }
  } else {
    const expectedBytes = count * (elementByteSize(tensor.datatype) ?? 0);
    const got = isBytesData(data) ? 0 : data.byteLength;
    if (isBytesData(data) || got !== expectedBytes) {
      throw invalidArg(`${log}input byte size mismatch for input '${name}' for model '${model}'. Expected ${expectedBytes}, got ${got}`);
    }
  }
  return { ...tensor, shape: input.is_shape_tensor ? [...tensor.shape] : backendShape };
}

function dimsMatch(configDims: readonly number[], dims: readonly number[]): boolean {
  if (configDims.length !== dims.length) return false;
  for (let i = 0; i < dims.length; i++) {
    if (configDims[i] !== -1 && configDims[i] !== dims[i]) return false;
  }
  return true;
}

/** The config's reshape, its -1 dims filled in order from the request dims that matched a -1 in `dims`. */
function applyReshape(input: ConfigInput, dims: readonly number[], model: string): number[] {
  const variable = dims.filter((_, i) => input.dims[i] === -1);
  const target = input.reshape?.shape ?? [];
  return target.map((d) => {
    if (d !== -1) return d;
    const next = variable.shift();
    if (next === undefined) {
      throw internal(`reshape ${formatDims(target)} of input '${input.name}' of model '${model}' has more variable dims than its dims ${formatDims(input.dims)}`);
    }
    return next;
  });
}

function inputCountError(config: ValidationModelConfig, request: InferRequestToValidate, log: string, requiredCount: number) {
  const given = new Set(request.inputs.map((t) => t.name));
  const got = `[${request.inputs.map((t) => `'${t.name}'`).join(',')}]`;
  // Triton prints "]" when nothing is missing (it pops the opening bracket); we print "[]".
  const missing = `[${config.input
    .filter((i) => !i.optional && !given.has(i.name))
    .map((i) => `'${i.name}'`)
    .join(',')}]`;
  const expected =
    requiredCount === config.input.length ? `expected ${config.input.length} inputs` : `expected number of inputs between ${requiredCount} and ${config.input.length}`;
  return invalidArg(
    `${log}${expected} but got ${request.inputs.length} inputs for model '${config.name}'. ` +
      `Got input(s) ${got}, but missing required input(s) ${missing}. Please provide all required input(s).`,
  );
}

function formatDims(dims: readonly number[]): string {
  return `[${dims.join(',')}]`;
}
