// Tensors to and from the stub's wire form: a descriptor per tensor in the JSON header (name,
// datatype, shape, where its bytes lie in the body) and the bytes themselves (BYTES length-prefixed).
import { convertTensorDataToBinary, parseBinaryTensorData } from '../../../core/codecs/kserve-binary-tensor.ts';
import { isDataType } from '../../../core/datatype.ts';
import { HerdError } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';

export interface WireTensor {
  name: string;
  datatype: string;
  shape: number[];
  offset: number;
  size: number;
}

export interface EncodedTensors {
  descriptors: WireTensor[];
  parts: Uint8Array[];
}

export function encodeStubTensors(tensors: readonly Tensor[], startOffset = 0): EncodedTensors {
  const descriptors: WireTensor[] = [];
  const parts: Uint8Array[] = [];
  let offset = startOffset;
  for (const tensor of tensors) {
    const bytes = convertTensorDataToBinary(tensor);
    descriptors.push({ name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, offset, size: bytes.byteLength });
    parts.push(bytes);
    offset += bytes.byteLength;
  }
  return { descriptors, parts };
}

/** Tensors the stub sent; `where` names the sender in messages. A malformed descriptor is an INTERNAL error. */
export function decodeStubTensors(value: unknown, body: Buffer, where: string): Tensor[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new HerdError('INTERNAL', `${where}: output tensors are not a list`);
  return value.map((item: unknown) => {
    const t = item as Partial<WireTensor>;
    if (
      typeof t.name !== 'string' ||
      typeof t.datatype !== 'string' ||
      !isDataType(t.datatype) ||
      !Array.isArray(t.shape) ||
      typeof t.offset !== 'number' ||
      typeof t.size !== 'number' ||
      t.offset + t.size > body.byteLength
    ) {
      throw new HerdError('INTERNAL', `${where}: malformed tensor ${JSON.stringify(item)}`);
    }
    const bytes = body.subarray(t.offset, t.offset + t.size);
    const data = parseBinaryTensorData(bytes, { name: t.name, datatype: t.datatype, shape: t.shape });
    return { name: t.name, datatype: t.datatype, shape: t.shape.map(Number), data };
  });
}
