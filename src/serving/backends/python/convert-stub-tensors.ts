// Tensors to and from the stub's wire form: a descriptor per tensor in the JSON header (name,
// datatype, shape, where its bytes lie) and the bytes themselves (BYTES length-prefixed): in the
// frame's body, or for large ones in the stub's shared-memory segment (`shm: 1`, offsets in the segment).
import { convertTensorDataToBinary, parseBinaryTensorData } from '../../../core/codecs/kserve-binary-tensor.ts';
import { isDataType } from '../../../core/datatype.ts';
import { HerdError } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';
import { align, SHM_MIN_TENSOR_BYTES, type StubSharedMemory } from './stub-shared-memory.ts';

export interface WireTensor {
  name: string;
  datatype: string;
  shape: number[];
  offset: number;
  size: number;
  /** 1 when the bytes are in the shared-memory segment rather than the body. */
  shm?: 1;
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

export interface EncodedBatch {
  /** Each request's input descriptors, in order. */
  inputs: WireTensor[][];
  /** The frame's body. */
  parts: Uint8Array[];
  /** The segment range the batch's large tensors occupy: [slot id, offset, size]; the stub releases it by id. */
  slot?: [number, number, number];
}

/** A batch's inputs: large non-BYTES tensors into the segment when they fit in one free range, the rest in the body. */
export function encodeStubBatch(requests: readonly (readonly Tensor[])[], shm: StubSharedMemory | undefined): EncodedBatch {
  const binary = requests.map((inputs) => inputs.map((tensor) => ({ tensor, bytes: convertTensorDataToBinary(tensor) })));
  const large = (t: { tensor: Tensor; bytes: Uint8Array }) => t.tensor.datatype !== 'BYTES' && t.bytes.byteLength >= SHM_MIN_TENSOR_BYTES;
  let shmBytes = 0;
  if (shm) for (const inputs of binary) for (const t of inputs) if (large(t)) shmBytes += align(t.bytes.byteLength);
  const reserved = shmBytes > 0 ? shm?.reserve(shmBytes) : undefined;
  const parts: Uint8Array[] = [];
  let body = 0;
  let at = reserved?.offset ?? 0;
  let failed = false;
  const inputs = binary.map((tensors) =>
    tensors.map(({ tensor, bytes }): WireTensor => {
      const described = { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, size: bytes.byteLength };
      if (reserved && !failed && large({ tensor, bytes })) {
        if (shm?.write(bytes, at)) {
          const offset = at;
          at += align(bytes.byteLength);
          return { ...described, offset, shm: 1 };
        }
        failed = true;
      }
      parts.push(bytes);
      body += bytes.byteLength;
      return { ...described, offset: body - bytes.byteLength };
    }),
  );
  if (failed && reserved) {
    // tmpfs is full: the whole batch crosses the pipe, and the slot is free again.
    shm?.release([reserved.id]);
    return encodeStubBatch(requests, undefined);
  }
  return reserved ? { inputs, parts, slot: [reserved.id, reserved.offset, shmBytes] } : { inputs, parts };
}

/** Tensors the stub sent; `where` names the sender in messages. A malformed descriptor is an INTERNAL error. */
export function decodeStubTensors(value: unknown, body: Buffer, where: string, shm?: StubSharedMemory): Tensor[] {
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
      (t.shm === 1 ? shm === undefined : t.offset + t.size > body.byteLength)
    ) {
      throw new HerdError('INTERNAL', `${where}: malformed tensor ${JSON.stringify(item)}`);
    }
    let bytes: Uint8Array;
    try {
      bytes = t.shm === 1 && shm ? shm.readOutput(t.offset, t.size) : body.subarray(t.offset, t.offset + t.size);
    } catch (err) {
      throw new HerdError('INTERNAL', `${where}: tensor ${t.name}: ${(err as Error).message}`);
    }
    const data = parseBinaryTensorData(bytes, { name: t.name, datatype: t.datatype, shape: t.shape });
    return { name: t.name, datatype: t.datatype, shape: t.shape.map(Number), data };
  });
}
