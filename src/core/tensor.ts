// The one tensor shape every part of Herd passes around: name, datatype, shape and a typed array.
// BOOL is a Uint8Array of 0/1; FP16 and BF16 are Uint16Array of raw bits; BYTES is an array of byte strings.
import type { DataType } from './datatype.ts';

export type NumericTensorData = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | BigUint64Array | BigInt64Array | Float32Array | Float64Array;

export type TensorData = NumericTensorData | Uint8Array[];

export type ParameterValue = string | number | boolean;
export type Parameters = Record<string, ParameterValue>;

export interface Tensor {
  name: string;
  datatype: DataType;
  shape: number[];
  data: TensorData;
}

/** Product of the dims; an empty shape is a scalar of one element. */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** A new typed array of the right kind for `datatype` and `count` elements. */
export function allocateTensorData(datatype: DataType, count: number): TensorData {
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
      return new Uint8Array(count);
    case 'INT8':
      return new Int8Array(count);
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return new Uint16Array(count);
    case 'INT16':
      return new Int16Array(count);
    case 'UINT32':
      return new Uint32Array(count);
    case 'INT32':
      return new Int32Array(count);
    case 'UINT64':
      return new BigUint64Array(count);
    case 'INT64':
      return new BigInt64Array(count);
    case 'FP32':
      return new Float32Array(count);
    case 'FP64':
      return new Float64Array(count);
    case 'BYTES':
      return new Array<Uint8Array>(count).fill(new Uint8Array(0));
  }
}

export function isBytesData(data: TensorData): data is Uint8Array[] {
  return Array.isArray(data);
}
