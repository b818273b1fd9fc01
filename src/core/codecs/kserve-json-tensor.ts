// KServe v2 JSON tensor `data` (flat or nested, row-major) to a typed array and back; 64-bit
// integers beyond 2^53 stay exact both ways, FP16/BF16 travel as numbers (Triton refuses them in JSON).
import type { DataType } from '../datatype.ts';
import { HerdError, invalidArg } from '../errors.ts';
import { elementCount, type NumericTensorData, type Tensor, type TensorData } from '../tensor.ts';
import { convertBf16BitsToFloats, convertFloatToBf16Bits, convertFloatToHalfBits, convertHalfBitsToFloats } from './fp16.ts';

export type JsonTensorValue = number | boolean | string;

export interface JsonTensorContext {
  name: string;
  datatype: DataType;
  shape: readonly number[];
  /** Which side the tensor is on, for messages; default 'input'. */
  role?: 'input' | 'output';
}

/** Same depth limit as Triton's HTTP front end (HTTP_MAX_JSON_NESTING_DEPTH). */
export const MAX_JSON_DATA_DEPTH = 100;

/**
 * An INT64/UINT64 element JSON.parse could not hold exactly (an integer beyond 2^53).
 * The request parser catches it and re-reads the body with the lossless parser; anyone else
 * gets a plain INVALID_ARG.
 */
export class LossyIntegerError extends HerdError {
  constructor(message: string) {
    super('INVALID_ARG', message);
  }
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * JSON `data` to the typed array for `datatype`. Any nesting is flattened (Triton counts leaves
 * and so do we); the leaf count must equal the shape's element count. Values are checked, never
 * clamped: 300 for UINT8 or 1.5 for INT32 is an error. bigint leaves (from the lossless parser)
 * are accepted where they fit.
 */
export function parseJsonTensorData(data: unknown, context: JsonTensorContext): TensorData {
  if (!Array.isArray(data)) {
    throw invalidArg(`Unable to parse 'data' for ${label(context)}: expected an array, got ${describe(data)}`);
  }
  const values = data.length > 0 && Array.isArray(data[0]) ? flattenJsonData(data, context) : data;
  const expected = elementCount(context.shape);
  if (values.length !== expected) {
    throw invalidArg(`Unable to parse 'data' for ${label(context)}: shape ${formatShape(context.shape)} has ${expected} ` + `element(s) but 'data' has ${values.length}`);
  }
  return convertValues(values, context);
}

function flattenJsonData(data: readonly unknown[], context: JsonTensorContext): unknown[] {
  const out: unknown[] = [];
  // Iterative walk: a hostile body cannot blow the stack, and the depth limit matches Triton.
  const stack: { items: readonly unknown[]; index: number }[] = [{ items: data, index: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.index >= top.items.length) {
      stack.pop();
      continue;
    }
    const item = top.items[top.index++];
    if (Array.isArray(item)) {
      if (stack.length >= MAX_JSON_DATA_DEPTH) {
        throw invalidArg(`Unable to parse 'data' for ${label(context)}: JSON nesting depth exceeds maximum allowed limit (${MAX_JSON_DATA_DEPTH})`);
      }
      stack.push({ items: item, index: 0 });
    } else {
      out.push(item);
    }
  }
  return out;
}

function convertValues(values: readonly unknown[], context: JsonTensorContext): TensorData {
  const n = values.length;
  switch (context.datatype) {
    case 'BOOL': {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (v === true) out[i] = 1;
        else if (v !== false) throw elementError(context, i, v, 'true or false');
      }
      return out;
    }
    case 'UINT8':
      return fillIntegers(new Uint8Array(n), values, 0, 0xff, context);
    case 'UINT16':
      return fillIntegers(new Uint16Array(n), values, 0, 0xffff, context);
    case 'UINT32':
      return fillIntegers(new Uint32Array(n), values, 0, 0xffffffff, context);
    case 'INT8':
      return fillIntegers(new Int8Array(n), values, -0x80, 0x7f, context);
    case 'INT16':
      return fillIntegers(new Int16Array(n), values, -0x8000, 0x7fff, context);
    case 'INT32':
      return fillIntegers(new Int32Array(n), values, -0x80000000, 0x7fffffff, context);
    case 'UINT64':
      return fillBigIntegers(new BigUint64Array(n), values, 0n, 0xffffffffffffffffn, context);
    case 'INT64':
      return fillBigIntegers(new BigInt64Array(n), values, -0x8000000000000000n, 0x7fffffffffffffffn, context);
    case 'FP32': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = toFloat(values[i], i, context);
      return out;
    }
    case 'FP64': {
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = toFloat(values[i], i, context);
      return out;
    }
    case 'FP16': {
      const out = new Uint16Array(n);
      for (let i = 0; i < n; i++) out[i] = convertFloatToHalfBits(toFloat(values[i], i, context));
      return out;
    }
    case 'BF16': {
      const out = new Uint16Array(n);
      for (let i = 0; i < n; i++) out[i] = convertFloatToBf16Bits(toFloat(values[i], i, context));
      return out;
    }
    case 'BYTES': {
      const out = new Array<Uint8Array>(n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        if (typeof v !== 'string') throw elementError(context, i, v, 'a string');
        out[i] = utf8Encoder.encode(v);
      }
      return out;
    }
  }
}

