// What a `js` backend model file sees: the shapes of initialize(args) / execute(requests) and the small
// helpers handed to it as `args.herd`, so a model file needs no import from Herd to build tensors.
import { isDataType, type DataType } from '../../../core/datatype.ts';
import { HerdError, type ErrorCode } from '../../../core/errors.ts';
import { elementCount, type Parameters, type Tensor, type TensorData } from '../../../core/tensor.ts';
import type { ModelConfig } from '../../model-config/model-config.ts';
import { loadTokenizer, type ModelTokenizer, type TokenizerEncoding } from './model-tokenizer.ts';

/**
 * Argument of `initialize(args)`; keys mirror Triton's Python backend so ported models read the same
 * fields. Differences: `model_config` is the parsed ModelConfig object, not a JSON string, and `herd`
 * carries the helpers below.
 */
export interface JsModelArgs {
  /** A private deep copy: the model may keep or change it without affecting the server. */
  model_config: ModelConfig;
  model_name: string;
  /** A string, as in Triton's Python backend. */
  model_version: string;
  /** The model's directory `<repository>/<model>` (Triton names it so), not the repository root. */
  model_repository: string;
  model_instance_name: string;
  model_instance_kind: 'CPU' | 'GPU' | 'MODEL';
  /** Always '0': Herd runs JS models on the CPU. */
  model_instance_device_id: string;
  herd: JsModelHelpers;
}

/** One request as a model's execute() sees it. */
export interface JsModelRequest {
  readonly id: string;
  readonly parameters: Readonly<Parameters>;
  /** The named input, or undefined when the client did not send it (an optional input). */
  input(name: string): Tensor | undefined;
  inputs(): Tensor[];
  /** Outputs to produce; every output of the config when the client named none (as Triton does). */
  requestedOutputNames(): string[];
  /**
   * Aborted when the client went away (HTTP disconnect) or cancelled (gRPC cancel or deadline) while the
   * model runs: a long execute() may stop early; what it then returns for the request is discarded.
   */
  readonly signal: AbortSignal;
  /**
   * Decoupled models only (`model_transaction_policy { decoupled: true }`): where this request's
   * responses go, any number of them, then the final flag; execute() then returns nothing for it.
   */
  responseSender?(): JsResponseSender;
}

/** A decoupled request's responses, as a model sends them (Triton's InferenceResponseSender). */
export interface JsResponseSender {
  /** One response; `{ final: true }` also completes the request. Throws once the request is complete. */
  send(response: JsModelResponse, options?: { final?: boolean }): void;
  /** Completes the request with no further response. */
  close(): void;
  /** True once the client went away or cancelled the request. */
  isCancelled(): boolean;
}

/**
 * What execute() returns for each request. `error` may be a string, any Error (reported as INTERNAL)
 * or an error made with `herd.createError(code, message)` to choose the status the client sees.
 */
export type JsModelResponse = { outputs: Tensor[]; parameters?: Parameters } | { error: string | Error };

/** The object form of a model; a default-exported class is instantiated with no arguments. */
export interface JsModel {
  initialize?(args: JsModelArgs): void | Promise<void>;
  /** Decoupled models send through each request's responseSender() and may return nothing. */
  execute(requests: JsModelRequest[]): JsModelResponse[] | undefined | Promise<JsModelResponse[] | undefined>;
  finalize?(): void | Promise<void>;
}

/** Error codes a model may put on its errors; they match Triton's TRITONSERVER_Error codes. */
export const MODEL_ERROR_CODES = ['INVALID_ARG', 'NOT_FOUND', 'UNAVAILABLE', 'UNSUPPORTED', 'INTERNAL'] as const;
export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number] & ErrorCode;

/** Values createTensor accepts besides a typed array of the right kind. */
export type TensorValues = TensorData | readonly (number | bigint | boolean)[] | readonly (string | Uint8Array)[];

export interface JsModelHelpers {
  createTensor(name: string, datatype: DataType, shape: readonly number[], data: TensorValues): Tensor;
  encodeBytes(text: string): Uint8Array;
  decodeBytes(bytes: Uint8Array): string;
  decodeStrings(tensor: Tensor): string[];
  createError(code: ModelErrorCode, message: string): Error;
  /**
   * Herd's tokenizer (gpt-tokenizer; default o200k_base, GPT-4o/4.1's encoding). Await it in initialize():
   * `this.tokenizer = await args.herd.loadTokenizer()`, then `this.tokenizer.countTokens(text)` per request.
   */
  loadTokenizer(encoding?: TokenizerEncoding): Promise<ModelTokenizer>;
}

const encoder = new TextEncoder();
// Not fatal: a malformed byte becomes U+FFFD rather than failing the request, like Python's errors='replace'.
const decoder = new TextDecoder('utf-8');

export function encodeBytes(text: string): Uint8Array {
  return encoder.encode(text);
}

