// A whole KServe v2 HTTP infer request body to plain data: JSON header plus binary sections in input
// order, or the raw single-input form. Malformed bodies are INVALID_ARG, worded as Triton words them.
import { isDataType, mapConfigTypeToDataType, elementByteSize, DATATYPES, type DataType } from '../datatype.ts';
import { HerdError, internal, invalidArg, notFound } from '../errors.ts';
import { elementCount, type ParameterValue, type Parameters, type Tensor } from '../tensor.ts';
import { parseBinaryTensorData } from './kserve-binary-tensor.ts';
import { formatShape, LossyIntegerError, parseJsonTensorData } from './kserve-json-tensor.ts';
import { parseLosslessJson } from './lossless-json.ts';

export const INFERENCE_HEADER_CONTENT_LENGTH = 'Inference-Header-Content-Length';

export interface DecodedRequestedOutput {
  name: string;
  /** Every parameter of the output as sent (binary_data and classification included). */
  parameters: Parameters;
  /** The output's own `binary_data`, when set; it overrides the request's `binary_data_output`. */
  binaryData?: boolean;
  /** The classification extension's class count, when set (0 means no classification, as in Triton). */
  classification?: number;
}

export interface DecodedInferRequest {
  /** '' when the client sent none. */
  id: string;
  /** Request parameters as sent (binary_data_output, priority, timeout, sequence_* and custom ones). */
  parameters: Parameters;
  inputs: Tensor[];
  /** Outputs the client listed; empty means all of the model's outputs. */
  outputs: DecodedRequestedOutput[];
  /** Default for outputs without their own `binary_data`: `binary_data_output`, and true for the raw form. */
  binaryDataOutput: boolean;
  /** The raw single-input form (Inference-Header-Content-Length: 0). */
  raw: boolean;
}

/** The one input a raw request feeds: datatype and full shape (batch dim included); one dim may be -1, deduced from the body size. */
export interface RawInputSpec {
  name: string;
  datatype: DataType;
  shape: readonly number[];
}

/** The fields of a ModelConfig the raw form needs (structural, so core does not import serving). */
export interface RawModelDescription {
  name: string;
  max_batch_size: number;
  input: readonly { name: string; data_type: string; dims: readonly number[] }[];
}

export interface ParseInferRequestOptions {
  /** For messages, as Triton puts it in them. */
  modelName?: string;
  /** The model, whose single input the raw form (header length 0) is built from; without it a raw body is refused. */
  rawInput?: RawModelDescription;
  /** Reads an input's bytes from a registered shared memory region; without it such inputs are refused. */
  readSharedMemory?: (ref: SharedMemoryInputRef) => Uint8Array;
}

/** Where an input's bytes are (the shared-memory extension's parameters of an input). */
export interface SharedMemoryInputRef {
  input: string;
  region: string;
  offset: number;
  byteSize: number;
}

/**
 * The Inference-Header-Content-Length value: undefined when absent (the body is JSON only),
 * otherwise an integer in [0, bodyLength]. Lying lengths (non-numeric, negative, beyond the body) are INVALID_ARG.
 */
export function parseInferenceHeaderLength(value: string | readonly string[] | number | undefined, bodyLength: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' && typeof value !== 'string') {
    if (value.length !== 1) throw invalidArg(`${INFERENCE_HEADER_CONTENT_LENGTH} must be sent once, got ${value.length} values`);
    return parseInferenceHeaderLength(value[0], bodyLength);
  }
  const text = String(value).trim();
  if (!/^[+-]?\d+$/.test(text)) throw invalidArg(`Unable to parse ${INFERENCE_HEADER_CONTENT_LENGTH}, got: ${String(value)}`);
  const length = Number(text);
  if (length < 0 || length > bodyLength) {
    throw invalidArg(`inference header size should be in range (0, ${bodyLength}), got: ${text}`);
  }
  return length;
}

/**
 * Decodes an infer request body. `headerLength` is the Inference-Header-Content-Length header
 * (raw or already parsed); absent means the whole body is JSON. Tensors from binary sections are
 * views on `body` when aligned, so the body must stay untouched while they live.
 */