function toFloat(v: unknown, index: number, context: JsonTensorContext): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw elementError(context, index, v, 'a number');
}

function fillIntegers<T extends Uint8Array | Uint16Array | Uint32Array | Int8Array | Int16Array | Int32Array>(
  out: T,
  values: readonly unknown[],
  min: number,
  max: number,
  context: JsonTensorContext,
): T {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max) {
      out[i] = v;
      continue;
    }
    if ((typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint') {
      throw elementError(context, i, v, `an integer in [${min}, ${max}]`);
    }
    throw elementError(context, i, v, 'an integer');
  }
  return out;
}

function fillBigIntegers<T extends BigInt64Array | BigUint64Array>(out: T, values: readonly unknown[], min: bigint, max: bigint, context: JsonTensorContext): T {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    let big: bigint;
    if (typeof v === 'number' && Number.isSafeInteger(v)) big = BigInt(v);
    else if (typeof v === 'bigint') big = v;
    else if (typeof v === 'number' && Number.isInteger(v)) {
      throw new LossyIntegerError(
        `Unable to parse 'data' for ${label(context)}: element ${i} is ${v}, beyond 2^53, and was not written as a plain integer literal, so its exact value is unknown`,
      );
    } else {
      throw elementError(context, i, v, 'an integer');
    }
    if (big < min || big > max) throw elementError(context, i, v, `an integer in [${min}, ${max}]`);
    out[i] = big;
  }
  return out;
}

/** The tensor's elements as a flat JSON-able array (row-major). 64-bit integers beyond 2^53 lose precision here; use convertTensorDataToJsonText for exact output. */
export function convertTensorToJsonData(tensor: Pick<Tensor, 'datatype' | 'data'>): JsonTensorValue[] {
  const { datatype, data } = tensor;
  if (Array.isArray(data)) return data.map((bytes) => utf8Decoder.decode(bytes));
  if (datatype === 'BOOL') return Array.from(data as Uint8Array, (v) => v !== 0);
  if (datatype === 'FP16') return Array.from(convertHalfBitsToFloats(data as Uint16Array));
  if (datatype === 'BF16') return Array.from(convertBf16BitsToFloats(data as Uint16Array));
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) return Array.from(data, Number);
  return Array.from(data as ArrayLike<number>);
}

/**
 * The tensor's elements as JSON array text, exactly: 64-bit integers keep every digit, and
 * NaN/Infinity are written as the bare tokens Triton's rapidjson writer emits (Python's json reads them).
 * BYTES elements that are not valid UTF-8 get U+FFFD replacements.
 */
export function convertTensorDataToJsonText(tensor: Pick<Tensor, 'datatype' | 'data'>): string {
  const { datatype, data } = tensor;
  if (Array.isArray(data)) {
    const parts = new Array<string>(data.length);
    for (let i = 0; i < data.length; i++) parts[i] = JSON.stringify(utf8Decoder.decode(data[i]));
    return `[${parts.join(',')}]`;
  }
  if (datatype === 'BOOL') {
    const parts = new Array<string>(data.length);
    for (let i = 0; i < data.length; i++) parts[i] = data[i] === 0 ? 'false' : 'true';
    return `[${parts.join(',')}]`;
  }
  if (datatype === 'FP16') return writeNumbers(convertHalfBitsToFloats(data as Uint16Array));
  if (datatype === 'BF16') return writeNumbers(convertBf16BitsToFloats(data as Uint16Array));
  // bigint digits are exact through join; JSON.stringify would throw on them.
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) return `[${data.join(',')}]`;
  return writeNumbers(data as Exclude<typeof data, BigInt64Array | BigUint64Array>);
}

function writeNumbers(data: Exclude<NumericTensorData, BigInt64Array | BigUint64Array>): string {
  // JSON.stringify of a plain array is faster than a typed array's join (docs/decisions/json-tensor-encoding.md)
  // but writes null for NaN/Infinity, so non-finite data goes through join, which writes the
  // NaN/Infinity/-Infinity tokens rapidjson writes with kWriteNanAndInfFlag.
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i])) return `[${data.join(',')}]`;
  }
  return JSON.stringify(Array.from(data));
}

export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

function label(context: JsonTensorContext): string {
  return `${context.role ?? 'input'} '${context.name}'`;
}

function elementError(context: JsonTensorContext, index: number, value: unknown, expected: string): HerdError {
  return invalidArg(`Unable to parse 'data' for ${label(context)}: element ${index} is ${describe(value)}, ` + `expected ${expected} for datatype ${context.datatype}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'object') return 'an object';
  if (value === undefined) return 'missing';
  return String(value);
}
