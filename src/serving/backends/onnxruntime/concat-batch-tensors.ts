// Concatenates the same input of several requests along dim 0 into one tensor for one session.run:
// numeric data is copied once into a fresh buffer; BYTES elements are only re-listed (packing copies them later).
import { allocateTensorData, isBytesData, type NumericTensorData, type Tensor } from '../../../core/tensor.ts';

/**
 * `parts` are one input of each request, in batch order, already validated alike (same name, datatype,
 * array kind and non-batch dims). The numeric result owns its whole ArrayBuffer, so a worker can take it
 * by transfer; a BYTES result still points at the callers' element arrays.
 */
export function concatBatchTensors(parts: readonly Tensor[]): Tensor {
  const [first] = parts;
  const batch = parts.reduce((sum, p) => sum + p.shape[0], 0);
  const shape = [batch, ...first.shape.slice(1)];
  if (isBytesData(first.data)) {
    const data: Uint8Array[] = [];
    // A loop rather than push(...part): spreading a large part would overflow the call stack.
    for (const part of parts) for (const item of part.data as Uint8Array[]) data.push(item);
    return { name: first.name, datatype: first.datatype, shape, data };
  }
  const length = parts.reduce((sum, p) => sum + p.data.length, 0);
  const data = allocateTensorData(first.datatype, length) as NumericTensorData;
  // Byte copies: one memcpy per part whatever the element type (TypedArray.set would convert per element).
  const target = new Uint8Array(data.buffer, 0, data.byteLength);
  let at = 0;
  for (const part of parts) {
    const source = part.data as NumericTensorData;
    target.set(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), at);
    at += source.byteLength;
  }
  return { name: first.name, datatype: first.datatype, shape, data };
}