export function parseInferRequestBody(body: Uint8Array, headerLength?: string | readonly string[] | number, options: ParseInferRequestOptions = {}): DecodedInferRequest {
  const length = parseInferenceHeaderLength(headerLength, body.byteLength);
  if (length === 0) {
    if (options.rawInput === undefined) {
      throw internal(`a raw binary request (${INFERENCE_HEADER_CONTENT_LENGTH}: 0) needs the model's input; use parseRawInferRequest`);
    }
    try {
      return parseRawInferRequest(body, createRawInputSpec(options.rawInput), options);
    } catch (err) {
      throw looksLikeJsonRequest(body) ? explainJsonSentAsRaw(err) : err;
    }
  }
  const jsonLength = length ?? body.byteLength;
  const text = asBuffer(body).toString('utf8', 0, jsonLength);
  const source = { body, jsonLength, hasHeader: length !== undefined, modelName: options.modelName, readSharedMemory: options.readSharedMemory };
  const document = parseJsonDocument(text);
  try {
    return convertRequestDocument(document, source);
  } catch (err) {
    // JSON.parse rounded an INT64/UINT64 value beyond 2^53: read the header again, exactly.
    if (!(err instanceof LossyIntegerError)) throw err;
    return convertRequestDocument(parseLosslessJson(text), source);
  }
}

function parseJsonDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Either NaN/Infinity tokens (Triton accepts them) or a syntax error, which this reports
    // with rapidjson's wording and byte offset whatever V8's message looks like.
    return parseLosslessJson(text);
  }
}

interface BodySource {
  body: Uint8Array;
  jsonLength: number;
  hasHeader: boolean;
  modelName: string | undefined;
  readSharedMemory: ((ref: SharedMemoryInputRef) => Uint8Array) | undefined;
}

function convertRequestDocument(document: unknown, source: BodySource): DecodedInferRequest {
  if (!isObject(document)) throw invalidArg('Unable to parse the request JSON: the document root must be an object');
  const id = document['id'];
  if (id !== undefined && typeof id !== 'string') throw invalidArg("Unable to parse 'id': expected a string");
  const parameters = convertRequestParameters(document['parameters']);
  const inputs = convertInputs(document['inputs'], source);
  const outputs = convertOutputs(document['outputs'], source.readSharedMemory !== undefined);
  return {
    id: id ?? '',
    parameters,
    inputs,
    outputs,
    binaryDataOutput: parameters['binary_data_output'] === true,
    raw: false,
  };
}

function convertInputs(value: unknown, source: BodySource): Tensor[] {
  if (!Array.isArray(value)) throw invalidArg(`Unable to parse 'inputs': expected an array, got ${typeName(value)}`);
  const { body, modelName } = source;
  const tensors: Tensor[] = [];
  const seen = new Set<string>();
  let offset = source.jsonLength;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (!isObject(item)) throw invalidArg(`Unable to parse 'inputs': element ${i} is ${typeName(item)}, expected an object`);
    const name = item['name'];
    if (typeof name !== 'string' || name === '') throw invalidArg(`Unable to parse 'name' of inputs[${i}]: expected a non-empty string`);
    if (seen.has(name)) throw invalidArg(`input '${name}' already exists in request`);
    seen.add(name);
    const datatype = convertDatatype(item['datatype'], name);
    const shape = convertShape(item['shape'], name);
    const params = item['parameters'];
    if (params !== undefined && !isObject(params)) throw invalidArg(`Unable to parse 'parameters' of input '${name}': expected an object`);
    const binarySize = params?.['binary_data_size'];
    const region = params?.['shared_memory_region'];
    checkOneContentField(name, item['data'] !== undefined, binarySize !== undefined, region !== undefined);
    if (region !== undefined) {
      const ref = convertSharedMemoryRef(name, params as Record<string, unknown>);
      if (!source.readSharedMemory) throw notFound(`Unable to find shared memory region: '${ref.region}' (this decoder has no shared memory)`);
      tensors.push({
        name,
        datatype,
        shape,
        data: parseBinaryTensorData(source.readSharedMemory(ref), { name, datatype, shape, ...(modelName === undefined ? {} : { modelName }) }),
      });
      continue;
    }
    if (binarySize === undefined) {
      tensors.push({ name, datatype, shape, data: parseJsonTensorData(item['data'], { name, datatype, shape }) });
      continue;
    }
    const size = typeof binarySize === 'bigint' ? Number(binarySize) : binarySize;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw invalidArg(`Unable to parse 'binary_data_size' of input '${name}': expected a non-negative integer, got ${JSON.stringify(String(binarySize))}`);
    }
    const available = body.byteLength - offset;
    if (size > available) {
      if (!source.hasHeader) {
        throw invalidArg(
          `input '${name}' has 'binary_data_size' ${size} but the request has no ${INFERENCE_HEADER_CONTENT_LENGTH} ` +
            `header: must specify valid '${INFERENCE_HEADER_CONTENT_LENGTH}' in request header and 'binary_data_size' ` +
            'when passing inputs in binary data format',
        );
      }
      throw invalidArg(
        `unexpected size for input '${name}', expecting ${size - available} additional bytes${forModel(modelName)} ` +
          `('binary_data_size' is ${size} but only ${available} bytes of binary data remain)`,
      );
    }
    const bytes = new Uint8Array(body.buffer, body.byteOffset + offset, size);
    offset += size;
    tensors.push({ name, datatype, shape, data: parseBinaryTensorData(bytes, { name, datatype, shape, ...(modelName === undefined ? {} : { modelName }) }) });
  }
  if (offset !== body.byteLength) {
    throw invalidArg(
      `unexpected additional input data${forModel(modelName)}: ${body.byteLength - offset} bytes follow the ` +
        `${source.jsonLength}-byte JSON header and the inputs' 'binary_data_size' sections`,
    );
  }
  return tensors;
}

