// The binary tensor data extension's raw bytes to a typed array and back (little-endian, row-major;
// BYTES as 4-byte LE length + bytes per element), zero-copy where the bytes are aligned.
import { elementByteSize, type DataType } from '../datatype.ts';
import { invalidArg } from '../errors.ts';
import { elementCount, isBytesData, type Tensor, type TensorData } from '../tensor.ts';

export interface BinaryTensorContext {
  name: string;
  datatype: DataType;
  shape: readonly number[];
  /** For messages only. */
  modelName?: string;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Raw bytes to the typed array for `datatype` and `shape`. Numeric results are views on `bytes`
 * when its offset is a multiple of the element size (so the caller must not reuse that memory
 * while the tensor lives); BYTES elements are always views. BOOL bytes other than 0/1 mean true
 * and are normalised to 1 in a copy.
 */
export function parseBinaryTensorData(bytes: Uint8Array, context: BinaryTensorContext): TensorData {
  const count = elementCount(context.shape);
  if (context.datatype === 'BYTES') return parseBinaryBytes(bytes, count, context);

  const size = elementByteSize(context.datatype) ?? 1;
  const expected = count * size;
  if (bytes.byteLength !== expected) {
    throw invalidArg(`input byte size mismatch for input '${context.name}'${forModel(context)}. Expected ${expected}, got ${bytes.byteLength}`);
  }
  let buffer = bytes.buffer;
  let offset = bytes.byteOffset;
  if (offset % size !== 0 || (!LITTLE_ENDIAN_HOST && size > 1)) {
    // Node's allocUnsafe starts every allocation on an 8-byte boundary, aligned for every element size,
    // and serves small ones from a shared slab: no zero-fill and no backing store of their own. Socket
    // reads put sections at any offset, so this copy is the common case for small binary inputs.
    // (Not bytes.slice(): on a Buffer that is a view, not a copy.)
    const pooled = Buffer.allocUnsafe(bytes.byteLength);
    const copy = pooled.byteOffset % 8 === 0 ? pooled : new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    if (!LITTLE_ENDIAN_HOST) swapBytes(copy, size);
    buffer = copy.buffer;
    offset = copy.byteOffset;
  }
  switch (context.datatype) {
    case 'BOOL':
      return normaliseBool(new Uint8Array(buffer, offset, count));
    case 'UINT8':
      return new Uint8Array(buffer, offset, count);
    case 'INT8':
      return new Int8Array(buffer, offset, count);
    case 'UINT16':
    case 'FP16':
    case 'BF16':
      return new Uint16Array(buffer, offset, count);
    case 'INT16':
      return new Int16Array(buffer, offset, count);
    case 'UINT32':
      return new Uint32Array(buffer, offset, count);
    case 'INT32':
      return new Int32Array(buffer, offset, count);
    case 'UINT64':
      return new BigUint64Array(buffer, offset, count);
    case 'INT64':
      return new BigInt64Array(buffer, offset, count);
    case 'FP32':
      return new Float32Array(buffer, offset, count);
    case 'FP64':
      return new Float64Array(buffer, offset, count);
  }
}

function normaliseBool(view: Uint8Array): Uint8Array {
  for (let i = 0; i < view.length; i++) {
    if (view[i] > 1) {
      const copy = view.slice();
      for (let j = i; j < copy.length; j++) if (copy[j] > 1) copy[j] = 1;
      return copy;
    }
  }
  return view;
}

function parseBinaryBytes(bytes: Uint8Array, count: number, context: BinaryTensorContext): Uint8Array[] {
  // Grown, not preallocated: `count` comes from the client's shape (up to 2^53), the loop is bounded by the bytes.
  const out: Uint8Array[] = [];
  const end = bytes.byteLength;
  let pos = 0;
  for (let i = 0; i < count; i++) {
    if (pos === end) {
      throw invalidArg(`expected ${count} string elements for inference input '${context.name}'${forModel(context)}, got ${i}`);
    }
    if (end - pos < 4) {
      throw invalidArg(
        `incomplete string length indicator for inference input '${context.name}'${forModel(context)}, ` + `expecting 4 bytes but only ${end - pos} bytes available`,
      );
    }
    const length = (bytes[pos] | (bytes[pos + 1] << 8) | (bytes[pos + 2] << 16) | (bytes[pos + 3] << 24)) >>> 0;
    pos += 4;
    if (length > end - pos) {
      throw invalidArg(`string element ${i} of inference input '${context.name}'${forModel(context)} declares ${length} bytes ` + `but only ${end - pos} bytes remain`);
    }
    out.push(new Uint8Array(bytes.buffer, bytes.byteOffset + pos, length));
    pos += length;
  }
  if (pos !== end) {
    throw invalidArg(`inference input '${context.name}'${forModel(context)} has ${end - pos} bytes after its ${count} string element(s), expecting none`);
  }
  return out;
}

/**
 * A tensor's data as the binary extension's bytes. Numeric data is returned as a view on the
 * typed array's memory (no copy on little-endian hosts); BYTES are serialised into one new buffer.
 */
export function convertTensorDataToBinary(tensor: Pick<Tensor, 'data'>): Uint8Array {
  const { data } = tensor;
  if (isBytesData(data)) {
    const out = new Uint8Array(computeTensorByteSize(tensor));
    let pos = 0;
    for (const element of data) {
      const length = element.byteLength;
      out[pos] = length & 0xff;
      out[pos + 1] = (length >>> 8) & 0xff;
      out[pos + 2] = (length >>> 16) & 0xff;
      out[pos + 3] = (length >>> 24) & 0xff;
      out.set(element, pos + 4);
      pos += 4 + length;
    }
    return out;
  }
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (LITTLE_ENDIAN_HOST || data.BYTES_PER_ELEMENT === 1) return view;
  const copy = view.slice();
  swapBytes(copy, data.BYTES_PER_ELEMENT);
  return copy;
}

/** Bytes the tensor occupies in the binary extension (BYTES: 4-byte length plus bytes per element). */
export function computeTensorByteSize(tensor: Pick<Tensor, 'data'>): number {
  const { data } = tensor;
  if (!isBytesData(data)) return data.byteLength;
  let total = 0;
  for (const element of data) total += 4 + element.byteLength;
  return total;
}

/**
 * Why `tensor.data` does not fit its datatype and shape, or undefined when it does. Producers
 * (backends) can get this wrong; the response writer checks before trusting byte lengths.
 */
export function describeTensorDataMismatch(tensor: Pick<Tensor, 'name' | 'datatype' | 'shape' | 'data'>): string | undefined {
  const { data, datatype } = tensor;
  const expected = DATA_KIND[datatype];
  const fits = expected === Array ? isBytesData(data) : data instanceof expected;
  if (!fits) {
    const actual = isBytesData(data) ? 'Array' : data.constructor.name;
    return `tensor '${tensor.name}' has datatype ${datatype} but holds ${actual} (expected ${expected.name})`;
  }
  const count = elementCount(tensor.shape);
  if (data.length !== count) {
    return `tensor '${tensor.name}' has shape [${tensor.shape.join(',')}] (${count} elements) but holds ${data.length}`;
  }
  return undefined;
}

// instanceof, not constructor names: a Buffer is fine as UINT8/BOOL data.
const DATA_KIND: Record<DataType, { readonly name: string; [Symbol.hasInstance](value: unknown): boolean }> = {
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
  BF16: Uint16Array,
  BYTES: Array,
};

function swapBytes(bytes: Uint8Array, size: number): void {
  for (let i = 0; i + size <= bytes.length; i += size) {
    for (let a = i, b = i + size - 1; a < b; a++, b--) {
      const t = bytes[a];
      bytes[a] = bytes[b];
      bytes[b] = t;
    }
  }
}

function forModel(context: BinaryTensorContext): string {
  return context.modelName === undefined ? '' : ` for model '${context.modelName}'`;
}
