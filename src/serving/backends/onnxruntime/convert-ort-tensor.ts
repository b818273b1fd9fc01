// Converts Herd tensors to onnxruntime tensors and back. Numeric data is passed as the same typed array
// (no copy: ORT reads the JS buffer in place); BYTES is the one exception, ORT wants JS strings.
import * as ort from 'onnxruntime-node';
import type { DataType } from '../../../core/datatype.ts';
import { internal, invalidArg, unsupported } from '../../../core/errors.ts';
import { elementCount, isBytesData, type Tensor, type TensorData } from '../../../core/tensor.ts';
import { mapDataTypeToOrtType, mapOrtTypeToDataType } from './ort-datatype.ts';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

type TypedArrayConstructor =
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Uint16ArrayConstructor
  | Int16ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | BigUint64ArrayConstructor
  | BigInt64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

const ARRAY_FOR: Record<Exclude<DataType, 'BYTES' | 'BF16'>, TypedArrayConstructor> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
};

function decodeStrings(tensor: Tensor, data: Uint8Array[]): string[] {
  return data.map((bytes, i) => {
    try {
      return utf8Decoder.decode(bytes);
    } catch {
      throw invalidArg(`input '${tensor.name}' element ${i} is not valid UTF-8; onnxruntime string tensors need UTF-8 text`);
    }
  });
}

/**
 * Throws what convertTensorToOrt would, without building anything: the instance checks each request this
 * way before concatenating a batch, so a bad request fails alone instead of failing the whole run.
 */
export function validateTensorForOrt(tensor: Tensor, shape: readonly number[]): void {
  const ortType = mapDataTypeToOrtType(tensor.datatype);
  if (ortType === undefined) {
    throw unsupported(`input '${tensor.name}': datatype ${tensor.datatype} is not supported by the onnxruntime backend`);
  }
  const count = elementCount(shape);
  if (tensor.data.length !== count) {
    throw invalidArg(`input '${tensor.name}' has ${tensor.data.length} elements but shape [${shape.join(', ')}] needs ${count}`);
  }
  if (isBytesData(tensor.data)) {
    if (ortType !== 'string') throw internal(`input '${tensor.name}': ${tensor.datatype} data given as byte strings`);
    return;
  }
  const expected = ARRAY_FOR[tensor.datatype as keyof typeof ARRAY_FOR];
  if (!(tensor.data instanceof expected)) {
    throw internal(`input '${tensor.name}': ${tensor.datatype} data must be a ${expected.name}, got ${tensor.data.constructor.name}`);
  }
}

/** An ort.Tensor over the same memory as `tensor.data`, with `shape` (the model-side shape after reshape). */
export function convertTensorToOrt(tensor: Tensor, shape: readonly number[]): ort.Tensor {
  validateTensorForOrt(tensor, shape);
  if (isBytesData(tensor.data)) return new ort.Tensor('string', decodeStrings(tensor, tensor.data), shape);
  // The constructor's overloads are keyed by a literal type; validateTensorForOrt guarantees the pairing.
  return new ort.Tensor(mapDataTypeToOrtType(tensor.datatype) as 'float32', tensor.data as Float32Array, shape);
}

/** A Herd tensor named `name` from an ORT output; `datatype` is the config's, checked against what ORT produced. */
export function convertOrtToTensor(name: string, value: ort.Tensor, datatype: DataType, shape: number[]): Tensor {
  const produced = mapOrtTypeToDataType(value.type);
  if (produced !== datatype) {
    throw internal(`output '${name}': the model produced ${value.type} but the configuration declares ${datatype}`);
  }
  let data: TensorData;
  if (datatype === 'BYTES') {
    data = (value.data as readonly string[]).map((s) => utf8Encoder.encode(s));
  } else if (datatype === 'FP16' && !(value.data instanceof Uint16Array)) {
    // Where the runtime has Float16Array, ORT hands one back; Herd's FP16 is raw bits, so view it as uint16.
    const view = value.data as ArrayBufferView & { length: number };
    data = new Uint16Array(view.buffer, view.byteOffset, view.length);
  } else {
    data = value.data as TensorData;
  }
  return { name, datatype, shape, data };
}