/** The shared_memory_* parameters of an input, with Triton's HTTP messages. */
function convertSharedMemoryRef(name: string, params: Record<string, unknown>): SharedMemoryInputRef {
  const region = params['shared_memory_region'];
  if (typeof region !== 'string') throw invalidArg("Unable to parse 'shared_memory_region'");
  const offset = toNumber(params['shared_memory_offset'] ?? 0);
  if (offset === undefined || !isUnsigned(offset)) throw invalidArg("Unable to parse 'shared_memory_offset'");
  const size = toNumber(params['shared_memory_byte_size'] ?? 0);
  if (size === undefined || !isUnsigned(size)) throw invalidArg("Unable to parse 'shared_memory_byte_size'");
  return { input: name, region, offset, byteSize: size };
}

/** A JSON integer as a number (the lossless parser yields bigint for huge ones). */
function toNumber(value: unknown): number | undefined {
  if (typeof value === 'bigint') return Number(value);
  return typeof value === 'number' ? value : undefined;
}

function checkOneContentField(name: string, hasData: boolean, hasBinary: boolean, hasRegion: boolean): void {
  const set = Number(hasData) + Number(hasBinary) + Number(hasRegion);
  if (set === 1) return;
  const which = [hasData && "'data'", hasBinary && "'binary_data_size'", hasRegion && "'shared_memory_region'"].filter(Boolean);
  throw invalidArg(
    "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', " +
      `'shared_memory_region' in 'parameters'. But ${set === 0 ? 'no field is set' : `set ${which.join(' ')}`} for input '${name}'`,
  );
}

function convertDatatype(value: unknown, name: string): DataType {
  if (typeof value !== 'string') throw invalidArg(`Unable to parse 'datatype' of input '${name}': expected a string, got ${typeName(value)}`);
  if (!isDataType(value)) throw invalidArg(`invalid datatype '${value}' for input '${name}'; expected one of ${DATATYPES.join(', ')}`);
  return value;
}

function convertShape(value: unknown, name: string): number[] {
  if (!Array.isArray(value)) throw invalidArg(`Unable to parse 'shape' of input '${name}': expected an array, got ${typeName(value)}`);
  const shape = new Array<number>(value.length);
  for (let i = 0; i < value.length; i++) {
    const d: unknown = value[i];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw invalidArg(`Unable to parse 'shape' of input '${name}': dims must be non-negative integers, got ${JSON.stringify(value, bigintReplacer)}`);
    }
    shape[i] = d;
  }
  if (!Number.isSafeInteger(elementCount(shape))) {
    throw invalidArg(`invalid shape for input '${name}': shape ${formatShape(shape)} causes total element count to exceed maximum size`);
  }
  return shape;
}