export function decodeBytes(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Every element of a BYTES tensor as UTF-8 text, in row-major order. */
export function decodeStrings(tensor: Tensor): string[] {
  if (!Array.isArray(tensor.data)) {
    throw new HerdError('INTERNAL', `decodeStrings: tensor '${tensor.name}' is ${tensor.datatype}, not BYTES`);
  }
  return tensor.data.map(decodeBytes);
}

export function createError(code: ModelErrorCode, message: string): Error {
  if (!(MODEL_ERROR_CODES as readonly string[]).includes(code)) {
    throw new HerdError('INTERNAL', `createError: unknown code '${String(code)}'; use one of ${MODEL_ERROR_CODES.join(', ')}`);
  }
  return new HerdError(code, message);
}

/**
 * A tensor from plain values: numbers (or bigints for INT64/UINT64), booleans or 0/1 for BOOL, strings
 * or byte arrays for BYTES, or a typed array of the datatype's kind (used as is, not copied).
 * FP16 and BF16 take raw bits as a Uint16Array. Throws (INTERNAL) when the count does not match the
 * shape or a plain value does not fit the datatype, rather than letting a typed array wrap it.
 */
export function createTensor(name: string, datatype: DataType, shape: readonly number[], data: TensorValues): Tensor {
  const where = `createTensor('${name}')`;
  if (!isDataType(datatype)) throw new HerdError('INTERNAL', `${where}: unknown datatype '${String(datatype)}'`);
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new HerdError('INTERNAL', `${where}: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
  }
  const values = convertValues(datatype, data, where);
  const expected = elementCount(shape);
  if (values.length !== expected) {
    throw new HerdError('INTERNAL', `${where}: shape [${shape.join(',')}] needs ${expected} elements, data has ${values.length}`);
  }
  return { name, datatype, shape: [...shape], data: values };
}

function convertValues(datatype: DataType, data: TensorValues, where: string): TensorData {
  if (datatype === 'BYTES') {
    if (!Array.isArray(data)) throw new HerdError('INTERNAL', `${where}: BYTES data must be an array of strings or Uint8Array`);
    return data.map((v: unknown, i: number) => {
      if (typeof v === 'string') return encodeBytes(v);
      if (v instanceof Uint8Array) return v;
      throw new HerdError('INTERNAL', `${where}: BYTES element ${i} is ${typeof v}, not a string or Uint8Array`);
    });
  }
  const Kind = TYPED_ARRAYS[datatype];
  if (data instanceof Kind) return data;
  if (ArrayBuffer.isView(data)) {
    throw new HerdError('INTERNAL', `${where}: ${datatype} needs a ${Kind.name}, got ${data.constructor.name}`);
  }
  if (!Array.isArray(data)) throw new HerdError('INTERNAL', `${where}: data must be an array or a ${Kind.name}`);
  if (datatype === 'FP16' || datatype === 'BF16') {
    throw new HerdError('INTERNAL', `${where}: ${datatype} takes raw bits as a Uint16Array`);
  }
  const items = data as readonly unknown[];
  if (datatype === 'INT64' || datatype === 'UINT64') {
    const out = datatype === 'INT64' ? new BigInt64Array(items.length) : new BigUint64Array(items.length);
    const [min, max] = datatype === 'INT64' ? [-(2n ** 63n), 2n ** 63n - 1n] : [0n, 2n ** 64n - 1n];
    items.forEach((v, i) => {
      const n = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;
      if (n === undefined || n < min || n > max) {
        throw new HerdError('INTERNAL', `${where}: ${datatype} element ${i} is ${String(v)}, not an integer in [${min}, ${max}]`);
      }
      out[i] = n;
    });
    return out;
  }
  const out = new Kind(items.length) as Exclude<NumericArray, BigInt64Array | BigUint64Array>;
  const range = INTEGER_RANGES[datatype];
  items.forEach((v, i) => {
    if (datatype === 'BOOL' && (typeof v === 'boolean' || v === 0 || v === 1)) out[i] = v ? 1 : 0;
    else if (datatype === 'BOOL') throw new HerdError('INTERNAL', `${where}: BOOL element ${i} is ${String(v)}, not a boolean or 0/1`);
    else if (typeof v !== 'number') throw new HerdError('INTERNAL', `${where}: ${datatype} element ${i} is ${typeof v}, not a number`);
    // A typed array would silently wrap or truncate; a model bug should show instead.
    else if (range && !(Number.isInteger(v) && v >= range[0] && v <= range[1])) {
      throw new HerdError('INTERNAL', `${where}: ${datatype} element ${i} is ${v}, not an integer in [${range[0]}, ${range[1]}]`);
    } else out[i] = v;
  });
  return out;
}

const INTEGER_RANGES: Partial<Record<DataType, readonly [number, number]>> = {
  UINT8: [0, 0xff],
  INT8: [-0x80, 0x7f],
  UINT16: [0, 0xffff],
  INT16: [-0x8000, 0x7fff],
  UINT32: [0, 0xffffffff],
  INT32: [-0x80000000, 0x7fffffff],
};

type NumericArray = Exclude<TensorData, Uint8Array[]>;
type TypedArrayKind = { new (length: number): NumericArray; readonly name: string };

/** The typed array that holds each non-BYTES datatype (the same table as core's allocateTensorData). */
export const TYPED_ARRAYS: Record<Exclude<DataType, 'BYTES'>, TypedArrayKind> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  INT8: Int8Array,
  UINT16: Uint16Array,
  INT16: Int16Array,
  FP16: Uint16Array,
  BF16: Uint16Array,
  UINT32: Uint32Array,
  INT32: Int32Array,
  UINT64: BigUint64Array,
  INT64: BigInt64Array,
  FP32: Float32Array,
  FP64: Float64Array,
};

/** The object passed as `args.herd`. */
export const modelHelpers: JsModelHelpers = Object.freeze({ createTensor, encodeBytes, decodeBytes, decodeStrings, createError, loadTokenizer });
