// Checks what a JS model returned for one request against its config and turns it into an
// InferenceResult. Model code is untrusted input here: anything malformed becomes a per-request
// INTERNAL error that names the model file and the output, never an exception.
import { mapConfigTypeToDataType, type DataType } from '../../../core/datatype.ts';
import { HerdError } from '../../../core/errors.ts';
import { elementCount, type Parameters, type Tensor } from '../../../core/tensor.ts';
import type { InferenceResult } from '../backend.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import { TYPED_ARRAYS } from './model-api.ts';

export interface OutputSpec {
  datatype: DataType;
  configType: string;
  /** Shape the model must produce without the batch dim; -1 is any size. */
  dims: readonly number[];
}

/** What every response of one model instance is checked against; built once at load. */
export interface ResponseRules {
  /** `<model>/<version>/<file>`, put at the head of every message. */
  label: string;
  outputs: ReadonlyMap<string, OutputSpec>;
  batching: boolean;
}

export function createResponseRules(config: ModelConfig, label: string): ResponseRules {
  const outputs = new Map<string, OutputSpec>();
  for (const o of config.output) {
    const datatype = mapConfigTypeToDataType(o.data_type);
    if (!datatype) throw new HerdError('INVALID_ARG', `js model ${label}: output '${o.name}' has unsupported data_type ${o.data_type}`);
    // With reshape the model produces reshape.shape and clients see dims (Triton's rule).
    outputs.set(o.name, { datatype, configType: o.data_type, dims: o.reshape ? o.reshape.shape : o.dims });
  }
  return { label, outputs, batching: config.max_batch_size > 0 };
}

export interface RequestView {
  /** Output names to return; every config output when the client named none. */
  requestedOutputs: readonly string[];
  /** First dim of the request's inputs for a batching model; undefined when unknown. */
  batchSize: number | undefined;
}

export function convertJsResponse(value: unknown, rules: ResponseRules, request: RequestView): InferenceResult {
  const fail = (message: string): InferenceResult => ({ ok: false, error: new HerdError('INTERNAL', `js model ${rules.label}: ${message}`) });
  if (typeof value !== 'object' || value === null) return fail(`response is ${describeValue(value)}, not { outputs } or { error }`);
  const response = value as { outputs?: unknown; error?: unknown; parameters?: unknown };
  if (response.error !== undefined && response.error !== null) return { ok: false, error: convertModelError(response.error) };
  if (!Array.isArray(response.outputs)) return fail('response has neither an outputs array nor an error');

  const parameters = checkParameters(response.parameters);
  if (typeof parameters === 'string') return fail(parameters);

  const returned = new Map<string, Tensor>();
  for (const [i, item] of response.outputs.entries()) {
    const checked = checkOutput(item, i, rules, request.batchSize);
    if (typeof checked === 'string') return fail(checked);
    if (returned.has(checked.name)) return fail(`output '${checked.name}' is returned twice`);
    returned.set(checked.name, checked);
  }
  const outputs: Tensor[] = [];
  for (const name of request.requestedOutputs) {
    const tensor = returned.get(name);
    if (!tensor) return fail(`requested output '${name}' is missing from the response`);
    outputs.push(tensor);
  }
  return parameters ? { ok: true, outputs, parameters } : { ok: true, outputs };
}

/** A HerdError made by herd.createError keeps its code; anything else the model reports is INTERNAL. */
export function convertModelError(error: unknown): HerdError {
  if (error instanceof HerdError) return error;
  if (error instanceof Error) return new HerdError('INTERNAL', error.message, { cause: error });
  return new HerdError('INTERNAL', typeof error === 'string' ? error : describeValue(error));
}

/** The tensor when it is valid, otherwise the reason (without the model label). */
function checkOutput(item: unknown, index: number, rules: ResponseRules, batchSize: number | undefined): Tensor | string {
  if (typeof item !== 'object' || item === null || typeof (item as { name?: unknown }).name !== 'string') {
    return `outputs[${index}] is ${describeValue(item)}, not a tensor { name, datatype, shape, data }`;
  }
  const t = item as { name: string; datatype?: unknown; shape?: unknown; data?: unknown };
  const spec = rules.outputs.get(t.name);
  if (!spec) return `output '${t.name}' is not in the model config (outputs: ${[...rules.outputs.keys()].join(', ') || 'none'})`;
  if (t.datatype !== spec.datatype) {
    return `output '${t.name}' has datatype ${String(t.datatype)}, config says ${spec.datatype} (${spec.configType})`;
  }
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isInteger(d) && d >= 0)) {
    return `output '${t.name}' has shape ${JSON.stringify(t.shape)}; a shape is an array of non-negative integers`;
  }
  const shape = t.shape as number[];
  const dataError = checkDataKind(t.data, spec.datatype);
  if (dataError) return `output '${t.name}' ${dataError}`;
  const data = t.data as Tensor['data'];
  if (data.length !== elementCount(shape)) {
    return `output '${t.name}' has shape [${shape.join(',')}] (${elementCount(shape)} elements) but ${data.length} data elements`;
  }
  const shapeError = checkShape(shape, spec.dims, rules.batching, batchSize);
  if (shapeError) return `output '${t.name}' ${shapeError}`;
  return { name: t.name, datatype: spec.datatype, shape, data };
}

function checkDataKind(data: unknown, datatype: DataType): string | undefined {
  if (datatype === 'BYTES') {
    if (Array.isArray(data) && data.every((v) => v instanceof Uint8Array)) return undefined;
    return 'is BYTES, so its data must be an array of Uint8Array (herd.createTensor converts strings)';
  }
  const Kind = TYPED_ARRAYS[datatype];
  if (data instanceof Kind) return undefined;
  const got = ArrayBuffer.isView(data) ? data.constructor.name : describeValue(data);
  return `is ${datatype}, so its data must be a ${Kind.name}, got ${got} (herd.createTensor converts plain arrays)`;
}

function checkShape(shape: readonly number[], dims: readonly number[], batching: boolean, batchSize: number | undefined): string | undefined {
  const expected = batching ? [-1, ...dims] : [...dims];
  const mismatch = shape.length !== expected.length || expected.some((d, i) => d !== -1 && d !== shape[i]);
  if (mismatch) {
    const wanted = `[${expected.map((d) => (d === -1 ? '-1' : String(d))).join(',')}]`;
    return `has shape [${shape.join(',')}], config expects ${wanted}${batching ? ' (batch dim first)' : ''}`;
  }
  if (batching && batchSize !== undefined && shape[0] !== batchSize) {
    return `has batch size ${shape[0]} but the request has batch size ${batchSize}`;
  }
  return undefined;
}

/** The parameters, undefined when absent, or a reason string. */
function checkParameters(value: unknown): Parameters | undefined | string {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return `response parameters is ${describeValue(value)}, not an object`;
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isFinite(v))) {
      return `response parameter '${key}' is ${describeValue(v)}; parameters are strings, finite numbers or booleans`;
    }
  }
  return value as Parameters;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? `a ${value.constructor?.name ?? 'object'}` : typeof value;
}