/** Parameters Triton reads itself, with the JSON types it demands of them. */
const TYPED_REQUEST_PARAMETERS: Record<string, (v: ParameterValue) => boolean> = {
  binary_data_output: (v) => typeof v === 'boolean',
  sequence_id: (v) => typeof v === 'string' || isUnsigned(v),
  sequence_start: (v) => typeof v === 'boolean',
  sequence_end: (v) => typeof v === 'boolean',
  priority: isUnsigned,
  timeout: isUnsigned,
};

function convertRequestParameters(value: unknown): Parameters {
  const params = convertParameters(value, 'request');
  for (const [key, v] of Object.entries(params)) {
    if (key.startsWith('triton_')) {
      throw invalidArg("parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.");
    }
    const check = TYPED_REQUEST_PARAMETERS[key];
    if (check !== undefined && !check(v)) throw invalidArg(`Unable to parse '${key}'`);
  }
  return params;
}

function convertParameters(value: unknown, owner: string): Parameters {
  if (value === undefined) return {};
  if (!isObject(value)) throw invalidArg(`Unable to parse 'parameters' of the ${owner}: expected an object, got ${typeName(value)}`);
  const out: Parameters = {};
  for (const [key, v] of Object.entries(value)) {
    // The lossless parser yields bigint for huge integers; parameters hold numbers, as JSON.parse gives.
    if (typeof v === 'bigint') out[key] = Number(v);
    else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    else throw invalidArg(`parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`);
  }
  return out;
}

/** `sharedMemory`: the caller writes outputs into regions (the parameters are kept for it); otherwise they are refused. */
function convertOutputs(value: unknown, sharedMemory: boolean): DecodedRequestedOutput[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidArg(`Unable to parse 'outputs': expected an array, got ${typeName(value)}`);
  const seen = new Set<string>();
  return value.map((item: unknown, i): DecodedRequestedOutput => {
    if (!isObject(item)) throw invalidArg(`Unable to parse 'outputs': element ${i} is ${typeName(item)}, expected an object`);
    const name = item['name'];
    if (typeof name !== 'string' || name === '') throw invalidArg(`Unable to parse 'name' of outputs[${i}]: expected a non-empty string`);
    if (seen.has(name)) throw invalidArg(`output '${name}' already exists in request`);
    seen.add(name);
    const parameters = convertParameters(item['parameters'], `output '${name}'`);
    const out: DecodedRequestedOutput = { name, parameters };
    const binaryData = parameters['binary_data'];
    if (binaryData !== undefined) {
      if (typeof binaryData !== 'boolean') throw invalidArg(`Unable to parse 'binary_data' of output '${name}': expected true or false`);
      out.binaryData = binaryData;
    }
    const classification = parameters['classification'];
    if (classification !== undefined) {
      if (!isUnsigned(classification)) throw invalidArg(`Unable to set 'classification' of output '${name}': expected a non-negative integer`);
      out.classification = classification;
    }
    if (parameters['shared_memory_region'] !== undefined && !sharedMemory) {
      throw notFound(`Unable to find shared memory region: ${quoteRegion(parameters['shared_memory_region'])} (output '${name}'; this decoder has no shared memory)`);
    }
    return out;
  });
}

/**
 * The raw form's input from the model config, with Triton's rules: exactly one input; BYTES only
 * with shape [1]; at most one variable dim, deduced from the body size. Batching models get batch 1.
 */
export function createRawInputSpec(model: RawModelDescription): RawInputSpec {
  const prefix = '[request id: <id_unknown>] ';
  if (model.input.length !== 1) {
    // Triton's words ("Raw request must only have 1 input (found 1) to be deduced but got N inputs")
    // count the body as the "1 input"; this says what a raw request is and what to send instead.
    const names = model.input.map((i) => i.name).join(', ');
    throw invalidArg(
      `${prefix}a raw request (${INFERENCE_HEADER_CONTENT_LENGTH}: 0: the whole body is the data of the model's one input) needs a model with exactly 1 input, ` +
        `but model '${model.name}' has ${model.input.length === 0 ? 'none' : `${model.input.length} (${names})`}; ` +
        `send a JSON request instead (binary tensor data may follow the JSON, with ${INFERENCE_HEADER_CONTENT_LENGTH} set to the JSON's length)`,
    );
  }
  const input = model.input[0];
  const datatype = mapConfigTypeToDataType(input.data_type);
  if (datatype === undefined) throw invalidArg(`${prefix}input '${input.name}' of model '${model.name}' has no usable datatype (${input.data_type})`);
  const shape = model.max_batch_size !== 0 ? [1, ...input.dims] : [...input.dims];
  const variable = input.dims.filter((d) => d === -1).length;
  if (variable > 1) {
    throw invalidArg(`${prefix}The shape of the raw input '${input.name}' can not be deduced because there are more than one variable-sized dimension`);
  }
  if (datatype === 'BYTES' && (variable > 0 || elementCount(input.dims) !== 1)) {
    throw invalidArg(`${prefix}For BYTE datatype raw input '${input.name}', the model must have input shape [1]`);
  }
  return { name: input.name, datatype, shape };
}

