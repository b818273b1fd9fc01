// InferTensorContents (the typed `contents` of a gRPC input) to a tensor's typed array, with Triton's
// checks: one contents field, of the kind the datatype takes, holding as many elements as the shape.
import { elementByteSize, type DataType } from '../core/datatype.ts';
import { invalidArg } from '../core/errors.ts';
import { elementCount, type TensorData } from '../core/tensor.ts';
import type { InferTensorContentsMessage } from './grpc-messages.ts';

type ContentsField = keyof InferTensorContentsMessage;

/** The contents field each datatype is carried in, and the type name Triton's message gives it. */
const FIELD_OF: Record<DataType, [ContentsField, string] | undefined> = {
  BOOL: ['bool_contents', 'BOOL'],
  INT8: ['int_contents', 'INT8'],
  INT16: ['int_contents', 'INT16'],
  INT32: ['int_contents', 'INT32'],
  INT64: ['int64_contents', 'INT64'],
  UINT8: ['uint_contents', 'UINT8'],
  UINT16: ['uint_contents', 'UINT16'],
  UINT32: ['uint_contents', 'UINT32'],
  UINT64: ['uint64_contents', 'UINT64'],
  FP32: ['fp32_contents', 'FP32'],
  FP64: ['fp64_contents', 'FP64'],
  BYTES: ['bytes_contents', 'BYTES'],
  FP16: undefined,
  BF16: undefined,
};

/** What Triton names a field's tensor type when it does not match the input's datatype. */
const FIELD_TYPE: Record<ContentsField, string> = {
  bool_contents: 'BOOL',
  int_contents: 'INT32',
  int64_contents: 'INT64',
  uint_contents: 'UINT32',
  uint64_contents: 'UINT64',
  fp32_contents: 'FP32',
  fp64_contents: 'FP64',
  bytes_contents: 'BYTES',
};

export interface TypedContentsContext {
  name: string;
  modelName: string;
  datatype: DataType;
  shape: readonly number[];
}

export function convertTypedContents(contents: InferTensorContentsMessage, context: TypedContentsContext): TensorData {
  const present = (Object.keys(FIELD_TYPE) as ContentsField[]).filter((f) => contents[f].length > 0);
  const where = `input tensor '${context.name}' for model '${context.modelName}'`;
  if (present.length > 1) throw invalidArg(`unexpected explicit tensor data for ${where}, binary data was already supplied.`);
  const expected = FIELD_OF[context.datatype];
  const field = present[0];
  if (field !== undefined && (expected === undefined || expected[0] !== field)) {
    const fieldType = expected && expected[0] === field ? expected[1] : FIELD_TYPE[field];
    throw invalidArg(`unexpected explicit tensor data for ${where} of type '${fieldType}', expected datatype '${context.datatype}'`);
  }
  const count = elementCount(context.shape);
  const values = field === undefined ? [] : contents[field];
  if (values.length !== count) {
    if (context.datatype === 'BYTES')
      throw invalidArg(`expected ${count} string elements for inference input '${context.name}' for model '${context.modelName}', got ${values.length}`);
    const size = elementByteSize(context.datatype) ?? 1;
    throw invalidArg(`input byte size mismatch for input '${context.name}' for model '${context.modelName}'. Expected ${count * size}, got ${values.length * size}`);
  }
  switch (context.datatype) {
    case 'BOOL':
      return Uint8Array.from(contents.bool_contents, (b) => (b ? 1 : 0));
    // Narrow types keep the low bytes of each 32-bit value, as Triton does on little-endian hosts.
    case 'INT8':
      return Int8Array.from(contents.int_contents);
    case 'INT16':
      return Int16Array.from(contents.int_contents);
    case 'INT32':
      return Int32Array.from(contents.int_contents);
    case 'UINT8':
      return Uint8Array.from(contents.uint_contents);
    case 'UINT16':
      return Uint16Array.from(contents.uint_contents);
    case 'UINT32':
      return Uint32Array.from(contents.uint_contents);
    case 'INT64':
      return BigInt64Array.from(contents.int64_contents, (v) => BigInt.asIntN(64, BigInt(v)));
    case 'UINT64':
      return BigUint64Array.from(contents.uint64_contents, (v) => BigInt.asUintN(64, BigInt(v)));
    case 'FP32':
      return Float32Array.from(contents.fp32_contents);
    case 'FP64':
      return Float64Array.from(contents.fp64_contents);
    case 'BYTES':
      return contents.bytes_contents.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    case 'FP16':
    case 'BF16':
      return new Uint16Array(0);
  }
}