/**
 * The raw form: the whole body is the one input's data (for BYTES, the one element's bytes).
 * No id, no parameters, every output requested, all outputs binary (as Triton answers raw requests).
 */
export function parseRawInferRequest(body: Uint8Array, input: RawInputSpec, options: Pick<ParseInferRequestOptions, 'modelName'> = {}): DecodedInferRequest {
  const { name, datatype } = input;
  const shape = [...input.shape];
  let tensor: Tensor;
  if (datatype === 'BYTES') {
    if (shape.some((d) => d < 0) || elementCount(shape) !== 1) {
      throw invalidArg(`[request id: <id_unknown>] For BYTE datatype raw input '${name}', the model must have input shape [1]`);
    }
    tensor = { name, datatype, shape, data: [new Uint8Array(body.buffer, body.byteOffset, body.byteLength)] };
  } else {
    deduceVariableDim(shape, body.byteLength, input);
    const { modelName } = options;
    tensor = { name, datatype, shape, data: parseBinaryTensorData(body, { name, datatype, shape, ...(modelName === undefined ? {} : { modelName }) }) };
  }
  return { id: '', parameters: {}, inputs: [tensor], outputs: [], binaryDataOutput: true, raw: true };
}

/** A body that starts with `{` and ends with `}`: a JSON request, not raw tensor bytes. */
function looksLikeJsonRequest(body: Uint8Array): boolean {
  let first = 0;
  let last = body.byteLength - 1;
  while (first <= last && isJsonSpace(body[first] as number)) first++;
  while (last >= first && isJsonSpace(body[last] as number)) last--;
  return first < last && body[first] === 0x7b && body[last] === 0x7d;
}

const isJsonSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

function explainJsonSentAsRaw(err: unknown): unknown {
  if (!(err instanceof HerdError)) return err;
  return new HerdError(
    err.code,
    `${err.message}. The body looks like a JSON request, but ${INFERENCE_HEADER_CONTENT_LENGTH}: 0 makes it raw tensor data: ` +
      `leave the header out to send JSON, or set it to the JSON's length in bytes when binary data follows`,
    { cause: err },
  );
}

function deduceVariableDim(shape: number[], byteLength: number, input: RawInputSpec): void {
  const axis = shape.indexOf(-1);
  if (axis < 0) return;
  if (shape.indexOf(-1, axis + 1) >= 0) {
    throw invalidArg(`[request id: <id_unknown>] The shape of the raw input '${input.name}' can not be deduced because there are more than one variable-sized dimension`);
  }
  const rowBytes = (elementByteSize(input.datatype) ?? 1) * shape.reduce((n, d) => (d === -1 ? n : n * d), 1);
  if (rowBytes === 0 || byteLength % rowBytes !== 0) {
    throw invalidArg(
      `raw input '${input.name}' has ${byteLength} bytes, which is not a whole number of ${input.datatype} ` +
        `rows of shape ${formatShape(shape)} (${rowBytes} bytes per step of the variable dim)`,
    );
  }
  shape[axis] = byteLength / rowBytes;
}

function asBuffer(body: Uint8Array): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUnsigned(value: ParameterValue): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function typeName(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

function forModel(modelName: string | undefined): string {
  return modelName === undefined ? '' : ` for model '${modelName}'`;
}

/** Triton's quoting of a region name ('r'); a value that is not a string is shown as JSON. */
function quoteRegion(region: unknown): string {
  return typeof region === 'string' ? `'${region}'` : JSON.stringify(region);
}
